package lustre

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/testenv"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// victim is a file of someone's outside the job folder, which a hostile co-user would like the
// program to remove or overwrite; unchanged checks it is still there, byte for byte.
func victim(t *testing.T, dir, name string) (path string, unchanged func()) {
	t.Helper()
	path = filepath.Join(dir, name)
	want := []byte("precious data of " + name + "\n")
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, func() {
		t.Helper()
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("victim %s changed: %q, %v", path, got, err)
		}
	}
}

// A co-user who can write into the job folder replaces done/ and progress/ with links to a
// folder of the victim's, holding files under the layout's names: clearing the journals and
// cleaning a dead attempt's progress files must not remove them, and the journal is not
// written there either.
func TestLayoutSubfoldersAreNeverFollowed(t *testing.T) {
	dir := t.TempDir()
	j, _, err := Create(filepath.Join(dir, "out.mp4.job"))
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(dir, "elsewhere")
	os.Mkdir(elsewhere, 0o755)
	journal, journalSame := victim(t, elsewhere, "rank-0.json")
	progress, progressSame := victim(t, elsewhere, "rank-1")
	for _, sub := range []string{"done", "progress"} {
		if err := os.Symlink(elsewhere, filepath.Join(j.Path, sub)); err != nil {
			t.Fatal(err)
		}
	}
	j.ClearJournals()
	_, kept := j.CleanStale(func(string, string) bool { return false })
	if err := j.WriteJournal(0, []Chunk{{Chunk: 1}}); err == nil || !strings.Contains(err.Error(), "is a link") {
		t.Errorf("a journal written through done/, a link: %v", err)
	}
	if _, err := j.Journals(); err == nil {
		t.Error("journals read through done/, a link")
	}
	if len(kept) != 1 || !strings.Contains(kept[0], filepath.Join(j.Path, "progress")+" is a link") {
		t.Errorf("CleanStale's words on progress/, a link: %q", kept)
	}
	if left, err := j.Remove(); err != nil || len(left) != 2 {
		t.Errorf("Remove of a folder with links in it: left %v, %v; want both links left", left, err)
	}
	journalSame()
	progressSame()
	if _, err := os.Lstat(journal); err != nil {
		t.Error(err)
	}
	if _, err := os.Lstat(progress); err != nil {
		t.Error(err)
	}
}

// JOINING names the files a killed join left beside the output; only the program's own temp
// files there go. A record naming a victim's file (another user's, a link, a file with a
// second name, or no temp name at all) leaves it, and says so; a JOINING that is not the
// running user's (or is a link) is not followed at all.
func TestCleanStaleRemovesOnlyOwnTemps(t *testing.T) {
	dir := t.TempDir()
	j, _, err := Create(filepath.Join(dir, "out.mp4.job"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.mp4")
	isTemp := func(p, output string) bool {
		return filepath.Dir(p) == filepath.Dir(output) && strings.HasPrefix(filepath.Base(p), ".out.part-")
	}
	ownTemp := filepath.Join(dir, ".out.part-1.mp4")
	touch(t, ownTemp)
	// Another user's file under a temp name (the attack as root: chowned to nobody).
	foreign, foreignSame := victim(t, dir, ".out.part-2.mp4")
	testenv.GiveToNobody(t, foreign)
	// A link under a temp name, to a file of the victim's.
	target, targetSame := victim(t, t.TempDir(), "notes.txt")
	link := filepath.Join(dir, ".out.part-3.mp4")
	os.Symlink(target, link)
	// A second name of a victim's file.
	linked, linkedSame := victim(t, t.TempDir(), "thesis.tex")
	hard := filepath.Join(dir, ".out.part-4.mp4")
	if err := os.Link(linked, hard); err != nil {
		t.Fatal(err)
	}
	plain, plainSame := victim(t, dir, "precious.mp4")
	if err := j.RecordJoin(out, ownTemp, foreign, link, hard, plain); err != nil {
		t.Fatal(err)
	}
	removed, kept := j.CleanStale(isTemp)
	if len(removed) != 1 || removed[0] != ownTemp {
		t.Errorf("removed %v, want %s alone", removed, ownTemp)
	}
	if len(kept) != 4 {
		t.Errorf("kept %q, want the four others named with why", kept)
	}
	for _, p := range []string{foreign, link, hard} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s removed", p)
		}
	}
	foreignSame()
	targetSame()
	linkedSame()
	plainSame()

	// A JOINING another user wrote: nothing it names is looked at.
	os.Remove(hard)
	mine := filepath.Join(dir, ".out.part-5.mp4")
	touch(t, mine)
	if err := j.RecordJoin(out, mine); err != nil {
		t.Fatal(err)
	}
	testenv.GiveToNobody(t, j.Joining())
	removed, kept = j.CleanStale(isTemp)
	if len(removed) != 0 || len(kept) != 1 || !strings.Contains(kept[0], "not written by you") {
		t.Errorf("a foreign JOINING: removed %v, kept %q", removed, kept)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Error("a file named by a foreign JOINING was removed")
	}
	// JOINING as a link to a record elsewhere: not followed either.
	rec := filepath.Join(t.TempDir(), "JOINING")
	os.WriteFile(rec, []byte(out+"\n"+mine+"\n"), 0o644)
	os.Remove(j.Joining())
	os.Symlink(rec, j.Joining())
	if removed, _ = j.CleanStale(isTemp); len(removed) != 0 {
		t.Errorf("JOINING, a link, followed: removed %v", removed)
	}
	if _, err := os.Stat(rec); err != nil {
		t.Error("the link's target was removed")
	}
}

// A job folder another user owns (marker and all) is refused before anything in it is read,
// with one line naming the folder and its owner; so is one others can write into. Group
// write is allowed only with safefs.GroupEnv.
func TestForeignJobFolderRefused(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.mp4")
	j, _, err := Create(DefaultPath(out))
	if err != nil {
		t.Fatal(err)
	}
	seg, segSame := victim(t, j.Path, "seg-000000.mp4")
	_ = seg
	for _, p := range []string{j.Path, j.Marker()} {
		testenv.GiveToNobody(t, p)
	}
	for name, call := range map[string]func() error{
		"Resolve": func() error { _, _, err := Resolve("", out); return err },
		"Create":  func() error { _, _, err := Create(j.Path); return err },
	} {
		err := call()
		if err == nil || !strings.Contains(err.Error(), j.Path) || !strings.Contains(err.Error(), "belongs to user nobody (uid 65534)") ||
			!strings.Contains(err.Error(), "choose another --job-dir") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s of a job folder of nobody's: %v", name, err)
		}
	}
	// Reached through a link of the user's own (the default OUTPUT.job as a /scratch link).
	ln := filepath.Join(dir, "linked.mp4.job")
	os.Symlink(j.Path, ln)
	if _, _, err := Resolve("", filepath.Join(dir, "linked.mp4")); err == nil || !strings.Contains(err.Error(), "uid 65534") {
		t.Errorf("a link to a job folder of nobody's: %v", err)
	}
	segSame()

	// Ours, but writable by others, or by the group without the setting.
	os.Chown(j.Path, 0, 0)
	os.Chown(j.Marker(), 0, 0)
	os.Chmod(j.Path, 0o777)
	if _, _, err := Resolve("", out); err == nil || !strings.Contains(err.Error(), "writable by every user") {
		t.Errorf("a job folder of mode 0777: %v", err)
	}
	os.Chmod(j.Path, 0o775)
	t.Setenv(safefs.GroupEnv, "")
	if _, _, err := Resolve("", out); err == nil || !strings.Contains(err.Error(), safefs.GroupEnv) {
		t.Errorf("a group-writable job folder: %v", err)
	}
	t.Setenv(safefs.GroupEnv, "1")
	if p, _, err := Resolve("", out); err != nil || p != j.Path {
		t.Errorf("a group-writable job folder with %s=1: %s, %v", safefs.GroupEnv, p, err)
	}
	os.Chmod(j.Path, 0o755)

	// A marker that is another user's (or a link) does not make the folder the program's.
	testenv.GiveToNobody(t, j.Marker())
	if j.Owned() {
		t.Error("a folder whose marker is nobody's taken for the program's")
	}
	os.Remove(j.Marker())
	os.Symlink(filepath.Join(dir, "elsewhere"), j.Marker())
	if j.Owned() {
		t.Error("a folder whose marker is a link taken for the program's")
	}
}

// The default OUTPUT.job that exists, holds no marker and is another user's is refused too:
// the job's subfolder inside it could be swapped by them. A sticky world-writable folder
// (scratch) named as --job-dir is not, when root or the user owns it: there no one else can
// rename what the job makes. One another user owns is: its owner can.
func TestForeignFolderToGoInside(t *testing.T) {
	t.Setenv(safefs.GroupEnv, "")
	dir := t.TempDir()
	out := filepath.Join(dir, "out.mp4")
	theirs := DefaultPath(out)
	os.Mkdir(theirs, 0o755)
	testenv.GiveToNobody(t, theirs)
	if _, _, err := Resolve("", out); err == nil || !strings.Contains(err.Error(), "uid 65534") {
		t.Errorf("going inside a folder of nobody's: %v", err)
	}
	scratch := filepath.Join(dir, "scratch")
	os.Mkdir(scratch, 0o755)
	os.Chmod(scratch, 0o777|os.ModeSticky)
	p, _, err := Resolve(scratch, out)
	if err != nil || p != filepath.Join(scratch, "out.mp4.job") {
		t.Errorf("a sticky scratch folder of root's: %s, %v", p, err)
	}
	// …but the job's folder inside it, if another user made it, is theirs.
	os.Mkdir(p, 0o755)
	testenv.GiveToNobody(t, p)
	if _, _, err := Resolve(scratch, out); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("a job folder of nobody's in scratch: %v", err)
	}
	// A sticky folder of another user's: its owner may rename or remove anything in it, the
	// setting or not.
	testenv.GiveToNobody(t, scratch)
	for _, env := range []string{"", "1"} {
		t.Setenv(safefs.GroupEnv, env)
		if _, _, err := Resolve(scratch, out); err == nil || !strings.Contains(err.Error(), scratch+" is writable by every user (mode 1777) and belongs to user nobody (uid 65534)") {
			t.Errorf("a sticky folder of nobody's (%s=%q): %v", safefs.GroupEnv, env, err)
		}
	}
}

// A group project tree (setgid, group-writable, made by a colleague): the same rule whether it
// is named as --job-dir or holds the output (and so the default OUTPUT.job), and whether the job
// folder is to be made or goes inside: refused without safefs.GroupEnv, used with it. A world-
// writable folder without the sticky bit is refused either way.
func TestGroupProjectTree(t *testing.T) {
	proj := filepath.Join(t.TempDir(), "proj")
	os.Mkdir(proj, 0o700)
	os.Chmod(proj, 0o775|os.ModeSetgid)
	testenv.GiveToNobody(t, proj) // a colleague's
	out := filepath.Join(proj, "out.mp4")
	other := filepath.Join(t.TempDir(), "o.mp4") // an output elsewhere, the job folder in proj
	cases := map[string]func() (string, string, error){
		"default":        func() (string, string, error) { return Resolve("", out) },
		"job-dir":        func() (string, string, error) { return Resolve(proj, other) },
		"job-dir inside": func() (string, string, error) { return Resolve(filepath.Join(proj, "jobs", "x.job"), other) },
	}
	want := map[string]string{"default": DefaultPath(out), "job-dir": filepath.Join(proj, "o.mp4.job"), "job-dir inside": filepath.Join(proj, "jobs", "x.job")}
	for name, call := range cases {
		t.Setenv(safefs.GroupEnv, "")
		if _, _, err := call(); err == nil || !strings.Contains(err.Error(), proj+" belongs to user nobody (uid 65534)") || !strings.Contains(err.Error(), safefs.GroupEnv) {
			t.Errorf("%s without %s: %v", name, safefs.GroupEnv, err)
		}
		t.Setenv(safefs.GroupEnv, "1")
		if p, _, err := call(); err != nil || p != want[name] {
			t.Errorf("%s with %s=1: %s, %v", name, safefs.GroupEnv, p, err)
		}
	}
	// The job folder made there is the user's own; one a colleague made is not resumed.
	j, _, err := Create(DefaultPath(out))
	if err != nil {
		t.Fatal(err)
	}
	if p, _, err := Resolve("", out); err != nil || p != j.Path {
		t.Errorf("the job's own folder in the project tree: %s, %v", p, err)
	}
	testenv.GiveToNobody(t, j.Path, j.Marker())
	if _, _, err := Resolve("", out); err == nil || !strings.Contains(err.Error(), j.Path+" belongs to user nobody") {
		t.Errorf("a colleague's job folder: %v", err)
	}
	os.Chmod(proj, 0o777)
	if _, _, err := Resolve(proj, other); err == nil || !strings.Contains(err.Error(), "not sticky") {
		t.Errorf("a world-writable folder without the sticky bit: %v", err)
	}
}

// A job folder renamed away and replaced by a copy (what a user who can write into its parent
// can do while the job runs) is no longer the job's: nothing is removed from either, the claim
// is neither released nor beaten there, and Same says so in one line naming the parent.
func TestReplacedFolder(t *testing.T) {
	dir := t.TempDir()
	j, created, err := Create(filepath.Join(dir, "out.mp4.job"))
	if err != nil || !created || j.ID == (FolderID{}) {
		t.Fatalf("Create: %+v %v %v", j, created, err)
	}
	if err := j.Same(); err != nil {
		t.Fatal(err)
	}
	me := Me()
	if _, _, err := j.TakeClaim(me); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{j.Segment(0), j.SegmentTemp(1, 0, 1), j.Manifest(), j.Journal(0), j.Stop()} {
		touch(t, f)
	}
	moved := filepath.Join(dir, "out.mp4.old")
	if err := os.Rename(j.Path, moved); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", moved, j.Path).CombinedOutput(); err != nil {
		t.Fatal(string(out))
	}
	testenv.GiveToNobody(t, j.Path, filepath.Join(j.Path, MarkerName)) // the copy is another user's
	list := func() string {
		var names []string
		for _, d := range []string{j.Path, moved} {
			filepath.Walk(d, func(p string, _ os.FileInfo, _ error) error { names = append(names, p); return nil })
		}
		return strings.Join(names, "\n")
	}
	before := list()
	err = j.Same()
	var rep *ReplacedError
	if !errors.As(err, &rep) || !strings.Contains(err.Error(), "job folder "+j.Path+" was replaced while the job ran (by a user who can write into "+dir+")") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Same of a replaced folder: %v", err)
	}
	if _, err := j.Remove(); !errors.As(err, &rep) {
		t.Errorf("Remove of a replaced folder: %v", err)
	}
	if _, kept := j.CleanStale(func(string, string) bool { return true }); len(kept) != 1 || !strings.Contains(kept[0], "was replaced") {
		t.Errorf("CleanStale of a replaced folder kept %v", kept)
	}
	if n := j.Discard(); n != 0 {
		t.Errorf("Discard removed %d segments of a replaced folder", n)
	}
	j.ClearJournals()
	j.ReleaseClaim(&me)
	if err := j.Beat(&me); !errors.Is(err, ErrClaimLost) || !errors.As(err, &rep) {
		t.Errorf("a beat into a replaced folder: %v", err)
	}
	if after := list(); after != before {
		t.Errorf("the folders changed:\n%s\nwas\n%s", after, before)
	}
	// Gone, or a folder of the user's own in its place (another run of the job, --fresh): not
	// blamed on another user.
	os.RemoveAll(j.Path)
	if err := j.Same(); !errors.As(err, &rep) || !rep.Own || !strings.Contains(err.Error(), "was removed or replaced while the job ran (by another run of this job") {
		t.Errorf("Same of a removed folder: %v", err)
	}
	if other, _, err := Create(j.Path); err != nil || other.Same() != nil {
		t.Fatalf("Create of a new folder at the path: %v", err)
	}
	if err := j.Same(); !errors.As(err, &rep) || !rep.Own {
		t.Errorf("Same of a folder of the user's own made by another run: %v", err)
	}
	// Found again by a later Create (a resume): the folder there now is pinned.
	os.Remove(filepath.Join(j.Path, MarkerName))
	os.Remove(j.Path)
	os.Rename(moved, j.Path)
	j2, created, err := Create(j.Path)
	if err != nil || created || j2.ID != j.ID || j2.Same() != nil {
		t.Errorf("Create of the job's existing folder: %+v %v %v", j2, created, err)
	}
}

// A job folder is made with safefs.FolderMode whatever the umask: never writable by others.
func TestCreateFolderMode(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	j, _, err := Create(filepath.Join(t.TempDir(), "a", "out.mp4.job"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{j.Path, filepath.Dir(j.Path)} {
		st, _ := os.Stat(p)
		if st.Mode().Perm()&0o022 != 0 {
			t.Errorf("%s made with mode %v", p, st.Mode().Perm())
		}
	}
	if err := CheckFolder(j.Path); err != nil {
		t.Error(err)
	}
}

// A --job-dir under a link to nothing is refused with what to do, not a bare stat error.
func TestResolveUnderADanglingLink(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "gone")
	os.Symlink(filepath.Join(dir, "nothing"), link)
	if _, _, err := Resolve(filepath.Join(link, "job"), filepath.Join(dir, "out.mp4")); err == nil || !strings.Contains(err.Error(), "folder "+link+": no such file or directory: choose another --job-dir") {
		t.Errorf("a job folder under a link to nothing: %v", err)
	}
}
