package dist

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/clitest"
)

// BenchmarkFrameEnhance is a 4× frame_enhancer run of a 1080p clip (4 frames, ffv1) on one
// rank with span_kendata_x4's stand-in and --output-video-scale 4 (a 7680×4320 output): the
// pipeline around the model (tiles, blend, the ×4 buffers, the encoder's input), not a real
// model's convolutions. It reports frames/s over the run's wall time and the process's peak
// RSS (the frames in flight at ×4 are most of it).
//
//	go test -run '^$' -bench FrameEnhance -benchtime 1x ./cmd/facefusion/e2e/dist
func BenchmarkFrameEnhance(b *testing.B) {
	const frames = 4
	dir := b.TempDir()
	clip := filepath.Join(dir, "clip.mp4")
	clitest.FFmpeg(b, "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=25", "-frames:v", "4", "-c:v", "libx264", "-pix_fmt", "yuv420p", clip)
	models := fixtures.Dir(b, "span_kendata_x4")
	var wall time.Duration
	var peak int64
	b.ResetTimer()
	for range b.N {
		cmd := clitest.Command(b, "run", "--processors", "frame_enhancer", "--frame-enhancer-model", "span_kendata_x4",
			"--output-video-scale", "4", "--output-video-encoder", "ffv1", "--models-dir", models,
			"-t", clip, "-o", filepath.Join(dir, "out.mkv"), "--force")
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		wall += time.Since(start)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = max(peak, ru.Maxrss*1024)
		}
	}
	b.ReportMetric(float64(frames*b.N)/wall.Seconds(), "frames/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
}
