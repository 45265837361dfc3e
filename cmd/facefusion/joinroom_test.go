package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// roomClip is the join tests' target: 100 frames of 320x240 with a tone, cut into 4 chunks.
func roomClip(t *testing.T, dir string) string {
	clip := filepath.Join(dir, "clip.mp4")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25", "-f", "lavfi", "-i", "sine=f=440:r=48000",
		"-frames:v", "100", "-t", "4", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", clip)
	return clip
}

// roomRun runs the job of clip into out (job folder jobDir, "" the default), logging at level,
// with env added.
func roomRun(t *testing.T, clip, out, jobDir, level string, env ...string) clitest.Result {
	t.Helper()
	args := []string{"run", "-t", clip, "-o", out, "--processors", "none", "--chunk-frames", "25", "--force", "--log-level", level}
	if jobDir != "" {
		args = append(args, "--job-dir", jobDir)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := clitest.Command(t, args...)
	cmd.Env = append(cmd.Env, env...)
	return clitest.Exec(t, cmd)
}

// keptAfterFailure checks what a failed join must leave: no output at out (or the old one,
// untouched), every one of the 4 segments in jobDir with the manifest, its last attempt
// failed, and nothing of the join's beside the output.
func keptAfterFailure(t *testing.T, r clitest.Result, out, jobDir string, old []byte) {
	t.Helper()
	if r.Code == 0 {
		t.Fatalf("a join without room exited 0: %s", r.Stderr)
	}
	if got, err := os.ReadFile(out); old == nil && err == nil {
		t.Errorf("output %s exists after a failed join (%d bytes)", out, len(got))
	} else if old != nil && !bytes.Equal(got, old) {
		t.Errorf("the old output %s was changed by a failed join (%d bytes, err %v)", out, len(got), err)
	}
	segs, _ := filepath.Glob(filepath.Join(jobDir, "seg-*"))
	if len(segs) != 4 {
		t.Errorf("job folder %s holds %d segments after the failed join, want all 4: %v", jobDir, len(segs), segs)
	}
	m, ok, err := (&lustre.JobDir{Path: jobDir}).ReadManifest()
	if err != nil || !ok {
		t.Fatalf("the manifest of %s after the failed join: ok %v, %v", jobDir, ok, err)
	}
	if len(m.Done) != 4 {
		t.Errorf("the manifest records %d chunks, want 4", len(m.Done))
	}
	if at := m.Attempts[len(m.Attempts)-1]; at.Outcome != lustre.Failed {
		t.Errorf("the failed attempt's outcome is %q, want %q", at.Outcome, lustre.Failed)
	}
	ents, err := os.ReadDir(filepath.Dir(out))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if n := e.Name(); n != filepath.Base(out) && n != filepath.Base(out)+".report.json" && n != filepath.Base(out)+".job" {
			t.Errorf("%s left beside the output after the failed join", n)
		}
	}
}

// A join into a file system without room for the output fails, keeps the job folder with
// every finished segment and the manifest (outcome failed), leaves no output (or the old one
// untouched), and says how much room the output needs and where; the same command, once there
// is room, resumes and writes the bytes a run with room writes. The parallel MP4 join (the
// output's folder full, or the job folder beside it on the same full disk) and the serial
// Matroska join, whose ffmpeg exits 0 after "Error writing trailer" when only the end of the
// output finds no room.
func TestJoinWithoutRoomKeepsSegments(t *testing.T) {
	dir := t.TempDir()
	clip := roomClip(t, dir)
	refs := map[string][]byte{}
	for _, ext := range []string{".mp4", ".mkv"} {
		ref := filepath.Join(dir, "ref", "out"+ext)
		if r := roomRun(t, clip, ref, "", "error"); r.Code != 0 {
			t.Fatalf("the run with room: exit %d: %s", r.Code, r.Stderr)
		}
		b, err := os.ReadFile(ref)
		if err != nil {
			t.Fatal(err)
		}
		refs[ext] = b
	}
	for _, tc := range []struct {
		name, ext string
		beside    bool               // the job folder beside the output, on the same tmpfs
		room      func(size int) int // the tmpfs's size for an output of size bytes
		old       bool               // an old output is there (and --force given)
	}{
		// The output folder has room for half the output; the job folder is elsewhere.
		{"parallel-mp4", ".mp4", false, func(n int) int { return n / 2 }, true},
		// Room for the segments, not for the output beside them as well.
		{"parallel-mp4-beside", ".mp4", true, func(n int) int { return n * 3 / 2 }, false},
		// Every page of the output but the last: the trailer finds no room.
		{"serial-mkv-trailer", ".mkv", false, func(n int) int { return (n - 1) / 4096 * 4096 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			small := filepath.Join(base, "small")
			ref := refs[tc.ext]
			testenv.Tmpfs(t, small, int64(tc.room(len(ref))))
			out := filepath.Join(small, "out"+tc.ext)
			jobDir, jobFlag := filepath.Join(base, "job"), filepath.Join(base, "job")
			if tc.beside {
				jobDir, jobFlag = out+".job", ""
			}
			var old []byte
			if tc.old {
				old = []byte("an earlier output, to be kept until a whole one replaces it")
				if err := os.WriteFile(out, old, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r := roomRun(t, clip, out, jobFlag, "error")
			keptAfterFailure(t, r, out, jobDir, old)
			line := strings.TrimSpace(r.Stderr)
			if r.Code != 4 {
				t.Errorf("a join without room: exit %d, want 4 (the environment's, not the target's)", r.Code)
			}
			for _, want := range []string{
				"joining into " + out + " failed: no space left on device",
				"(the output needs about ",
				"free room in " + small + " (or raise the quota) and rerun the same command; the 4 finished segments are kept in " + jobDir,
			} {
				if !strings.Contains(line, want) {
					t.Errorf("the error line does not say %q:\n%s", want, line)
				}
			}
			testenv.GrowTmpfs(t, small, int64(4*len(ref)+1<<20))
			if r := roomRun(t, clip, out, jobFlag, "error"); r.Code != 0 {
				t.Fatalf("the rerun with room: exit %d: %s", r.Code, r.Stderr)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, ref) {
				t.Errorf("the rerun's output is %d bytes, not the %d bytes of a run with room", len(got), len(ref))
			}
			if _, err := os.Stat(jobDir); err == nil {
				t.Errorf("job folder %s is still there after the rerun completed", jobDir)
			}
		})
	}
}

// A manifest write that fails as on a full file system (the attempt's last, at the join) leaves
// the manifest written before it, the segments and the ranks' journals; the rerun resumes from
// them and writes the bytes a run without the failure writes. The run report failing likewise
// after the output is in place costs nothing but a warning.
func TestCheckpointWriteFailureKeepsWork(t *testing.T) {
	dir := t.TempDir()
	clip := roomClip(t, dir)
	ref := filepath.Join(dir, "ref", "out.mp4")
	if r := roomRun(t, clip, ref, "", "error"); r.Code != 0 {
		t.Fatalf("the run without a fault: exit %d: %s", r.Code, r.Stderr)
	}
	want, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "job", "out.mp4")
	jobDir := out + ".job"
	// The first write is the attempt's start; the second, its end's, before the join.
	r := roomRun(t, clip, out, "", "error", lustre.FaultEnv+"=manifest.json:2")
	if r.Code != 4 || !strings.Contains(r.Stderr, "no space left on device") {
		t.Fatalf("a failed manifest write: exit %d, want 4 (a full disk): %s", r.Code, r.Stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("output %s exists after the manifest write failed", out)
	}
	m, ok, err := (&lustre.JobDir{Path: jobDir}).ReadManifest()
	if err != nil || !ok {
		t.Fatalf("the manifest after the failed write: ok %v, %v", ok, err)
	}
	if len(m.Attempts) != 1 || len(m.Done) != 0 {
		t.Errorf("the manifest holds %d attempt(s) and %d chunk(s), want the first write's: 1 and 0", len(m.Attempts), len(m.Done))
	}
	segs, _ := filepath.Glob(filepath.Join(jobDir, "seg-*"))
	journals, _ := filepath.Glob(filepath.Join(jobDir, "done", "*"))
	if len(segs) != 4 || len(journals) == 0 {
		t.Errorf("job folder %s holds %d segments and %d journal(s) after the failed write, want 4 and at least 1", jobDir, len(segs), len(journals))
	}
	r = roomRun(t, clip, out, "", "warn", lustre.FaultEnv+"=out.mp4.report.json:1")
	if r.Code != 0 {
		t.Fatalf("the rerun: exit %d: %s", r.Code, r.Stderr)
	}
	if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, want) {
		t.Errorf("the rerun's output (%d bytes, %v) is not the %d bytes of a run without the fault", len(got), err, len(want))
	}
	if !strings.Contains(r.Stderr, "could not be written") {
		t.Errorf("the failed report write was not told: %s", r.Stderr)
	}
	// Without its report the job folder is the job's only record: kept, complete, and said.
	if m, ok, err := (&lustre.JobDir{Path: jobDir}).ReadManifest(); err != nil || !ok || m.Attempts[len(m.Attempts)-1].Outcome != lustre.Complete {
		t.Errorf("job folder %s after a complete run without its report: ok %v, %v, want its manifest kept, complete", jobDir, ok, err)
	}
	if !strings.Contains(r.Stderr, "the job folder "+jobDir+" is kept as the job's record") {
		t.Errorf("the kept job folder was not told: %s", r.Stderr)
	}
}

// An image output that does not fit its file system fails without an output, as the
// environment's failure (exit 4: free room), not as a bad target; with room, the same command
// writes it.
func TestImageWithoutRoom(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "in.png")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "testsrc2=s=320x240", "-frames:v", "1", img)
	st, err := os.Stat(img)
	if err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(dir, "small")
	testenv.Tmpfs(t, small, st.Size()/2)
	out := filepath.Join(small, "out.png")
	r := clitest.Run(t, "run", "-t", img, "-o", out, "--processors", "none", "--log-level", "error")
	if r.Code != 4 || !strings.Contains(r.Stderr, "No space left on device") || !strings.Contains(r.Stderr, "free room in "+small) {
		t.Errorf("an image without room: exit %d, want 4, the reason and where to free room: %s", r.Code, r.Stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("output %s exists after its write failed", out)
	}
	testenv.GrowTmpfs(t, small, 4*st.Size()+1<<20)
	if r := clitest.Run(t, "run", "-t", img, "-o", out, "--processors", "none", "--log-level", "error"); r.Code != 0 {
		t.Fatalf("with room: exit %d: %s", r.Code, r.Stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Error(fmt.Errorf("with room: %w", err))
	}
}

// A file system (or an inode quota) with room for no more files, wherever the run finds it
// full: the output folder's check, a segment, a journal, the manifest, the output's temp file
// or its link into place. Each is the environment's failure (exit 4: batch-run neither counts
// it against the target nor quarantines it), says where to free room, and leaves no output.
// The job folder is beside the output, on a tmpfs of few inodes, one more at every run until
// the run has room; the temp file's creation must be one of the places found full.
func TestRunOutOfInodes(t *testing.T) {
	dir := t.TempDir()
	clip := roomClip(t, dir)
	places := map[string]bool{}
	for n := 1; ; n++ {
		if n > 64 {
			t.Fatalf("no run succeeded with up to 64 inodes")
		}
		small := filepath.Join(dir, fmt.Sprintf("inodes-%d", n))
		testenv.TmpfsInodes(t, small, 64<<20, n)
		out := filepath.Join(small, "out.mp4")
		r := roomRun(t, clip, out, "", "error")
		if r.Code == 0 {
			t.Logf("%d inodes: done", n)
			break
		}
		line := strings.TrimSpace(r.Stderr)
		t.Logf("%d inodes: exit %d: %s", n, r.Code, line)
		if r.Code != 4 || !strings.Contains(line, "no space left on device") || !strings.Contains(line, "free room") {
			t.Errorf("%d inodes: exit %d, want 4, the cause and what to do: %s", n, r.Code, line)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%d inodes: output %s exists after the run failed", n, out)
		}
		for _, p := range []string{"has no room for a new file", "cannot create the output's temp file", "checkpoint:", "encoding"} {
			if strings.Contains(line, p) {
				places[p] = true
			}
		}
	}
	if !places["cannot create the output's temp file"] || !places["has no room for a new file"] {
		t.Errorf("the runs found no room at %v; want the output folder's check and the output's temp file among them", places)
	}
}
