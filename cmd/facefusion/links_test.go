package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// A hostile co-user's attacks on the files a run makes, run against the real binary. Another
// user is simulated by chowning to nobody (uid 65534): the tests run as root.

// victimFile is a file of someone's that an attack tries to have the program overwrite or
// remove; the returned check asserts it is unchanged, byte for byte.
func victimFile(t *testing.T, dir string) (string, func()) {
	t.Helper()
	p := filepath.Join(dir, "victim.txt")
	want := []byte("the victim's own bytes\n")
	if err := os.WriteFile(p, want, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, func() {
		t.Helper()
		if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, want) {
			t.Errorf("victim %s changed: %d bytes (%v)", p, len(got), err)
		}
	}
}

// runPlanted starts the binary with args and, at once, plants a link to victim at the name its
// output's temp file had when it was .NAME.part-PID.EXT (a co-user can watch for the pid, or
// plant every pid's name); it returns how the run ended.
func runPlanted(t *testing.T, out, victim string, args ...string) clitest.Result {
	t.Helper()
	cmd := clitest.Command(t, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	base := filepath.Base(out)
	ext := filepath.Ext(base)
	planted := filepath.Join(filepath.Dir(out), fmt.Sprintf(".%s.part-%d%s", strings.TrimSuffix(base, ext), cmd.Process.Pid, ext))
	if err := os.Symlink(victim, planted); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(planted); err != nil {
		t.Errorf("the planted link %s, not the program's, was removed", planted)
	}
	return clitest.Result{Code: code, Stdout: o.String(), Stderr: e.String()}
}

// A link planted at the output's old, predictable temp name does not take the output: the run
// writes a file of its own under a name no one can predict, the output is the whole video (or
// image), and the link's target is unchanged: for the serial join (Matroska), the parallel
// join (MP4) and an image output.
func TestOutputTempLinkIsNotFollowed(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	clitest.BframeClip(t, in, 16)
	want := clitest.FrameHashes(t, in)
	for _, c := range []struct {
		name, out string
		extra     []string
	}{
		{"serial", "out.mkv", nil},
		{"parallel", "out.mp4", []string{"--output-video-encoder", "libx264"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			odir := t.TempDir()
			victim, unchanged := victimFile(t, t.TempDir())
			out := filepath.Join(odir, c.out)
			r := runPlanted(t, out, victim, clitest.PassThroughArgs(in, out, 8, c.extra...)...)
			if r.Code != 0 {
				t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
			}
			unchanged()
			if c.name == "serial" {
				clitest.CheckFrames(t, out, want)
			} else if got := clitest.Probe(t, out); got.Frames != 16 {
				t.Errorf("output of %d frames, want 16", got.Frames)
			}
			if st, err := os.Lstat(out); err != nil || !st.Mode().IsRegular() {
				t.Errorf("output %s is not a regular file: %v", out, err)
			}
		})
	}
	t.Run("image", func(t *testing.T) {
		odir := t.TempDir()
		victim, unchanged := victimFile(t, t.TempDir())
		out := filepath.Join(odir, "out.png")
		r := runPlanted(t, out, victim, "run", "--processors", "none", "-t", testenv.Sample(t, "astronaut.png"), "-o", out)
		if r.Code != 0 {
			t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
		}
		unchanged()
		if info := clitest.Probe(t, out); info.Width == 0 {
			t.Errorf("output %s is no image", out)
		}
	})
}

// A job folder of another user's, marker and all, is refused before any work with one line
// naming it and its owner (exit: usage): its segments would be joined into the output. Nothing
// in it changes.
func TestForeignJobFolderIsRefused(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	clitest.BframeClip(t, in, 16)
	out := filepath.Join(t.TempDir(), "out.mkv")
	jd, _, err := lustre.Create(lustre.DefaultPath(out))
	if err != nil {
		t.Fatal(err)
	}
	seg, unchanged := victimFile(t, jd.Path)
	for _, p := range []string{jd.Path, jd.Marker(), seg} {
		testenv.GiveToNobody(t, p)
	}
	before, _ := os.ReadDir(jd.Path)
	r := clitest.Run(t, clitest.PassThroughArgs(in, out, 8)...)
	if r.Code != fault.ExitUsage {
		t.Fatalf("exit %d, want %d (usage)\n%s", r.Code, fault.ExitUsage, r.Stderr)
	}
	line := jd.Path + " belongs to user nobody (uid 65534)"
	if !strings.Contains(r.Stderr, line) || strings.Count(r.Stderr, line) != 1 || !strings.Contains(r.Stderr, "choose another --job-dir") {
		t.Errorf("the error does not name the folder and its owner once:\n%s", r.Stderr)
	}
	unchanged()
	if after, _ := os.ReadDir(jd.Path); len(after) != len(before) {
		t.Errorf("the run wrote into the folder: %d entries, was %d", len(after), len(before))
	}
	clitest.MustNotExist(t, out)
	// status only reads: it is refused nothing on ownership, and finds no manifest here.
	st := clitest.Run(t, "status", jd.Path)
	if st.Code != fault.ExitInput || !strings.Contains(st.Stderr, "has no manifest.json") {
		t.Errorf("status of a job folder of nobody's: exit %d\n%s", st.Code, st.Stderr)
	}
}

// A JOINING record naming files that are not the killed join's own (another user's file under
// a temp name, a link under one, a file that is no temp name) leaves them all: the rerun
// removes only what the program made, says what it left, and finishes.
func TestForeignJoiningNamesAreLeft(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	want := clitest.FrameHashes(t, func() string { clitest.BframeClip(t, in, 16); return in }())
	odir := t.TempDir()
	out := filepath.Join(odir, "out.mkv")
	args := clitest.PassThroughArgs(in, out, 8)
	clitest.KilledAt(t, "commit", args)
	jd := &lustre.JobDir{Path: lustre.DefaultPath(out)}
	rec, err := os.ReadFile(jd.Joining())
	if err != nil {
		t.Fatal(err)
	}
	own := strings.Split(strings.TrimSpace(string(rec)), "\n")[1]
	theirs, theirsSame := victimFile(t, t.TempDir())
	named := filepath.Join(odir, ".out.part-77.mkv") // another user's, under a temp name
	os.WriteFile(named, []byte("theirs"), 0o644)
	testenv.GiveToNobody(t, named)
	link := filepath.Join(odir, ".out.part-78.mkv") // a link, under a temp name
	os.Symlink(theirs, link)
	other, otherSame := victimFile(t, odir) // no temp name at all
	if err := jd.RecordJoin(out, own, named, link, other); err != nil {
		t.Fatal(err)
	}
	r := clitest.Run(t, args...)
	if r.Code != 0 {
		t.Fatalf("rerun: exit %d\n%s", r.Code, r.Stderr)
	}
	clitest.CheckFrames(t, out, want)
	if !strings.Contains(r.Stderr, "removed "+own) {
		t.Errorf("the killed join's own temp file was not removed:\n%s", r.Stderr)
	}
	for _, p := range []string{named, link, other} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s, named in JOINING but not the program's, was removed", p)
		}
		if !strings.Contains(r.Stderr, "left "+p) {
			t.Errorf("leaving %s not said:\n%s", p, r.Stderr)
		}
	}
	theirsSame()
	otherSame()
}
