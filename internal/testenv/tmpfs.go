package testenv

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// Tmpfs mounts a tmpfs of size bytes on dir (made if missing) and unmounts it when the test
// ends: a file system that fills up for real. The tests run as root, as CI does; a mount that
// fails fails the test.
func Tmpfs(t testing.TB, dir string, size int64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.FormatInt(size, 10), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mounting a tmpfs of %d bytes on %s (the tests run as root): %v: %s", size, dir, err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
}

// GrowTmpfs gives the tmpfs on dir size bytes, keeping its files: room made for a rerun.
func GrowTmpfs(t testing.TB, dir string, size int64) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", "remount,size="+strconv.FormatInt(size, 10), dir).CombinedOutput(); err != nil {
		t.Fatalf("remounting %s with %d bytes: %v: %s", dir, size, err, out)
	}
}
