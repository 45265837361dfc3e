package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/logging"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// --log-level error: a successful run prints nothing on stderr (its output path still goes to
// stdout), a failed one exactly its error line, and an unknown level is a usage error.
// --temp-path: the run's temp files go there (the folder changed) and none is left.
func TestLogLevelAndTempPath(t *testing.T) {
	dir := t.TempDir()
	clip := filepath.Join(dir, "clip.mp4")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "testsrc=s=64x48:r=25", "-frames:v", "10", "-c:v", "libx264", "-pix_fmt", "yuv420p", clip)
	scratch := filepath.Join(dir, "scratch")
	os.Mkdir(scratch, 0o755)
	past := time.Now().Add(-time.Hour)
	os.Chtimes(scratch, past, past)

	out := filepath.Join(dir, "out.mp4")
	custom := filepath.Join(dir, "custom-report.json")
	r := clitest.Run(t, "run", "-t", clip, "-o", out, "--processors", "none", "--log-level", "error", "--temp-path", scratch, "--report-path", custom)
	if r.Code != 0 || r.Stderr != "" || r.Stdout != out+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q: want 0, the output path alone, nothing", r.Code, r.Stdout, r.Stderr)
	}
	if rep := clitest.ReadReport(t, custom); rep.Outcome != lustre.Complete || rep.Output != out {
		t.Errorf("--report-path: %+v", rep)
	}
	clitest.MustNotExist(t, report.Path(out)) // the report went where --report-path said, not beside the output
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(scratch)
	if left, _ := os.ReadDir(scratch); len(left) > 0 || !st.ModTime().After(past.Add(time.Minute)) {
		t.Errorf("--temp-path: %d file(s) left, folder changed at %v (set to %v): want it used and left empty", len(left), st.ModTime(), past)
	}

	gone := filepath.Join(dir, "gone.mp4")
	r = clitest.Run(t, "run", "-t", gone, "-o", filepath.Join(dir, "out2.mp4"), "--processors", "none", "--log-level", "error")
	if r.Code != exitInput || strings.Count(r.Stderr, "\n") != 1 || !strings.HasPrefix(strings.Join(logging.Messages(r.Stderr), ""), "target "+gone) {
		t.Errorf("missing target: exit %d, stderr %q: want %d and its one error line", r.Code, r.Stderr, exitInput)
	}
	clitest.CheckReportEnd(t, filepath.Join(dir, "out2.mp4"), r, lustre.Failed) // a run refused in planning has its report too
	r = clitest.Run(t, "run", "-t", clip, "-o", filepath.Join(dir, "out3.mp4"), "--processors", "none", "--log-level", "bogus")
	if r.Code != exitUsage || !strings.Contains(r.Stderr, "--log-level") || !strings.Contains(r.Stderr, `"bogus"`) {
		t.Errorf("--log-level bogus: exit %d, stderr %q", r.Code, r.Stderr)
	}
	missing := filepath.Join(dir, "no-scratch")
	r = clitest.Run(t, "run", "-t", clip, "-o", filepath.Join(dir, "out4.mp4"), "--processors", "none", "--temp-path", missing)
	if r.Code != exitUsage || !strings.Contains(r.Stderr, "--temp-path "+missing+": no such folder") {
		t.Errorf("missing --temp-path: exit %d, stderr %q", r.Code, r.Stderr)
	}
	clitest.CheckReportEnd(t, filepath.Join(dir, "out4.mp4"), r, lustre.Failed)
	// A record's folder that does not exist is named before any work, in one line.
	for _, flag := range []string{"--report-path", "--metrics-path"} {
		r = clitest.Run(t, "run", "-t", clip, "-o", filepath.Join(dir, "out5.mp4"), "--processors", "none", flag, filepath.Join(dir, "nofolder", "x"))
		if r.Code != exitUsage || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, flag+" "+filepath.Join(dir, "nofolder", "x")+": the folder") {
			t.Errorf("%s in a missing folder: exit %d, stderr %q", flag, r.Code, r.Stderr)
		}
	}
	clitest.MustNotExist(t, filepath.Join(dir, "out4.mp4"))
}

// facefusion.ini in the working folder is read by run and by plan: here it alone says to swap
// nothing (no -s needed) and to log at debug, and gives plan its target and frame range; the
// flags still win over it.
func TestFaceFusionINIInWorkingFolder(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "facefusion.ini"), []byte(
		"[paths]\ntarget_path = clip.mp4\n\n[frame_extraction]\ntrim_frame_start = 2\ntrim_frame_end = 9\n\n[processors]\nprocessors = none\n\n[misc]\nlog_level = debug\n"), 0o644)
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "testsrc=s=64x48:r=25", "-frames:v", "10", "-c:v", "libx264", "-pix_fmt", "yuv420p", filepath.Join(dir, "clip.mp4"))
	img := filepath.Join(dir, "photo.png")
	clitest.FFmpeg(t, "-i", testenv.Sample(t, "astronaut.png"), "-vf", "scale=64:64", img)

	r := clitest.RunIn(t, dir, "run", "-t", img, "-o", "out.png")
	if r.Code != 0 || r.Stdout != "out.png\n" || !strings.Contains(r.Stderr, "log level debug") {
		t.Fatalf("run: exit %d, stdout %q, stderr:\n%s\nwant the image written with processors none and a debug line, from facefusion.ini", r.Code, r.Stdout, r.Stderr)
	}
	r = clitest.RunIn(t, dir, "plan", "--ranks", "2", "--trim-frame-end", "7")
	if r.Code != 0 || !strings.Contains(r.Stdout, "target  clip.mp4: 10 frames") || !strings.Contains(r.Stdout, "frames  [2,7): 5 frames") {
		t.Fatalf("plan: exit %d, stdout:\n%s\nstderr %s\nwant clip.mp4 from facefusion.ini, its trim start 2 and the flag's end 7", r.Code, r.Stdout, r.Stderr)
	}
}
