package video

import (
	"context"
	"strings"
	"testing"
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
