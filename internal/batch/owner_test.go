package batch

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/testenv"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// A batch folder another user owns (uid 65534, chowned: the tests run as root), or one others
// can write into, is refused with one line naming it and its owner: its done and failure
// records decide which targets are skipped. A subfolder that is a link is refused too, and
// nothing is written through it.
func TestBatchFolderMustBeOwn(t *testing.T) {
	dir := t.TempDir()
	d := Dir{filepath.Join(dir, ".facefusion-batch")}
	old := syscall.Umask(0) // the folders are still made writable by no one else
	err := d.Make()
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"", "lists", "done", "failed"} {
		if st, _ := os.Stat(filepath.Join(d.Path, sub)); st.Mode().Perm()&0o022 != 0 {
			t.Errorf("%s/%s made with mode %v", d.Path, sub, st.Mode().Perm())
		}
	}
	testenv.GiveToNobody(t, d.Path)
	err = d.Make()
	if err == nil || !strings.Contains(err.Error(), d.Path) || !strings.Contains(err.Error(), "belongs to user nobody (uid 65534)") || !strings.Contains(err.Error(), "--batch-dir") {
		t.Errorf("a batch folder of nobody's: %v", err)
	}
	os.Chown(d.Path, 0, 0)
	os.Chmod(d.Path, 0o777)
	if err := d.Make(); err == nil || !strings.Contains(err.Error(), "writable by every user") {
		t.Errorf("a batch folder of mode 0777: %v", err)
	}
	os.Chmod(d.Path, 0o775)
	t.Setenv(safefs.GroupEnv, "1")
	if err := d.Make(); err != nil {
		t.Errorf("a group-writable batch folder with %s=1: %v", safefs.GroupEnv, err)
	}
	os.Chmod(d.Path, 0o755)

	// failed/ as a link to a folder of the victim's: no record is written there.
	elsewhere := t.TempDir()
	os.RemoveAll(filepath.Join(d.Path, "failed"))
	os.Symlink(elsewhere, filepath.Join(d.Path, "failed"))
	if err := d.Make(); err == nil || !strings.Contains(err.Error(), "is a link") {
		t.Errorf("failed/ as a link: %v", err)
	}
	if _, err := d.AddFailure("k", Failure{Reason: "x"}); err == nil {
		t.Error("a failure recorded through failed/, a link")
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("%s written into the link's target", ents[0].Name())
	}
}
