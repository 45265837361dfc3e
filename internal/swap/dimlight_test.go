package swap

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// A dim grade (ffmpeg's eq=brightness=-0.12:gamma=0.7 on a close-up of Grace Hopper) lowers
// the luma and leaves the chroma: the darker her skin, the more saturated it turns, and her
// cheeks, darker than her brow and nose, turn redder than the skin as sampled. The large
// region of her cheeks, cut off by her glasses and her nose, was then unlike the skin by more
// than likeSkin allows and was taken for a cover over a third of her face on most frames.
// Skin as the sample discs show it at the cheeks' own light is what they are.
func TestDimFaceIsNoCover(t *testing.T) {
	testenv.Full(t, "decodes a graded close-up and finds its landmarks")
	p := photos(t)
	src, err := NewSource(p.src, &p.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	clip := testenv.CloseUpClipFrames(t, "grace_hopper.png", 1)
	for _, c := range []struct{ name, vf string }{{"as shot", "null"}, {"dimmed", "eq=brightness=-0.12:gamma=0.7"}} {
		frame := filepath.Join(t.TempDir(), "frame.png")
		cmd := exec.Command(testenv.Tool(t, "ffmpeg"), "-nostdin", "-loglevel", "error", "-y", "-i", clip, "-vf", c.vf, "-frames:v", "1", frame)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, out)
		}
		img, err := raster.Load(frame)
		if err != nil {
			t.Fatal(err)
		}
		lm := landmarksIn(t, img, geom.Rect{X0: 230, Y0: 80, X1: 600, Y1: 450})
		s := NewSwapper(src, DefaultOptions())
		size, _, fr, ok := s.place(img, &lm)
		if !ok {
			t.Fatalf("%s: the face was not placed", c.name)
		}
		s.features(&lm, fr)
		s.findOccluders(img, &lm, &s.mask, size, fr)
		covered := 0
		for _, v := range s.occ.Pix {
			if v > 0.5 {
				covered++
			}
		}
		share := float64(covered) / float64(faceArea(&s.mask, fr))
		t.Logf("%s: %.1f%% of the face taken for a cover", c.name, 100*share)
		if share > 0.05 {
			t.Errorf("%s: %.1f%% of the bare face taken for a cover (want ≤ 5%%)", c.name, 100*share)
		}
	}
}
