package framecolorizer

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	"github.com/facefusion-hpc/facefusion/internal/processors/processortest"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// The processor run as a worker runs it (processors.Open, processors.Run) on the stand-ins
// (infer/fixtures framecolorize.go: per output plane its own gain, bias and edge), so a
// swapped a/b or R/B, a wrong normalisation or blend moves the pixels checked.

func open(t *testing.T, model, size string, blend, maxBatch int) *processors.Chain {
	t.Helper()
	cfg := job.Default()
	cfg.Processors = []string{job.ProcessorColorize}
	cfg.FrameColorizerModel, cfg.FrameColorizerSize, cfg.FrameColorizerBlend = model, size, blend
	return processortest.Open(t, cfg, model, maxBatch, processors.Source{}, processortest.Count{})
}

// uniform is a w×h frame of one colour.
func uniform(w, h int, rgb [3]uint8) *raster.Image {
	img := raster.New(w, h)
	for i := 0; i < len(img.Pix); i += 3 {
		copy(img.Pix[i:i+3], rgb[:])
	}
	return img
}

// On a frame of one colour, away from the edges the stand-ins' edge terms vanish and their
// output is known: ddcolor's a = 70x − 30 and b = −50x + 25 of the grey x in 0..1, under the
// frame's own L; deoldify's R, G, B = 0.7v + 20, 0.6v + 30, 0.4v + 70 of the grey v in 0..255,
// whose a and b go under the frame's blue channel as L.
func TestColoursAsTheModelSays(t *testing.T) {
	rgb := [3]uint8{200, 120, 40}
	v := greyLevel(rgb[0], rgb[1], rgb[2])
	for _, c := range []struct {
		model string
		want  func() [3]uint8
	}{
		{"ddcolor", func() [3]uint8 {
			x := ddcolorGrey[v][0]
			l, _, _ := raster.RGBToLabF(unit(rgb[0]), unit(rgb[1]), unit(rgb[2]))
			r, g, b := raster.LabToRGBF(l, 70*x-30, -50*x+25)
			return [3]uint8{to8(r), to8(g), to8(b)}
		}},
		{"deoldify_stable", func() [3]uint8 {
			f := float32(v)
			_, a, b := raster.RGBToLab8(wrap8(0.7*f+20), wrap8(0.6*f+30), wrap8(0.4*f+70))
			r, g, bb := raster.LabToRGB8(rgb[2], a, b)
			return [3]uint8{r, g, bb}
		}},
	} {
		ch := open(t, c.model, "192x192", 100, 1)
		frame := uniform(300, 200, rgb)
		processortest.Run(t, ch, []*raster.Image{frame})
		r, g, b := frame.At(150, 100)
		if got, want := [3]uint8{r, g, b}, c.want(); got != want {
			t.Errorf("%s: the frame's centre is %v, want %v", c.model, got, want)
		}
		if r, g, b := frame.At(150, 100); r == g && g == b {
			t.Errorf("%s: the centre stayed grey", c.model)
		}
	}
}

// blend8 is cv2.addWeighted as OpenCV 4.6 gave it (python3-opencv, Debian 12) for these pairs
// at blend 30, where the unfused float32 sum rounds the other way.
func TestBlendIsOpenCVs(t *testing.T) {
	fw, ew := align.EnhancerWeights(30)
	for _, c := range [][3]uint8{{3, 28, 11}, {6, 61, 23}, {6, 81, 29}, {11, 56, 25}, {11, 76, 31}} {
		if got := blend8(c[0], c[1], fw, ew); got != c[2] {
			t.Errorf("addWeighted(%d, 0.7, %d, 0.3) = %d, OpenCV %d", c[0], c[1], got, c[2])
		}
	}
}

// blend 0 keeps the frame, bit for bit; blend 40 is cv2.addWeighted of the frame and blend
// 100's colour; and a batch of frames gives each frame the bytes it gets alone.
func TestBlendAndBatch(t *testing.T) {
	frames := func() []*raster.Image {
		var out []*raster.Image
		for i := range 3 {
			out = append(out, processortest.Noise(uint64(i+1), 160, 120, [3]uint8{90, 140, 30}))
		}
		return out
	}
	for _, model := range []string{"ddcolor_artistic", "deoldify"} {
		orig, full, part, zero, batched := frames(), frames(), frames(), frames(), frames()
		for i := range orig {
			processortest.Run(t, open(t, model, "256x256", 100, 1), full[i:i+1])
			processortest.Run(t, open(t, model, "256x256", 40, 1), part[i:i+1])
		}
		processortest.Run(t, open(t, model, "256x256", 0, 1), zero)
		processortest.Run(t, open(t, model, "256x256", 100, 3), batched)
		fw, ew := align.EnhancerWeights(40)
		for i := range orig {
			if !processortest.Same(zero[i], orig[i]) {
				t.Errorf("%s: blend 0 changed frame %d", model, i)
			}
			if !processortest.Same(batched[i], full[i]) {
				t.Errorf("%s: frame %d batched with others differs from itself alone", model, i)
			}
			if processortest.Same(full[i], orig[i]) {
				t.Errorf("%s: blend 100 left frame %d as it was", model, i)
			}
			for k, o := range orig[i].Pix {
				want := blend8(o, full[i].Pix[k], fw, ew)
				if part[i].Pix[k] != want {
					t.Fatalf("%s: blend 40 at byte %d of frame %d: %d, want %d", model, k, i, part[i].Pix[k], want)
				}
			}
		}
	}
}
