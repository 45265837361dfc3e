package video

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// FaceFusion's image quality is JPEG's -q:v round(31 − 0.31·q), Python's round; PNG has none.
func TestImageQualityArgs(t *testing.T) {
	for q, want := range map[int]string{0: "31", 10: "28", 50: "16", 80: "6", 95: "2", 100: "0"} {
		if got := imageQualityArgs("jpeg", q); !slices.Equal(got, []string{"-q:v", want}) {
			t.Errorf("jpeg quality %d: %q, want -q:v %s", q, got, want)
		}
	}
	if got := imageQualityArgs("png", 10); got != nil {
		t.Errorf("png quality: %q, want nothing", got)
	}
}

// The output size is the target's at scale 1 (odd sides too) and FaceFusion's rounding at
// any other scale: each side truncated, then to the nearest even number, halves to even.
func TestScaledImageSize(t *testing.T) {
	for _, c := range []struct {
		w, h   int
		scale  float64
		ww, wh int
	}{
		{64, 48, 1, 64, 48},
		{65, 49, 1, 65, 49},
		{64, 48, 0.5, 32, 24},
		{64, 48, 2, 128, 96},
		{65, 49, 0.5, 32, 24},  // 32.5 → 32, 24.5 → 24
		{70, 50, 0.25, 16, 12}, // 17.5 → 17 → 16 (8.5 rounds to 8), 12.5 → 12
		{65, 49, 1.25, 80, 60}, // 81.25 → 81 → 80 (40.5 rounds to 40), 61.25 → 61 → 60
	} {
		gw, gh := ScaledImageSize(c.w, c.h, c.scale)
		if gw != c.ww || gh != c.wh {
			t.Errorf("%dx%d at %g: %dx%d, want %dx%d", c.w, c.h, c.scale, gw, gh, c.ww, c.wh)
		}
	}
}

// WriteImage writes through ffmpeg at the asked quality and size: a lower JPEG quality gives a
// smaller file, PNG ignores the quality, and a scaled output has the scaled size.
func TestWriteImageQualityAndSize(t *testing.T) {
	dir := t.TempDir()
	img := testImage(t, dir)
	write := func(name string, opt ImageOptions) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := WriteImage(context.Background(), p, img, opt); err != nil {
			t.Fatal(err)
		}
		return p
	}
	size := func(p string) int64 {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	if lo, hi := size(write("q10.jpg", ImageOptions{Quality: 10})), size(write("q95.jpg", ImageOptions{Quality: 95})); lo >= hi {
		t.Errorf("JPEG at quality 10 is %d bytes, at 95 %d: want the lower quality smaller", lo, hi)
	}
	a, _ := os.ReadFile(write("q10.png", ImageOptions{Quality: 10}))
	b, _ := os.ReadFile(write("q95.png", ImageOptions{Quality: 95}))
	if !bytes.Equal(a, b) {
		t.Error("the quality changed a PNG")
	}
	for _, c := range []struct {
		name   string
		w, h   int
		expect string
	}{{"half.jpg", 32, 24, "32,24"}, {"double.png", 128, 96, "128,96"}} {
		p := write(c.name, ImageOptions{Quality: 80, Width: c.w, Height: c.h})
		if got := ffprobeField(t, p, "v:0", "stream=width,height"); got != c.expect {
			t.Errorf("%s is %s, want %s", c.name, got, c.expect)
		}
	}
}

// testImage is a 64x48 test pattern, as ffmpeg draws it, saved in dir and loaded.
func testImage(t *testing.T, dir string) *raster.Image {
	t.Helper()
	src := filepath.Join(dir, "src.png")
	ffmpegRun(t, "-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1", src)
	img, err := raster.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// An image target's alpha is kept in a PNG output, as FaceFusion keeps it, colours and alpha
// exact, and read back by raster.LoadAlpha; an opaque image has none (nil), and JPEG drops it.
func TestWriteImageKeepsAlpha(t *testing.T) {
	dir := t.TempDir()
	img := testImage(t, dir)
	if a, err := raster.LoadAlpha(filepath.Join(dir, "src.png")); err != nil || a != nil {
		t.Fatalf("an opaque PNG's alpha: %v, %v; want nil", a, err)
	}
	alpha := &raster.Alpha{W: img.W, H: img.H, Pix: make([]uint8, img.W*img.H)}
	for i := range alpha.Pix {
		alpha.Pix[i] = uint8(i * 7)
	}
	p := filepath.Join(dir, "alpha.png")
	if err := WriteImage(context.Background(), p, img, ImageOptions{Alpha: alpha}); err != nil {
		t.Fatal(err)
	}
	got, err := raster.LoadAlpha(p)
	if err != nil || got == nil || !slices.Equal(got.Pix, alpha.Pix) {
		t.Fatalf("alpha read back differs (%v)", err)
	}
	back, err := raster.Load(p)
	if err != nil || !slices.Equal(back.Bytes(), img.Bytes()) {
		t.Fatalf("colours beside the alpha differ (%v)", err)
	}
	j := filepath.Join(dir, "alpha.jpg")
	if err := WriteImage(context.Background(), j, img, ImageOptions{Quality: 90, Alpha: alpha}); err != nil {
		t.Fatal(err)
	}
	if a, err := raster.LoadAlpha(j); err != nil || a != nil {
		t.Errorf("a JPEG's alpha: %v, %v; want none", a != nil, err)
	}
}
