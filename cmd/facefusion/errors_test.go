package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/spec"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// Every bad input: a distinct non-zero exit, one line naming the file and what to do, and
// nothing at (or beside) the output path.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	clip := filepath.Join(dir, "clip.mp4")
	clitest.FaceClip(t, clip, 320, 240, 12, "25")
	src := testenv.Sample(t, "grace_hopper.png")

	junk := filepath.Join(dir, "junk.mp4")
	os.WriteFile(junk, []byte(strings.Repeat("not a video ", 4000)), 0o644)
	truncated := filepath.Join(dir, "truncated.mp4")
	data, _ := os.ReadFile(clip)
	os.WriteFile(truncated, data[:len(data)*3/10], 0o644)
	// with the index at the front the target probes, and fails while its frames decode
	fast := filepath.Join(dir, "fast.mp4")
	clitest.FaceClip(t, fast, 320, 240, 30, "25", "-movflags", "+faststart")
	data, _ = os.ReadFile(fast)
	truncatedFast := filepath.Join(dir, "truncated-fast.mp4")
	os.WriteFile(truncatedFast, data[:len(data)/2], 0o644)
	audioOnly := filepath.Join(dir, "tone.m4a")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-c:a", "aac", audioOnly)
	aFile := filepath.Join(dir, "a-file")
	os.WriteFile(aFile, []byte("x"), 0o644)
	emptyModels := filepath.Join(dir, "no-models")
	os.Mkdir(emptyModels, 0o755)

	cases := []struct {
		name    string
		args    []string
		out     string
		code    int
		mention []string
	}{
		{"missing source", []string{"-s", filepath.Join(dir, "nobody.png"), "-t", clip}, "out1.mp4", exitInput, []string{"nobody.png", "-s"}},
		{"source without a face", []string{"-s", testenv.Sample(t, "coffee.png"), "-t", clip}, "out2.mp4", exitInput, []string{"coffee.png", "no face"}},
		{"corrupt target", []string{"-s", src, "-t", junk}, "out3.mp4", exitInput, []string{"junk.mp4"}},
		{"truncated target", []string{"-s", src, "-t", truncated}, "out4.mp4", exitInput, []string{"truncated.mp4"}},
		// Found while the frames decode: no swapper needed to get there (its models cost a
		// CPU-second and more to load).
		{"truncated target, index first", []string{"--processors", "none", "-t", truncatedFast}, "out4b.mp4", exitInput, []string{"truncated-fast.mp4", "truncated or corrupt"}},
		{"target without video", []string{"-s", src, "-t", audioOnly}, "out5.mp4", exitInput, []string{"tone.m4a", "video"}},
		{"missing target", []string{"-s", src, "-t", filepath.Join(dir, "gone.mp4")}, "out6.mp4", exitInput, []string{"gone.mp4"}},
		{"output folder missing", []string{"-s", src, "-t", clip}, "nofolder/out.mp4", exitInput, []string{"nofolder", "not writable"}},
		{"output folder is a file", []string{"-s", src, "-t", clip}, "a-file/out.mp4", exitInput, []string{"a-file", "not writable"}},
		{"missing model", []string{"-s", src, "-t", clip, "--models-dir", emptyModels}, "out7.mp4", exitEnvironment, []string{"no-models", "make fetch", "from models_dir (--models-dir)"}},
		{"missing runtime library", []string{"-s", src, "-t", clip, "--onnxruntime-library", filepath.Join(dir, "libonnxruntime.so.9")}, "out8.mp4", exitEnvironment, []string{"libonnxruntime.so.9", "from onnxruntime_library (--onnxruntime-library)"}},
		{"unknown flag", []string{"-s", src, "-t", clip, "--face-selektor-mode", "one"}, "out9.mp4", exitUsage, []string{"--face-selektor-mode"}},
		{"bad quality", []string{"-s", src, "-t", clip, "--output-video-quality", "101"}, "out10.mp4", exitUsage, []string{"output_video_quality"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.out)
			r := clitest.Run(t, append([]string{"run", "-o", out}, c.args...)...)
			if r.Code != c.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.Code, c.code, r.Stderr)
			}
			lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
			if len(lines) != 1 {
				t.Errorf("want one line on stderr, got %d:\n%s", len(lines), r.Stderr)
			}
			for _, m := range c.mention {
				if !strings.Contains(r.Stderr, m) {
					t.Errorf("stderr does not mention %q:\n%s", m, r.Stderr)
				}
			}
			if st, err := os.Stat(filepath.Dir(out)); err == nil && st.IsDir() {
				clitest.MustNotExist(t, out)
			}
		})
	}
}

// A job file's unknown key is a usage error naming it. (A run the file drives, with flags over
// its keys: TestVideoContract's trimmed range.)
func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "job.toml")
	os.WriteFile(cfg, []byte("procesors = [\"none\"]\n"), 0o644)
	r := clitest.Run(t, "run", "--config", cfg, "-t", filepath.Join(dir, "clip.mp4"), "-o", filepath.Join(dir, "out.mkv"))
	if r.Code != exitUsage || !strings.Contains(r.Stderr, "procesors") {
		t.Fatalf("unknown key: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

func TestHelpDocumentsEveryFlag(t *testing.T) {
	r := clitest.Run(t, "run", "--help")
	if r.Code != 0 {
		t.Fatalf("exit %d", r.Code)
	}
	for _, f := range []string{"--source-paths", "--target-path", "--output-path", "--processors", "--face-selector-mode",
		"--face-detector-score", "--output-video-encoder", "--output-video-quality", "--output-video-preset",
		"--trim-frame-start", "--trim-frame-end", "--execution-thread-count", "--force", "--config"} {
		if !strings.Contains(r.Stderr, f) {
			t.Errorf("--help does not document %s", f)
		}
	}
}

// SIGTERM (scancel, Slurm's requeue, preemption and time limit) stops the run with exit 130
// (cancelled: Slurm, not the program, decides whether it comes back) and nothing at the output
// path. The run is a single process (no mpirun: main's own signal handling) held by the pause
// hook with frames flowing (frames-5: five frames of the first chunk written, decoder and encoder
// open), with no swapper: where it stops, not what the frames are, is the point. (It used to wait
// for a swap of a 400-frame 640x360 clip to report progress, some 8 CPU-seconds more for the same
// state.) The clip is TestBadInput's, made once, whose output check for this output is done.
func TestSignalStopsCleanly(t *testing.T) {
	dir := t.TempDir()
	clip := filepath.Join(dir, "clip.mp4")
	clitest.FaceClip(t, clip, 320, 240, 12, "25")
	out := filepath.Join(dir, "out.mp4")
	p := clitest.StartPaused(t, "frames-5", clitest.Bin, "run", "--processors", "none", "-t", clip, "-o", out, "--chunk-frames", "10")
	p.Cmd.Process.Signal(syscall.SIGTERM)
	if code := p.Wait(t); code != exitCancelled {
		t.Fatalf("exit %d, want %d; output:\n%s", code, exitCancelled, p.Output())
	}
	if !strings.Contains(p.Output(), "cancelled by SIGTERM (rank 0)") {
		t.Errorf("stderr does not say why it stopped:\n%s", p.Output())
	}
	clitest.MustNotExist(t, out)
}

// An output that is an input, by name, symlink or hard link, is refused even with --force:
// the final rename would replace the input with its own swap.
func TestOutputIsAnInput(t *testing.T) {
	dir := t.TempDir()
	clip := filepath.Join(dir, "clip.mp4")
	clitest.FaceClip(t, clip, 320, 240, 6, "25")
	src := filepath.Join(dir, "source.png")
	data, err := os.ReadFile(testenv.Sample(t, "grace_hopper.png"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(src, data, 0o644)
	symlink := filepath.Join(dir, "symlink.mp4")
	hardlink := filepath.Join(dir, "hardlink.mp4")
	srcLink := filepath.Join(dir, "source-link.png")
	for _, err := range []error{os.Symlink(clip, symlink), os.Link(clip, hardlink), os.Link(src, srcLink)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	clipSum, srcSum := clitest.FileMD5(t, clip), clitest.FileMD5(t, src)
	fifo := filepath.Join(dir, "fifo.prom")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.mkv")
	for _, c := range []struct {
		name, out, want string
		args            []string
	}{
		{"the target's own path", clip, "-o " + clip + " is the target (-t " + clip + ") itself", nil},
		{"a symlink to the target", symlink, "-o " + symlink + " is the target (-t " + clip + ") itself", nil},
		{"a hard link to the target", hardlink, "-o " + hardlink + " is the target (-t " + clip + ") itself", nil},
		{"a hard link to a source", srcLink, "-o " + srcLink + " is a source (-s " + src + ") itself", nil},
		// The run's records too: the metrics file over the target, the report over the output,
		// the metrics over a pipe (as root, over /dev/null).
		{"metrics over the target", out, "--metrics-path " + clip + " is the target (-t " + clip + ") itself", []string{"--metrics-path", clip}},
		{"report over the output", out, "its run report " + out + " is -o " + out, []string{"--report-path", out}},
		{"metrics over a pipe", out, "--metrics-path " + fifo + " is not a regular file", []string{"--metrics-path", fifo}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := clitest.Run(t, append([]string{"run", "-s", src, "-t", clip, "-o", c.out, "--force"}, c.args...)...)
			if r.Code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.Code, exitUsage, r.Stderr)
			}
			if lines := strings.Split(strings.TrimSpace(r.Stderr), "\n"); len(lines) != 1 || !strings.Contains(r.Stderr, c.want) {
				t.Errorf("want one line saying %q, got:\n%s", c.want, r.Stderr)
			}
			if clitest.FileMD5(t, clip) != clipSum || clitest.FileMD5(t, src) != srcSum {
				t.Fatal("an input's bytes changed")
			}
			if _, err := os.Stat(c.out + ".job"); err == nil {
				t.Errorf("job folder %s.job left behind", c.out)
			}
		})
	}
}

// A truncated runtime library (a full disk, an interrupted copy) is one line and exit 4, not
// dlopen's SIGBUS and a Go stack of some hundred lines.
func TestTruncatedRuntimeLibrary(t *testing.T) {
	dir := t.TempDir()
	clip := filepath.Join(dir, "clip.mp4")
	clitest.FaceClip(t, clip, 320, 240, 6, "25")
	data, err := os.ReadFile(testenv.ORTLibrary(t))
	if err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "libonnxruntime.so.1")
	os.WriteFile(lib, data[:len(data)/2], 0o644)
	out := filepath.Join(dir, "out.mp4")
	r := clitest.Run(t, "run", "-s", testenv.Sample(t, "grace_hopper.png"), "-t", clip, "-o", out, "--onnxruntime-library", lib)
	if r.Code != exitEnvironment {
		t.Fatalf("exit %d, want %d; stderr:\n%s", r.Code, exitEnvironment, r.Stderr)
	}
	if lines := strings.Split(strings.TrimSpace(r.Stderr), "\n"); len(lines) != 1 {
		t.Errorf("want one line on stderr, got %d:\n%s", len(lines), r.Stderr)
	}
	for _, w := range []string{lib, "truncated or not a shared library", "onnxruntime_library"} {
		if !strings.Contains(r.Stderr, w) {
			t.Errorf("stderr does not mention %q:\n%s", w, r.Stderr)
		}
	}
	for _, w := range []string{"goroutine", "SIGBUS"} {
		if strings.Contains(r.Stderr, w) {
			t.Errorf("stderr holds %q:\n%s", w, r.Stderr)
		}
	}
	clitest.MustNotExist(t, out)
	if _, err := os.Stat(out + ".job"); err == nil {
		t.Errorf("job folder %s.job left behind", out)
	}
}

// An output ffmpeg cannot write is refused before the first frame (it used to be found at the
// final mux, after every frame, with ffmpeg's words about a hidden temp file): exit 2, one line
// naming the flag, nothing at the output path and no job folder. Two cases run the binary (one
// refused by ffmpeg's trial, one by the target's kind alone): that the refusal comes before the
// work and what it exits with; every case's refusal is the check a run makes,
// spec.CheckFormat, called here on the parsed flags (each run of the binary was a
// start and a probe of the target more).
func TestUnwritableOutputRefusedFirst(t *testing.T) {
	dir := t.TempDir()
	clip := filepath.Join(dir, "clip.mp4")
	clitest.FaceClip(t, clip, 320, 240, 6, "25")
	image := filepath.Join(dir, "photo.png")
	data, err := os.ReadFile(testenv.Sample(t, "grace_hopper.png"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(image, data, 0o644)
	cases := []struct {
		name, target, out string
		flags             []string
		mention           []string
		binary            bool // run the binary, not the check alone
	}{
		{"unknown extension", clip, "out.xyz", nil, []string{"-o ", "out.xyz", `no container for ".xyz"`, ".mkv"}, true},
		{"no extension", clip, "out", nil, []string{"-o ", "has no extension", ".mp4"}, false},
		{"image output of a video", clip, "out.png", nil, []string{"-o ", "out.png is an image", "clip.mp4 is a video"}, false},
		{"ffv1 in mp4", clip, "out.mp4", []string{"--output-video-encoder", "ffv1"}, []string{"--output-video-encoder ffv1 cannot be stored in .mp4", "use .mkv"}, false},
		{"unknown preset", clip, "out2.mp4", []string{"--output-video-preset", "ultrafastest"}, []string{"--output-video-preset ultrafastest is not a preset of libx264"}, false},
		{"video output of an image", image, "out.mp4", nil, []string{"-o ", "photo.png is an image", ".png, .jpg"}, true},
		{"ffv1 in ts", clip, "out.ts", []string{"--output-video-encoder", "ffv1"}, []string{"-o ", `".ts"`, "does not read back as a video"}, false},
		{"raw yuv", clip, "out.yuv", nil, []string{"-o ", `".yuv"`, "does not read back as a video"}, false},
	}
	clipInfo := clitest.Probe(t, clip) // the run's probe of the target, once for the checks
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.out)
			args := append([]string{"--processors", "none", "-t", c.target, "-o", out}, c.flags...)
			if !c.binary {
				cfg, err := job.Parse(args)
				if err != nil {
					t.Fatalf("parsing %v: %v", args, err)
				}
				var info *video.Info // an image target has none, nor a spec
				var s *spec.Spec
				if c.target == clip {
					info = clipInfo
					if s, err = spec.Resolve(cfg, info); err != nil {
						t.Fatal(err)
					}
				}
				err = spec.CheckFormat(context.Background(), cfg, s, info)
				if fault.KindOf(err) != fault.Usage {
					t.Fatalf("the check: %v (kind %v), want a usage error (exit %d)", err, fault.KindOf(err), exitUsage)
				}
				if msg := err.Error(); strings.Contains(msg, "\n") {
					t.Errorf("the refusal spans lines:\n%s", msg)
				}
				for _, m := range c.mention {
					if !strings.Contains(err.Error(), m) {
						t.Errorf("the refusal does not mention %q:\n%s", m, err)
					}
				}
				clitest.MustNotExist(t, out)
				return
			}
			r := clitest.Run(t, append([]string{"run"}, args...)...)
			if r.Code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.Code, exitUsage, r.Stderr)
			}
			if lines := strings.Split(strings.TrimSpace(r.Stderr), "\n"); len(lines) != 1 {
				t.Errorf("want one line on stderr, got %d:\n%s", len(lines), r.Stderr)
			}
			for _, m := range c.mention {
				if !strings.Contains(r.Stderr, m) {
					t.Errorf("stderr does not mention %q:\n%s", m, r.Stderr)
				}
			}
			clitest.MustNotExist(t, out)
			if _, err := os.Stat(out + ".job"); err == nil {
				t.Errorf("job folder %s.job exists: the output was refused after the work started", out)
			}
		})
	}
}

// An output (or a run record) that is a link to a missing file, or a link loop, is refused
// before the first frame in one line saying so and what to do, with or without --force: no job
// folder, segment or report is made, and the link is left as it is.
func TestOutputBrokenLink(t *testing.T) {
	dir := t.TempDir()
	clip := filepath.Join(dir, "clip.mkv")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "testsrc=size=64x48:rate=25", "-frames:v", "8", "-c:v", "ffv1", clip)
	dangling := filepath.Join(dir, "dangling.mkv")
	os.Symlink(filepath.Join(dir, "gone", "out.mkv"), dangling)
	loop := filepath.Join(dir, "loop.mkv")
	os.Symlink("loop.mkv", loop)
	report := filepath.Join(dir, "report.json")
	os.Symlink(filepath.Join(dir, "gone", "report.json"), report)
	// A folder reached through another user's link (chowned to nobody: the tests run as root)
	// is where that user chose, a private folder of this user's, say.
	private := filepath.Join(dir, "private")
	os.Mkdir(private, 0o700)
	theirs := filepath.Join(dir, "theirs")
	os.Symlink(private, theirs)
	testenv.GiveToNobody(t, theirs)
	viaTheirs := filepath.Join(theirs, "out.mkv")
	for _, c := range []struct {
		out, want string
		args      []string
	}{
		{dangling, "-o " + dangling + ` is a link to a missing file ("` + filepath.Join(dir, "gone", "out.mkv") + `"): remove the link, or choose another path`, nil},
		{dangling, "-o " + dangling + " is a link to a missing file", []string{"--force"}},
		{loop, "-o " + loop + " is a link loop (a link that leads back to itself): remove the link, or choose another path", nil},
		{filepath.Join(dir, "out.mkv"), "its run report " + report + " is a link to a missing file", []string{"--report-path", report}},
		{viaTheirs, "-o " + viaTheirs + ": " + theirs + " is a link made by user nobody (uid 65534), not by you", nil},
		{filepath.Join(dir, "out.mkv"), "--job-dir " + viaTheirs + ": " + viaTheirs + " goes through " + theirs + ", a link made by user nobody", []string{"--job-dir", viaTheirs}},
	} {
		r := clitest.Run(t, append([]string{"run", "--processors", "none", "--output-video-encoder", "ffv1", "-t", clip, "-o", c.out}, c.args...)...)
		lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
		if r.Code != exitUsage || len(lines) != 1 || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%s %q: exit %d, want %d and one line saying %q:\n%s", c.out, c.args, r.Code, exitUsage, c.want, r.Stderr)
		}
		if _, err := os.Stat(c.out + ".job"); err == nil {
			t.Errorf("%s: a job folder was made", c.out)
		}
	}
	for _, l := range []string{dangling, loop, report} {
		if st, err := os.Lstat(l); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s was changed: %v", l, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "gone")); err == nil {
		t.Error("the links' missing folder was made")
	}
}
