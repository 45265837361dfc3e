package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// An odd-sized target with the default encoder (libx264, which refuses yuv420p at an odd size)
// is swapped into an output of the same size and frame count, as yuv444p, and the log says so.
func TestOddFrameSizeDefaultEncoder(t *testing.T) {
	dir := t.TempDir()
	even := filepath.Join(dir, "even.mp4")
	faceClip(t, even, 322, 242, 12, "25")
	clip := filepath.Join(dir, "odd.mkv") // lavfi's colour source rounds sizes to even: scale down
	ffmpeg(t, "-i", even, "-vf", "scale=161:121", "-c:v", "ffv1", "-c:a", "copy", clip)
	src := probe(t, clip)
	if src.Width != 161 || src.Height != 121 || src.Frames != 12 {
		t.Fatalf("the target is %dx%d with %d frames, want 161x121 with 12", src.Width, src.Height, src.Frames)
	}
	for _, processors := range []string{"face_swapper", "none"} {
		t.Run(processors, func(t *testing.T) {
			out := filepath.Join(dir, processors+".mp4")
			r := facefusion(t, "run", "-s", testenv.Sample(t, "grace_hopper.png"), "-t", clip, "-o", out, "--processors", processors, "--chunk-frames", "5")
			if r.code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
			}
			got := probe(t, out)
			if got.Width != 161 || got.Height != 121 || got.Frames != 12 || got.PixFmt != "yuv444p" {
				t.Errorf("output %dx%d, %d frames, %s; want 161x121, 12 frames, yuv444p", got.Width, got.Height, got.Frames, got.PixFmt)
			}
			if n := strings.Count(r.stderr, "161x121, an odd size that libx264 cannot store as yuv420p: the output keeps that size as yuv444p"); n != 1 {
				t.Errorf("the pixel format line is logged %d times, want once:\n%s", n, r.stderr)
			}
		})
	}
}
