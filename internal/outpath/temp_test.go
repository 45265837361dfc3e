package outpath

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// IsTemp recognises exactly the names TempPath makes beside an output: the only files
// beside an output a later run may remove.
func TestIsTempPath(t *testing.T) {
	out := "/data/out/talk.mp4"
	if p := TempPath(out, "part"); !IsTemp(p, out) {
		t.Errorf("%s not recognised", p)
	}
	for _, p := range []string{
		out, "/data/out/.talk.mp4", "/data/out/talk.part-12.mp4", "/data/out/.talk.part-12.mkv",
		"/data/other/.talk.part-12.mp4", "/data/out/.talk.part-x1.mp4", "/data/out/.talk.part-.mp4",
		"/data/out/.talk..part-12.mp4", "/data/out/.talks.part-12.mp4",
	} {
		if IsTemp(p, out) {
			t.Errorf("%s taken for a temp file of %s", p, out)
		}
	}
	// A rerun may spell the output another way: relative here, absolute there.
	dir := t.TempDir()
	t.Chdir(dir)
	if !IsTemp(TempPath(dir+"/talk.mp4", "part"), "talk.mp4") || !IsTemp(TempPath("talk.mp4", "part"), dir+"/./talk.mp4") {
		t.Error("the same temp file, spelt relative and absolute, not recognised")
	}
}

// The output's temp name cannot be predicted (no pid in it: another user could plant a link at
// every pid's name), and CreateTemp creates it exclusively: a link planted there makes it
// fail, and the link's target is untouched.
func TestOutputTempIsUnpredictableAndExclusive(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "talk.mp4")
	a, b := TempPath(out, "part"), TempPath(out, "part")
	if a == b || strings.Contains(a, "-"+strconv.Itoa(os.Getpid())+".") {
		t.Errorf("temp names %s and %s: predictable", a, b)
	}
	victim, unchanged := victimFile(t)
	os.Symlink(victim, a)
	if _, err := CreateTemp(a); err == nil || !strings.Contains(err.Error(), a) {
		t.Errorf("CreateTemp over a planted link: %v", err)
	}
	unchanged()
	tmp, err := CreateTemp(b)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(b); st.Mode().Perm() != 0o666&^os.FileMode(umask(t)) {
		t.Errorf("temp file made with mode %v", st.Mode().Perm())
	}
	tmp.File.WriteString("video")
	if err := Commit(tmp, out, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(out); string(got) != "video" {
		t.Errorf("committed %q", got)
	}
	if _, err := os.Lstat(b); err == nil {
		t.Error("the temp name is left after the commit")
	}
}

// A temp file whose name was replaced while the job ran (a link to a victim's file, or another
// user's file) or removed (a cleaner of temp files) is neither committed nor removed: Commit
// says so in one line naming the folder, as the environment's failure (exit 4), not a bad flag,
// and the victim is unchanged.
func TestCommitRefusesAReplacedTemp(t *testing.T) {
	for _, swap := range []string{"link", "file", "gone"} {
		t.Run(swap, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "talk.mp4")
			tmp, err := CreateTemp(TempPath(out, "part"))
			if err != nil {
				t.Fatal(err)
			}
			tmp.File.WriteString("video")
			victim, unchanged := victimFile(t)
			os.Remove(tmp.Path)
			switch swap {
			case "link":
				os.Symlink(victim, tmp.Path)
			case "file":
				os.WriteFile(tmp.Path, []byte("theirs"), 0o644)
				os.Chown(tmp.Path, testenv.Nobody, testenv.Nobody) // another user's (the tests run as root)
			}
			if err := tmp.Check(); fault.KindOf(err) != fault.Environment {
				t.Errorf("Check of a %s temp file: kind %v, want Environment: %v", swap, fault.KindOf(err), err)
			}
			err = Commit(tmp, out, true)
			if err == nil || !strings.Contains(err.Error(), tmp.Path) || !strings.Contains(err.Error(), "make sure no one else can write into "+dir) ||
				fault.KindOf(err) != fault.Environment {
				t.Errorf("commit of a %s temp file: kind %v: %v", swap, fault.KindOf(err), err)
			}
			if _, err := os.Lstat(out); err == nil {
				t.Error("the output was committed")
			}
			tmp.Remove()
			if _, err := os.Lstat(tmp.Path); err != nil && swap != "gone" {
				t.Error("Remove removed what another user put in the temp file's place")
			}
			unchanged()
		})
	}
}

func victimFile(t *testing.T) (string, func()) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "victim.txt")
	want := "the victim's own bytes\n"
	os.WriteFile(p, []byte(want), 0o644)
	return p, func() {
		t.Helper()
		if got, _ := os.ReadFile(p); string(got) != want {
			t.Errorf("the victim %s changed: %q", p, got)
		}
	}
}

func umask(t *testing.T) int {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return m
}
