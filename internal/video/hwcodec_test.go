package video

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// The trials really run ffmpeg: a software encoder passes (the positive control, so a trial
// that failed everything would be caught), and on this machine, which has no NVIDIA driver,
// NVENC and NVDEC fail with ffmpeg's reason. A machine with a working NVIDIA GPU fails this
// test on purpose: the fallback path it proves needs a node without one (make gpu-check covers
// the other side).
func TestHardwareTrials(t *testing.T) {
	ctx := context.Background()
	if err := TryEncoder(ctx, "libx264"); err != nil {
		t.Fatalf("libx264 trial failed: %v", err)
	}
	hw, ok := HardwareEncoder("libx264")
	if !ok || hw != "h264_nvenc" {
		t.Fatalf("HardwareEncoder(libx264) = %q, %v", hw, ok)
	}
	if _, ok := HardwareEncoder("ffv1"); ok {
		t.Fatal("ffv1 has no NVENC pair, yet one was given")
	}
	err := TryEncoder(ctx, hw)
	if err == nil || !strings.Contains(err.Error(), "h264_nvenc cannot run on this node") || !strings.Contains(err.Error(), "ffmpeg failed") {
		t.Fatalf("h264_nvenc trial on a node without a GPU: got %v", err)
	}
	if again := TryEncoder(ctx, hw); again != err {
		t.Fatalf("the trial was not cached: %v then %v", err, again)
	}
	info := probe(t, clip(t, "bf.mp4"))
	err = TryHardwareDecode(ctx, info)
	if err == nil || !strings.Contains(err.Error(), "NVDEC") || !strings.Contains(err.Error(), info.Path) {
		t.Fatalf("NVDEC trial on a node without a GPU: got %v", err)
	}
	SetHardwareDecode(true)
	if a := hwaccelArgs(); len(a) != 2 || a[1] != "cuda" {
		t.Fatalf("hwaccel args with NVDEC on: %q", a)
	}
	SetHardwareDecode(false)
	if a := hwaccelArgs(); a != nil {
		t.Fatalf("hwaccel args with NVDEC off: %q", a)
	}
}

// The decode trial is cached per codec, profile, pixel format and size, not per codec: a later
// H.264 target in High 4:4:4 (which NVDEC lacks), or of another size, gets a trial of its own,
// and the same one again none. The trials are counted through FFmpeg.
func TestHardwareDecodeTrialKey(t *testing.T) {
	testenv.Full(t, "runs ffmpeg's hardware decode trials")
	dir := t.TempDir()
	clipOf := func(name, size, pixFmt string) *Info {
		p := filepath.Join(dir, name)
		ffmpegRun(t, "-f", "lavfi", "-i", "testsrc2=size="+size+":rate=25", "-frames:v", "2",
			"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", pixFmt, p)
		return probe(t, p)
	}
	yuv420, yuv444, larger := clipOf("420.mp4", "272x144", "yuv420p"), clipOf("444.mp4", "272x144", "yuv444p"), clipOf("larger.mp4", "288x144", "yuv420p")
	// Another file with yuv420's key: no trial of its own, but its error names it, not yuv420.
	twin := *yuv420
	twin.Path = filepath.Join(dir, "twin.mp4")
	if yuv420.Codec != yuv444.Codec || yuv420.Profile == yuv444.Profile || yuv420.Profile != larger.Profile {
		t.Fatalf("profiles %q %q %q of one codec", yuv420.Profile, yuv444.Profile, larger.Profile)
	}
	counted, runs := testenv.Counted(t, "ffmpeg")
	saved := FFmpeg
	FFmpeg = counted
	defer func() { FFmpeg = saved }()
	ctx := context.Background()
	for _, c := range []struct {
		info *Info
		runs int
	}{{yuv420, 1}, {yuv444, 1}, {larger, 1}, {yuv420, 0}, {yuv444, 0}, {&twin, 0}} {
		first := TryHardwareDecode(ctx, c.info)
		if n := runs(); n != c.runs {
			t.Errorf("%s (%s %s %dx%d): %d trial run(s), want %d", filepath.Base(c.info.Path), c.info.Profile, c.info.PixFmt, c.info.Width, c.info.Height, n, c.runs)
		}
		if first == nil || !strings.Contains(first.Error(), c.info.Path) || c.info != yuv420 && strings.Contains(first.Error(), yuv420.Path) {
			t.Errorf("%s: trial on a node without NVDEC gave %v", c.info.Path, first)
		}
	}
}
