package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// An odd-sized target with the default encoder (libx264, which refuses yuv420p at an odd size)
// is swapped into an output of the same size and frame count, as yuv444p, and the log says so,
// once for the job's two chunks (each chunk is an encoder of its own: two are enough to say it
// once, not per chunk). One run, with the swapper: the frames it pastes into are the odd-sized
// ones. (A second run with --processors none asserted the same of the same encoder path; the
// encoder's choice at every odd and even size is video's TestOddFrameSizes.)
func TestOddFrameSizeDefaultEncoder(t *testing.T) {
	dir := t.TempDir()
	even := filepath.Join(dir, "even.mp4")
	clitest.FaceClip(t, even, 322, 242, 12, "25")
	clip := filepath.Join(dir, "odd.mkv") // lavfi's colour source rounds sizes to even: scale down
	clitest.FFmpeg(t, "-i", even, "-vf", "scale=161:121", "-c:v", "ffv1", "-c:a", "copy", clip)
	src := clitest.Probe(t, clip)
	if src.Width != 161 || src.Height != 121 || src.Frames != 12 {
		t.Fatalf("the target is %dx%d with %d frames, want 161x121 with 12", src.Width, src.Height, src.Frames)
	}
	out := filepath.Join(dir, "face_swapper.mp4")
	r := clitest.Run(t, "run", "-s", testenv.Sample(t, "grace_hopper.png"), "-t", clip, "-o", out, "--processors", "face_swapper", "--chunk-frames", "6")
	if r.Code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.Code, r.Stderr)
	}
	got := clitest.Probe(t, out)
	if got.Width != 161 || got.Height != 121 || got.Frames != 12 || got.PixFmt != "yuv444p" {
		t.Errorf("output %dx%d, %d frames, %s; want 161x121, 12 frames, yuv444p", got.Width, got.Height, got.Frames, got.PixFmt)
	}
	if n := strings.Count(r.Stderr, "161x121, an odd size that libx264 cannot store as yuv420p: the output keeps that size as yuv444p"); n != 1 {
		t.Errorf("the pixel format line is logged %d times, want once:\n%s", n, r.Stderr)
	}
}

var faceCountLine = regexp.MustCompile(`\[FACEFUSION\] rank 0: a face was swapped in (\d+) of (\d+) frames\n`)

// faceCount is the N of the run's one "a face was swapped in N of M frames" line; M must be
// frames.
func faceCount(t *testing.T, stderr string, frames int) int {
	t.Helper()
	all := faceCountLine.FindAllStringSubmatch(stderr, -1)
	if len(all) != 1 {
		t.Fatalf("want one face count line, got %d:\n%s", len(all), stderr)
	}
	n, _ := strconv.Atoi(all[0][1])
	if m, _ := strconv.Atoi(all[0][2]); m != frames {
		t.Errorf("the face count line says %s frames, want %d", all[0][2], frames)
	}
	return n
}

// A target in which no frame holds a face: exit 0 with a warning, or with --fail-if-no-face
// (or the job file's fail_if_no_face) exit 3 and no output. (A face clip's count line:
// TestFaceCountSurvivesResume; --fail-if-no-face with --processors none, which has nothing to
// count: TestCutTarget's run.)
func TestNoFaceInTarget(t *testing.T) {
	dir := t.TempDir()
	faceless := filepath.Join(dir, "faceless.mp4")
	// With FaceClip's kind of audio track: the output check for the job is then TestBadInput's
	// (the same container, size, rate and streams), kept for this test binary.
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "color=c=0x28313d:s=320x240:r=25", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
		"-frames:v", "20", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", faceless)
	src := testenv.Sample(t, "grace_hopper.png")
	warning := "[FACEFUSION] rank 0: warning: no face was found in any of the 20 frames of " + faceless + " (detector score ≥ 0.5): the output is the target unchanged; lower --face-detector-score"

	out := filepath.Join(dir, "warned.mp4")
	r := clitest.Run(t, "run", "-s", src, "-t", faceless, "-o", out, "--chunk-frames", "10")
	if r.Code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.Code, r.Stderr)
	}
	if strings.Count(r.Stderr, warning) != 1 || faceCountLine.MatchString(r.Stderr) {
		t.Errorf("want the warning once and no count line:\n%s", r.Stderr)
	}
	if n := len(clitest.FrameHashes(t, out)); n != 20 {
		t.Errorf("the output has %d frames, want 20", n)
	}
	clitest.CheckReportEnd(t, out, r, lustre.Complete)

	out = filepath.Join(dir, "failed.mp4")
	r = clitest.Run(t, "run", "-s", src, "-t", faceless, "-o", out, "--chunk-frames", "10", "--fail-if-no-face")
	if r.Code != exitInput {
		t.Fatalf("--fail-if-no-face: exit %d, want %d; stderr:\n%s", r.Code, exitInput, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "[FACEFUSION] rank 0: no face was found in any of the 20 frames of "+faceless) || !strings.Contains(r.Stderr, "nothing was written to the output path (--fail-if-no-face)") {
		t.Errorf("--fail-if-no-face: the error does not say why:\n%s", r.Stderr)
	}
	clitest.MustNotExist(t, out)
	// The failure's report: beside the output that was not written, with the exit status and the
	// line; a rerun is not refused for it.
	if rep := clitest.CheckReportEnd(t, out, r, lustre.Failed); rep.FrameEnd-rep.FrameStart != 20 || len(rep.PerRank) != 1 || rep.PerRank[0].Frames != 20 ||
		rep.PerRank[0].FacesFound != 0 || rep.OutputBlocksSHA256 != "" || rep.OutputBytes != 0 {
		t.Errorf("the failed run's report: %+v", rep)
	}

	// The same through the job file's key: run's parse (job.Parse) sets from it the very field
	// the flag sets, and the run above shows what that field does. (This was a third run of the
	// binary, some 3 CPU-seconds.)
	cfg := filepath.Join(dir, "job.toml")
	os.WriteFile(cfg, []byte("fail_if_no_face = true\n"), 0o644)
	if c, err := job.Parse([]string{"--config", cfg, "-s", src, "-t", faceless, "-o", filepath.Join(dir, "failed-toml.mp4")}); err != nil || !c.FailIfNoFace {
		t.Errorf("fail_if_no_face = true: parsed %v (%v), want the job to fail if no face is found", c.FailIfNoFace, err)
	}
	if c, err := job.Parse([]string{"-s", src, "-t", faceless, "-o", filepath.Join(dir, "failed-toml.mp4")}); err != nil || c.FailIfNoFace {
		t.Errorf("without the key or the flag: parsed %v (%v), want off", c.FailIfNoFace, err)
	}
}

// Image targets: the count is of one frame; without a face, a warning or exit 3 and no output.
func TestNoFaceInImage(t *testing.T) {
	dir := t.TempDir()
	src := testenv.Sample(t, "grace_hopper.png")
	faceless := testenv.Sample(t, "coffee.png")
	out := filepath.Join(dir, "coffee.png")
	r := clitest.Run(t, "run", "-s", src, "-t", faceless, "-o", out)
	if r.Code != 0 || !strings.Contains(r.Stderr, "[FACEFUSION] rank 0: warning: no face was found in the image "+faceless) {
		t.Fatalf("exit %d, want 0 and the warning; stderr:\n%s", r.Code, r.Stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("no output after a warning: %v", err)
	}
	out = filepath.Join(dir, "coffee-failed.png")
	r = clitest.Run(t, "run", "-s", src, "-t", faceless, "-o", out, "--fail-if-no-face")
	if r.Code != exitInput || !strings.Contains(r.Stderr, "no face was found in the image "+faceless) {
		t.Fatalf("--fail-if-no-face: exit %d, want %d; stderr:\n%s", r.Code, exitInput, r.Stderr)
	}
	if lines := strings.Split(strings.TrimSpace(r.Stderr), "\n"); len(lines) != 1 {
		t.Errorf("want one line on stderr, got %d:\n%s", len(lines), r.Stderr)
	}
	clitest.MustNotExist(t, out)
	clitest.CheckReportEnd(t, out, r, lustre.Failed) // an image target has its run report too
	// An image with a face passes --fail-if-no-face, with its count line and report:
	// TestImageTarget's run (checkFaceImage).
}

// checkFaceImage checks what a run with --fail-if-no-face on an image with one face leaves:
// exit 0, the count line of one frame, and the report's one frame, one face swapped and the
// output's block hash (rank 0's alone).
func checkFaceImage(t *testing.T, img string, r clitest.Result) *report.Report {
	t.Helper()
	if r.Code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.Code, r.Stderr)
	}
	if n := faceCount(t, r.Stderr, 1); n != 1 {
		t.Errorf("a face was swapped in %d of 1 frames, want 1", n)
	}
	rep := clitest.CheckReportEnd(t, img, r, lustre.Complete)
	clitest.CheckOutputHash(t, rep, img)
	if len(rep.PerRank) != 1 || rep.PerRank[0].Frames != 1 || rep.PerRank[0].FacesSwapped != 1 || rep.PerRank[0].FacesFound < 1 ||
		rep.PerRank[0].StageSeconds["hash"] <= 0 {
		t.Errorf("the image's report: %+v", rep)
	}
	return rep
}

// A face clip logs how many of its frames had a face swapped, passes --fail-if-no-face and
// warns of nothing. The count is kept per chunk in the manifest: a job killed before its join
// and resumed, with no chunk left to process, reports the same count as an uninterrupted run.
// (12 frames in 2 chunks: each chunk is an encoder per run, and a sum over two chunks is a sum;
// a third and a fourth tested nothing more.)
func TestFaceCountSurvivesResume(t *testing.T) {
	dir := t.TempDir()
	clip := filepath.Join(dir, "face.mp4")
	clitest.FaceClip(t, clip, 320, 240, 12, "25")
	args := func(out string) []string {
		return []string{"run", "-s", testenv.Sample(t, "grace_hopper.png"), "-t", clip, "-o", out, "--chunk-frames", "6", "--fail-if-no-face"}
	}
	r := clitest.Run(t, args(filepath.Join(dir, "whole.mp4"))...)
	if r.Code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.Code, r.Stderr)
	}
	want := faceCount(t, r.Stderr, 12)
	if want < 1 || want > 12 {
		t.Errorf("a face was swapped in %d of 12 frames, want 1..12", want)
	}
	if strings.Contains(r.Stderr, "warning") {
		t.Errorf("a warning on a face clip:\n%s", r.Stderr)
	}

	out := filepath.Join(dir, "resumed.mp4")
	if code := clitest.KilledAt(t, "concat", args(out)); code == 0 {
		t.Fatal("killed attempt exited 0")
	}
	m := clitest.ReadManifest(t, out+".job")
	sum := 0
	for _, c := range m.Done {
		sum += c.Faces
	}
	if len(m.Done) != 2 || sum != want {
		t.Fatalf("the manifest holds %d chunks with %d frames with faces, want 2 with %d", len(m.Done), sum, want)
	}
	r = clitest.Run(t, args(out)...)
	if r.Code != 0 {
		t.Fatalf("rerun: exit %d; stderr:\n%s", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "2 of 2 chunk(s) verified, 0 to do") {
		t.Fatalf("the rerun did not resume with every chunk done:\n%s", r.Stderr)
	}
	if got := faceCount(t, r.Stderr, 12); got != want {
		t.Errorf("resumed: a face was swapped in %d frames, uninterrupted in %d", got, want)
	}
}
