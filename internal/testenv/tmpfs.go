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
	TmpfsOptions(t, dir, "size="+strconv.FormatInt(size, 10))
}

// TmpfsInodes is Tmpfs with room for only inodes files and folders (its root counts as one):
// a file system, or an inode quota, where creating one more file fails with ENOSPC however
// many bytes are free.
func TmpfsInodes(t testing.TB, dir string, size int64, inodes int) {
	t.Helper()
	TmpfsOptions(t, dir, "size="+strconv.FormatInt(size, 10)+",nr_inodes="+strconv.Itoa(inodes))
}

// TmpfsOptions mounts a tmpfs with the mount options opts ("size=1m,nr_inodes=4") on dir, as
// Tmpfs does.
func TmpfsOptions(t testing.TB, dir, opts string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mounting a tmpfs (%s) on %s (the tests run as root): %v: %s", opts, dir, err, out)
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
