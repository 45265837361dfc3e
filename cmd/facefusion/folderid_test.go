package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// The job folder's parent and the job folder itself, against a co-user who can write into the
// parent, run against the real binary. Another user is nobody (uid 65534): a file chowned to
// it, or a command run as it with setpriv; the tests run as root.

// tree is every path under dir with its mode, owner and content's hash: what a run must not
// change of a folder that is not its own.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		line := p + " " + st.Mode().String()
		if st.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			line += " " + hex.EncodeToString(h[:8])
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// groupFolder makes a folder of root's that nobody's group may write into (mode 0775, group
// 65534): a project tree the co-user shares.
func groupFolder(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 0, testenv.Nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o775); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A co-user who can write into the folder holding the default job folder (a group project tree,
// FACEFUSION_GROUP_WRITABLE=1) renames the job folder away while the run is about to join and
// puts a copy of theirs in its place, one segment changed, claim and attempt forged from what
// anyone can read: the run fails with one line naming the folder and its parent, writes no
// output, and changes nothing in either folder (the job's own keeps its segments).
func TestReplacedJobFolderIsNotJoined(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.mp4")
	clitest.BframeClip(t, in, 16)
	proj := groupFolder(t)
	out := filepath.Join(proj, "out.mkv")
	jobDir := lustre.DefaultPath(out)
	p := clitest.StartHeld(t, "concat", []string{safefs.GroupEnv + "=1"}, append([]string{clitest.Bin}, clitest.PassThroughArgs(in, out, 8)...)...)
	segs, _ := filepath.Glob(filepath.Join(jobDir, "seg-*"))
	if len(segs) != 2 {
		t.Fatalf("segments at the join: %v", segs)
	}
	// The claim is readable by anyone; the attempt file is the claim's token and the attempt.
	var claim struct {
		Token string `json:"token"`
	}
	if b, err := os.ReadFile(filepath.Join(jobDir, "CLAIM")); err != nil || json.Unmarshal(b, &claim) != nil || claim.Token == "" {
		t.Fatalf("claim: %v", err)
	}
	testenv.AsNobody(t, proj, `mv out.mkv.job out.mkv.old
mkdir out.mkv.job
cp out.mkv.old/.facefusion-job out.mkv.old/CLAIM out.mkv.old/seg-* out.mkv.job/
printf '1 `+claim.Token+`\n' > out.mkv.job/ATTEMPT
printf '{"fingerprint":{}}' > out.mkv.job/manifest.json
seg=out.mkv.job/`+filepath.Base(segs[0])+`
size=$(stat -c %s $seg)
printf 'their frames' | dd of=$seg bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null`)
	theirs, ours := tree(t, jobDir), tree(t, filepath.Join(proj, "out.mkv.old"))
	p.Go(t)
	code := p.Wait(t)
	if code != fault.ExitUsage {
		t.Errorf("exit %d, want %d (usage)\n%s", code, fault.ExitUsage, p.Output())
	}
	line := "job folder " + jobDir + " was replaced while the job ran (by a user who can write into " + proj + ")"
	if !strings.Contains(p.Output(), line) || !strings.Contains(p.Output(), "make "+proj+" writable by you alone") {
		t.Errorf("the error does not say the folder was replaced:\n%s", p.Output())
	}
	clitest.MustNotExist(t, out)
	if got := tree(t, jobDir); got != theirs {
		t.Errorf("the co-user's folder changed:\n%s\nwas\n%s", got, theirs)
	}
	if got := tree(t, filepath.Join(proj, "out.mkv.old")); got != ours {
		t.Errorf("the job's own folder, renamed away, changed:\n%s\nwas\n%s", got, ours)
	}
	if left, _ := filepath.Glob(filepath.Join(proj, ".out.part-*")); len(left) > 0 {
		t.Errorf("temp output left: %v", left)
	}
}

// A group project tree shared with a colleague (setgid, group-writable, the colleague's): one
// rule whether it is named as --job-dir or holds the output (the default OUTPUT.job beside it):
// refused with exit 2 and one line without FACEFUSION_GROUP_WRITABLE=1, used with it.
func TestGroupProjectTreeJobFolder(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.mp4")
	clitest.BframeClip(t, in, 16)
	for _, c := range []struct {
		name string
		args func(proj string) (out string, extra []string)
	}{
		{"job-dir", func(proj string) (string, []string) {
			return filepath.Join(t.TempDir(), "out.mkv"), []string{"--job-dir", proj}
		}},
		{"default", func(proj string) (string, []string) { return filepath.Join(proj, "out.mkv"), nil }},
	} {
		t.Run(c.name, func(t *testing.T) {
			proj := groupFolder(t)
			if err := os.Chmod(proj, 0o775|os.ModeSetgid); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(proj, testenv.Nobody, testenv.Nobody); err != nil { // the colleague's
				t.Fatal(err)
			}
			out, extra := c.args(proj)
			cmd := clitest.Command(t, clitest.PassThroughArgs(in, out, 8, extra...)...)
			cmd.Env = append(cmd.Env, safefs.GroupEnv+"=")
			r := clitest.Exec(t, cmd)
			if r.Code != fault.ExitUsage || !strings.Contains(r.Stderr, proj+" belongs to user nobody (uid 65534)") || !strings.Contains(r.Stderr, safefs.GroupEnv+"=1") {
				t.Errorf("without %s: exit %d\n%s", safefs.GroupEnv, r.Code, r.Stderr)
			}
			clitest.MustNotExist(t, out)
			cmd = clitest.Command(t, clitest.PassThroughArgs(in, out, 8, extra...)...)
			cmd.Env = append(cmd.Env, safefs.GroupEnv+"=1")
			if r := clitest.Exec(t, cmd); r.Code != 0 {
				t.Fatalf("with %s=1: exit %d\n%s", safefs.GroupEnv, r.Code, r.Stderr)
			}
			if got := clitest.Probe(t, out); got.Frames != 16 {
				t.Errorf("output of %d frames, want 16", got.Frames)
			}
			if ents, _ := os.ReadDir(proj); c.name == "job-dir" && len(ents) != 0 {
				t.Errorf("the project folder keeps %d entries after the job", len(ents))
			}
		})
	}
}

// status reads a colleague's job folder (and finds it from the output's name): it only reads,
// each file bounded and never through a link; it says whose the folder is.
func TestStatusOfAColleaguesJob(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.mp4")
	clitest.BframeClip(t, in, 16)
	out := filepath.Join(t.TempDir(), "out.mkv")
	clitest.KilledAt(t, "commit", clitest.PassThroughArgs(in, out, 8))
	jobDir := lustre.DefaultPath(out)
	if err := filepath.WalkDir(jobDir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, testenv.Nobody, testenv.Nobody)
	}); err != nil {
		t.Fatal(err)
	}
	before := tree(t, jobDir)
	for _, arg := range []string{jobDir, out} {
		if arg == out {
			os.WriteFile(out, []byte("not yet"), 0o644) // the output's name: status finds OUTPUT.job
		}
		r := clitest.Run(t, "status", arg)
		if r.Code != 0 || !strings.Contains(r.Stdout, "job folder: "+jobDir) || !strings.Contains(r.Stdout, "chunks:     2 done, 0 pending, of 2") ||
			!strings.Contains(r.Stdout, "owner:      user nobody (uid 65534), not you") {
			t.Errorf("status %s of a job folder of nobody's: exit %d\n%s\n%s", arg, r.Code, r.Stdout, r.Stderr)
		}
	}
	if got := tree(t, jobDir); got != before {
		t.Errorf("status changed the folder:\n%s\nwas\n%s", got, before)
	}
}

// A segment replaced by a link at the join (a group member's, where FACEFUSION_GROUP_WRITABLE
// trusts the group with the job folder), to a file of the same size: the join does not open it.
// The run fails with the segment named, no output, and the link and its target left as they are.
func TestLinkedSegmentIsNotJoined(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.mp4")
	clitest.BframeClip(t, in, 16)
	out := filepath.Join(t.TempDir(), "out.mkv")
	jobDir := lustre.DefaultPath(out)
	p := clitest.StartHeld(t, "concat", nil, append([]string{clitest.Bin}, clitest.PassThroughArgs(in, out, 8)...)...)
	segs, _ := filepath.Glob(filepath.Join(jobDir, "seg-*"))
	if len(segs) != 2 {
		t.Fatalf("segments at the join: %v", segs)
	}
	theirs := filepath.Join(t.TempDir(), "theirs"+filepath.Ext(segs[0]))
	data, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(theirs, data, 0o644)
	os.Remove(segs[0])
	os.Symlink(theirs, segs[0])
	p.Go(t)
	if code := p.Wait(t); code == 0 || !strings.Contains(p.Output(), "segment "+segs[0]+" changed after it was recorded") {
		t.Errorf("exit %d, want the linked segment refused:\n%s", code, p.Output())
	}
	clitest.MustNotExist(t, out)
	// The finished work stays for the rerun: the other segment and the manifest.
	if _, err := os.Stat(segs[1]); err != nil {
		t.Errorf("the job's other segment is gone after the failed join: %v", err)
	}
	if _, ok, err := (&lustre.JobDir{Path: jobDir}).ReadManifest(); !ok || err != nil {
		t.Errorf("the manifest is gone after the failed join: %v", err)
	}
	if st, err := os.Lstat(segs[0]); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was changed: %v", err)
	}
	if got, _ := os.ReadFile(theirs); !bytes.Equal(got, data) {
		t.Error("the link's target was changed")
	}
}
