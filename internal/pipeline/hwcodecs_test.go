package pipeline

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/spec"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// A rank's codec trials, run while rank 0 plans (Pretry): none at all for a CPU job, not even a
// probe; for a GPU job the NVENC and NVDEC trials (failing on this machine, which has no NVIDIA
// driver), whose answers Check, once rank 0's choice arrives, reuses without running ffmpeg
// again, and still refuses naming the rank. ffmpeg and ffprobe are counted, and real.
func TestPretry(t *testing.T) {
	testenv.Full(t, "runs ffmpeg's hardware trials")
	in := filepath.Join(t.TempDir(), "in.mp4")
	if out, err := exec.Command(testenv.Tool(t, "ffmpeg"), "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=304x176:rate=25",
		"-frames:v", "2", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", in).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	ctx := context.Background()
	info, err := video.Probe(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	ffmpegRuns, probeRuns := countTools(t)

	cfg := job.Default()
	cfg.TargetPath, cfg.Processors, cfg.OutputVideoEncoder = in, []string{job.ProcessorNone}, "libx264"
	cfg.ExecutionProviders = []string{"cpu"}
	Pretry(ctx, cfg)
	if n, m := ffmpegRuns(), probeRuns(); n+m != 0 {
		t.Fatalf("a CPU job's trials ran ffmpeg %d and ffprobe %d time(s)", n, m)
	}
	cfg.ExecutionProviders = []string{"cuda"}
	Pretry(ctx, cfg)
	if n, m := ffmpegRuns(), probeRuns(); n < 1 || m != 1 {
		t.Fatalf("a GPU job's trials ran ffmpeg %d and ffprobe %d time(s), want the trials and one probe", n, m)
	}
	for _, c := range []spec.Codecs{{Encoder: "h264_nvenc"}, {Encoder: "libx264", HardwareDecode: true}} {
		err := c.Check(ctx, 3, info)
		if fault.KindOf(err) != fault.Environment || !strings.Contains(err.Error(), "rank 3: rank 0 ") {
			t.Errorf("%+v on a node without them: %v", c, err)
		}
		if n := ffmpegRuns(); n != 0 {
			t.Errorf("%+v: Check ran ffmpeg %d time(s) after the trials", c, n)
		}
	}
}

// countTools makes this test's ffmpeg and ffprobe counted copies of the real ones (binaries no
// earlier check in this process was kept for) until the test ends, and returns their run counts.
func countTools(t *testing.T) (ffmpegRuns, probeRuns func() int) {
	ffmpeg, ffmpegRuns := testenv.Counted(t, "ffmpeg")
	ffprobe, probeRuns := testenv.Counted(t, "ffprobe")
	savedMpeg, savedProbe := video.FFmpeg, video.FFprobe
	video.FFmpeg, video.FFprobe = ffmpeg, ffprobe
	t.Cleanup(func() { video.FFmpeg, video.FFprobe = savedMpeg, savedProbe })
	return ffmpegRuns, probeRuns
}
