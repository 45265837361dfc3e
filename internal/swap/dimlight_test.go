package swap

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// A dim or vignetted face is no cover. A dim grade (ffmpeg's eq=brightness=-0.12:gamma=0.7
// on a close-up of Grace Hopper) lowers the luma and leaves the chroma: the darker her skin,
// the more saturated it turns, and her cheeks, darker than her brow and nose, turn redder
// than the skin as sampled. A vignette darkening her face from one side scales her skin's
// detail and wrinkles with its light: the dim side is flat beside the lit side, whose
// wrinkles are as strong as thin covers beside the dim side's. Each frame is judged by the
// share of her visible face the occluder tests take.
// occVisibleLuma is the least luma of a face pixel that TestDimFaceIsNoCover judges.
const occVisibleLuma = 24

func TestDimFaceIsNoCover(t *testing.T) {
	testenv.Full(t, "decodes a graded close-up and finds its landmarks")
	p := photos(t)
	src, err := NewSource(p.src, &p.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	clip := testenv.CloseUpClipFrames(t, "grace_hopper.png", 1)
	for _, c := range []struct {
		name, vf string
		most     float64
	}{
		{"as shot", "null", 0.05},
		{"dimmed", "eq=brightness=-0.12:gamma=0.7", 0.05},
		// A ridge along the lit side's outline, against the ear, is left.
		{"vignetted", "vignette=angle=PI/2.5:x0=w*0.9:y0=h/2", 0.1},
	} {
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
		// Where the light leaves the skin next to black, no test can tell it; elsewhere the
		// face's pixels taken for a cover.
		covered, seen := 0, 0
		for y := fr.Min.Y; y < fr.Max.Y; y++ {
			for x := fr.Min.X; x < fr.Max.X; x++ {
				r, g, b := img.At(x, y)
				if !(s.mask.At(x, y) > 0.5) || luma(float32(r), float32(g), float32(b)) < occVisibleLuma {
					continue
				}
				seen++
				if s.occ.Pix[(y-fr.Min.Y)*s.occ.Stride+x-fr.Min.X] > 0.5 {
					covered++
				}
			}
		}
		share := float64(covered) / float64(seen)
		t.Logf("%s: %.1f%% of the face (%d px) taken for a cover", c.name, 100*share, seen)
		if share > c.most {
			t.Errorf("%s: %.1f%% of the bare face taken for a cover (want ≤ %.0f%%)", c.name, 100*share, 100*c.most)
		}
	}
}
