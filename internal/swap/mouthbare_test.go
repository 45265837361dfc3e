package swap

import (
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// A bare mouth in a lossy close-up stays swapped: the astronaut's smiling face, three times
// its photo's size, panned slowly and encoded with libx264 at crf 43 plain and at crf 40 with a
// dark ring-and-cross mark (a tattoo, a sticker) on the cheek below the mouth's corner. The
// codec's blocks beside the smile are found as small finds, and the mark's find grazes the
// mouth's zone; neither is a cover reaching onto the mouth, and the occluder step takes back
// no more than a tenth of the lips on any frame (when such finds grew over the mouth, it took
// back much of the lips, on the plain face and beside the mark).
func TestMouthCoversLeaveLossyBareMouthsSwapped(t *testing.T) {
	fullTier(t, "swaps lossy bare mouths")
	p := photos(t)
	s := probeSwapper(t, p.dst, &p.dstLm)
	dir := t.TempDir()
	ffmpeg := func(args ...string) {
		t.Helper()
		args = append([]string{"-nostdin", "-loglevel", "error", "-y"}, args...)
		if out, err := exec.Command(testenv.Tool(t, "ffmpeg"), args...).CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg %v: %v\n%s", args, err, out)
		}
	}
	// The close-up: the face's 200 px square, scaled to 600.
	ref := filepath.Join(dir, "plain.png")
	ffmpeg("-i", testenv.Sample(t, "astronaut.png"), "-vf", "crop=200:200:125:30,scale=600:600:flags=bicubic", ref)
	plain, err := raster.Load(ref)
	if err != nil {
		t.Fatal(err)
	}
	box := geom.Rect{X0: 156, Y0: 153, X1: 441, Y1: 435}
	lm := landmarksIn(t, plain, box)
	b := geom.Bounds(lm[:])
	size := math.Max(b.W(), b.H())
	// A tenth of the lips: at crf 43 the other rules take back a sliver of their edge.
	lips := 0
	for y := int(b.Y0); y <= int(b.Y1); y++ {
		for x := int(b.X0); x <= int(b.X1); x++ {
			if inPoly(lm[48:60], float64(x), float64(y)) {
				lips++
			}
		}
	}
	most := 0.1 * float64(lips)
	marked := mbMark(plain, &lm, size)
	if err := marked.SavePNG(filepath.Join(dir, "marked.png")); err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct {
		name string
		crf  int
	}{{"plain", 43}, {"marked", 40}} {
		clip := filepath.Join(dir, fmt.Sprintf("%s%d.mkv", v.name, v.crf))
		// A pan of a third of a pixel a frame each way, so the blocks fall differently.
		ffmpeg("-loop", "1", "-framerate", "25", "-i", filepath.Join(dir, v.name+".png"),
			"-vf", "crop=560:560:'20+n/3':'20-n/3',format=yuv420p", "-frames:v", "16",
			"-c:v", "libx264", "-preset", "veryfast", "-crf", fmt.Sprint(v.crf), "-g", "8", clip)
		ffmpeg("-i", clip, filepath.Join(dir, fmt.Sprintf("%s%d_%%02d.png", v.name, v.crf)))
		var worst float64
		for k := 1; k <= 16; k++ {
			frame, err := raster.Load(filepath.Join(dir, fmt.Sprintf("%s%d_%02d.png", v.name, v.crf, k)))
			if err != nil {
				t.Fatal(err)
			}
			d := 20 + float64(k-1)/3
			found := landmarksIn(t, frame, geom.Rect{X0: box.X0 - d, Y0: box.Y0 - 40 + d, X1: box.X1 - d, Y1: box.Y1 - 40 + d})
			px := takenBackInMouth(s, frame, &found, &found)
			worst = max(worst, px)
			if px > most {
				saveForEyes(t, frame, fmt.Sprintf("lossy-bare-%s%d-%02d.png", v.name, v.crf, k))
				t.Errorf("%s at crf %d, frame %d: the occluders take back %.0f px of the lips, want at most %.0f", v.name, v.crf, k, px, most)
			}
		}
		t.Logf("%s at crf %d: at most %.0f px of the lips (%d) taken back", v.name, v.crf, worst, lips)
	}
}

// mbMark draws on a copy of img (landmarks l, face size s) a dark navy ring with a cross in
// it on the cheek below and beside the mouth's right corner (l[48]).
func mbMark(img *raster.Image, l *face.Landmarks68, s float64) *raster.Image {
	out := img.Clone()
	c := hoPt(l[48], s, -0.09, 0.12)
	r, th := 0.055*s, 0.012*s
	for y := int(c.Y - r - 2); y <= int(c.Y+r+2); y++ {
		for x := int(c.X - r - 2); x <= int(c.X+r+2); x++ {
			dx, dy := float64(x)-c.X, float64(y)-c.Y
			d := math.Hypot(dx, dy)
			if math.Abs(d-r) <= th || d <= r && (math.Abs(dx) <= th/2 || math.Abs(dy) <= th/2) {
				out.Set(x, y, 28, 42, 66)
			}
		}
	}
	return out
}
