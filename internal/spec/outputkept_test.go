package spec

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// A passed output check is kept for later runs (video.RecallCheck): the same check again, this
// process's own memory of it cleared as a new run's is, starts no ffmpeg or ffprobe and answers
// the same; a refusal is not kept, so it is checked, and refused, every time.
func TestOutputCheckKept(t *testing.T) {
	testenv.Full(t, "ffmpeg's output check run and recalled")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	if out, err := exec.Command(testenv.Tool(t, "ffmpeg"), "-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=25",
		"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-frames:v", "10", "-t", "0.4",
		"-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", in).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	ctx := context.Background()
	info, err := video.Probe(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	// Counted tools: binaries no earlier check in this process was kept for.
	ffmpegRuns, probeRuns := countTools(t)
	newRun := func() { formatsChecked.Clear() }

	cfg := job.Default()
	cfg.TargetPath, cfg.OutputPath, cfg.Processors = in, filepath.Join(dir, "out.mp4"), []string{job.ProcessorNone}
	first, err := checkFormat(t, cfg, info)
	if err != nil || len(first.Keep) != 1 {
		t.Fatalf("first check: %+v, %v; want the audio kept", first, err)
	}
	if m, p := ffmpegRuns(), probeRuns(); m != 2 || p != 1 {
		t.Fatalf("first check: %d ffmpeg and %d ffprobe run(s), want 2 and 1", m, p)
	}
	newRun()
	again, err := checkFormat(t, cfg, info)
	if err != nil || !reflect.DeepEqual(again, first) {
		t.Errorf("the kept check: %+v, %v; want %+v", again, err, first)
	}
	if m, p := ffmpegRuns(), probeRuns(); m != 0 || p != 0 {
		t.Errorf("the kept check ran %d ffmpeg and %d ffprobe, want none", m, p)
	}

	// Another container is another check.
	mkv := cfg
	mkv.OutputPath = filepath.Join(dir, "out.mkv")
	if _, err := checkFormat(t, mkv, info); err != nil || ffmpegRuns() != 2 {
		t.Errorf("an .mkv output after an .mp4 one: %v, not checked", err)
	}

	refused := cfg
	refused.OutputVideoEncoder = "ffv1" // not in .mp4
	for i := 0; i < 2; i++ {
		newRun()
		if _, err := checkFormat(t, refused, info); fault.KindOf(err) != fault.Usage {
			t.Fatalf("ffv1 in .mp4, run %d: %v, want a usage error", i+1, err)
		}
		if n := ffmpegRuns(); n == 0 {
			t.Errorf("ffv1 in .mp4, run %d: refused without running ffmpeg (a refusal was kept)", i+1)
		}
	}
}

// A kept check holds the target's other streams with their parameters (video.Stream.Params):
// FLV takes 44.1 kHz PCM but not 48 kHz, so a 48 kHz target after a 44.1 kHz one is checked,
// and refused, before its first frame, while a longer 44.1 kHz target (another length, bit
// count and tags, the same parameters) is the same check. A target with text subtitles is
// checked with its cues, so its pass is kept neither in this process nor for later runs.
func TestOutputCheckKeptByStreamParams(t *testing.T) {
	testenv.Full(t, "ffmpeg's output check on several containers")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	srt := filepath.Join(dir, "cues.srt")
	if err := os.WriteFile(srt, []byte("1\n00:00:00,000 --> 00:00:00,300\nhello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ffmpeg := testenv.Tool(t, "ffmpeg")
	clip := func(name string, rate, frames int, extra ...string) *video.Info {
		t.Helper()
		path := filepath.Join(dir, name)
		args := []string{"-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=25",
			"-f", "lavfi", "-i", fmt.Sprintf("sine=frequency=440:sample_rate=%d", rate)}
		args = append(append(args, extra...), "-map", "0:v", "-map", "1:a", "-frames:v", strconv.Itoa(frames),
			"-t", fmt.Sprint(float64(frames)/25), "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "pcm_s16le")
		if len(extra) > 0 {
			args = append(args, "-map", "2:s", "-c:s", "mov_text")
		}
		if out, err := exec.Command(ffmpeg, append(args, path)...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v %s", name, err, out)
		}
		info, err := video.Probe(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	a44, a44long, a48 := clip("a44.mov", 44100, 10), clip("a44long.mov", 44100, 15), clip("a48.mov", 48000, 10)
	subs := clip("subs.mov", 44100, 10, "-i", srt)

	counted, runs := testenv.Counted(t, "ffmpeg")
	saved := video.FFmpeg
	video.FFmpeg = counted
	defer func() { video.FFmpeg = saved }()
	check := func(info *video.Info, out string) (video.Carried, error) {
		cfg := job.Default()
		cfg.TargetPath, cfg.OutputPath, cfg.Processors = info.Path, filepath.Join(dir, out), []string{job.ProcessorNone}
		return checkFormat(t, cfg, info)
	}

	formatsChecked.Clear()
	if c, err := check(a44, "a.flv"); err != nil || len(c.Keep) != 1 {
		t.Fatalf("44.1 kHz PCM into .flv: %+v, %v; want the audio kept", c, err)
	}
	formatsChecked.Clear() // another run
	if _, err := check(a48, "b.flv"); fault.KindOf(err) != fault.Usage || !strings.Contains(err.Error(), "48000") {
		t.Errorf("48 kHz PCM into .flv after a 44.1 kHz pass: %v; want it refused for its sample rate", err)
	}
	formatsChecked.Clear()
	runs()
	if c, err := check(a44long, "c.flv"); err != nil || len(c.Keep) != 1 || runs() != 0 {
		t.Errorf("a longer 44.1 kHz target: %+v, %v; want the kept pass, no ffmpeg run", c, err)
	}

	for i, what := range []string{"first", "in this process", "in another run"} {
		if i == 2 {
			formatsChecked.Clear()
		}
		if c, err := check(subs, "s.mov"); err != nil || len(c.Keep) != 2 {
			t.Fatalf("text subtitles into .mov, %s check: %+v, %v; want the audio and subtitles kept", what, c, err)
		}
		if runs() == 0 {
			t.Errorf("text subtitles, %s check: no ffmpeg run (a pass kept)", what)
		}
	}
}

// checkFormat is CheckFormat's answer for cfg on the target of info: the streams the output
// carries, or the refusal.
func checkFormat(t *testing.T, cfg job.Config, info *video.Info) (video.Carried, error) {
	t.Helper()
	s, err := Resolve(cfg, info)
	if err != nil {
		t.Fatal(err)
	}
	err = CheckFormat(context.Background(), cfg, s, info)
	return s.Carried, err
}

// countTools counts the runs of ffmpeg and ffprobe from here to the test's end.
func countTools(t *testing.T) (ffmpegRuns, probeRuns func() int) {
	ffmpeg, ffmpegRuns := testenv.Counted(t, "ffmpeg")
	ffprobe, probeRuns := testenv.Counted(t, "ffprobe")
	savedMpeg, savedProbe := video.FFmpeg, video.FFprobe
	video.FFmpeg, video.FFprobe = ffmpeg, ffprobe
	t.Cleanup(func() { video.FFmpeg, video.FFprobe = savedMpeg, savedProbe })
	return ffmpegRuns, probeRuns
}
