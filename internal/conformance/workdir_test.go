package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// -keep DIR: a folder the suite did not make is refused, and nothing in it is touched; a new
// or empty one is marked and reused.
func TestClaimWorkDir(t *testing.T) {
	user := t.TempDir()
	precious := filepath.Join(user, "in", "precious.png")
	if err := os.MkdirAll(filepath.Dir(precious), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(precious, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := claimWorkDir(user, false)
	if err == nil || !strings.Contains(err.Error(), user) || !strings.Contains(err.Error(), "did not make it") {
		t.Fatalf("a user's folder: %v, want a refusal naming it", err)
	}
	if _, err := os.Stat(precious); err != nil {
		t.Fatalf("the user's file is gone: %v", err)
	}
	for _, dir := range []string{filepath.Join(t.TempDir(), "new"), t.TempDir()} {
		if err := claimWorkDir(dir, false); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if _, err := os.Stat(filepath.Join(dir, workMarker)); err != nil {
			t.Fatalf("%s: no marker: %v", dir, err)
		}
		if err := claimWorkDir(dir, false); err != nil {
			t.Fatalf("%s, the second run: %v", dir, err)
		}
	}
	// The suite's own default folder is claimed whatever it holds (runs before the marker).
	if err := claimWorkDir(user, true); err != nil {
		t.Fatal(err)
	}
}

// gap: the clip's frame made black, every other frame the panned image.
func TestClipGap(t *testing.T) {
	testenv.Tool(t, "ffmpeg")
	dir := t.TempDir()
	png := filepath.Join(dir, "in.png")
	img := raster.New(40, 30)
	for i := range img.Pix {
		img.Pix[i] = 200
	}
	if err := writePNG(png, img); err != nil {
		t.Fatal(err)
	}
	clip := filepath.Join(dir, "clip.mov")
	if err := makeClip(png, clip, 4, 2, img.W, img.H); err != nil {
		t.Fatal(err)
	}
	frames, err := readFrames(clip)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != 4 {
		t.Fatalf("%d frames, want 4", len(frames))
	}
	for i, f := range frames {
		lo, hi := uint8(255), uint8(0)
		for _, v := range f.pix {
			lo, hi = min(lo, v), max(hi, v)
		}
		if black := hi == 0; black != (i == 2) || !black && lo != 200 {
			t.Errorf("frame %d: values %d to %d; want frame 2 black and the others 200", i, lo, hi)
		}
	}
}
