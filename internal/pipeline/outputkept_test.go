package pipeline

import (
	"context"
	"os/exec"
	"path/filepath"
	"reflect"
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
	ffmpeg, ffmpegRuns := testenv.Counted(t, "ffmpeg")
	ffprobe, probeRuns := testenv.Counted(t, "ffprobe")
	savedMpeg, savedProbe := video.FFmpeg, video.FFprobe
	video.FFmpeg, video.FFprobe = ffmpeg, ffprobe
	defer func() { video.FFmpeg, video.FFprobe = savedMpeg, savedProbe }()
	newRun := func() { formatsChecked.Clear() }

	cfg := job.Default()
	cfg.TargetPath, cfg.OutputPath, cfg.Processors = in, filepath.Join(dir, "out.mp4"), []string{job.ProcessorNone}
	first, err := CheckOutputFormat(ctx, cfg, info)
	if err != nil || len(first.Keep) != 1 {
		t.Fatalf("first check: %+v, %v; want the audio kept", first, err)
	}
	if m, p := ffmpegRuns(), probeRuns(); m != 2 || p != 1 {
		t.Fatalf("first check: %d ffmpeg and %d ffprobe run(s), want 2 and 1", m, p)
	}
	newRun()
	again, err := CheckOutputFormat(ctx, cfg, info)
	if err != nil || !reflect.DeepEqual(again, first) {
		t.Errorf("the kept check: %+v, %v; want %+v", again, err, first)
	}
	if m, p := ffmpegRuns(), probeRuns(); m != 0 || p != 0 {
		t.Errorf("the kept check ran %d ffmpeg and %d ffprobe, want none", m, p)
	}

	// Another container is another check.
	mkv := cfg
	mkv.OutputPath = filepath.Join(dir, "out.mkv")
	if _, err := CheckOutputFormat(ctx, mkv, info); err != nil || ffmpegRuns() != 2 {
		t.Errorf("an .mkv output after an .mp4 one: %v, not checked", err)
	}

	refused := cfg
	refused.OutputVideoEncoder = "ffv1" // not in .mp4
	for i := 0; i < 2; i++ {
		newRun()
		if _, err := CheckOutputFormat(ctx, refused, info); fault.KindOf(err) != fault.Usage {
			t.Fatalf("ffv1 in .mp4, run %d: %v, want a usage error", i+1, err)
		}
		if n := ffmpegRuns(); n == 0 {
			t.Errorf("ffv1 in .mp4, run %d: refused without running ffmpeg (a refusal was kept)", i+1)
		}
	}
}
