package adapters

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
)

// TestEnhancerBlendAndWeight: on a uniform face of one colour the centre and the five points are the
// stand-in's output (fixtures.EnhancerOut: a channel mix, so a swapped colour order shows, plus
// ramps over the crop, so the crop position shows) at the centre's place in the crop, mapped
// back to 8 bits, then FaceFusion's blend of frame and enhanced face: round(f·(1 − b) + e·b).
// Every enhancer runs at blend 100 with its FaceFusion template and size; gfpgan_1.4 at the
// blend's ends and default; codeformer at two weights.
func TestEnhancerBlendAndWeight(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: runs the enhancer stand-ins at every blend (make test)")
	}
	facts := []struct {
		name string
		tmpl align.Template
		size int
	}{ // face_enhancer/core.py create_static_model_set
		{"codeformer", align.FFHQ512, 512}, {"gfpgan_1.2", align.FFHQ512, 512}, {"gfpgan_1.3", align.FFHQ512, 512},
		{"gfpgan_1.4", align.FFHQ512, 512}, {"gpen_bfr_256", align.ArcFace128, 256}, {"gpen_bfr_512", align.FFHQ512, 512},
		{"gpen_bfr_1024", align.FFHQ512, 1024}, {"gpen_bfr_2048", align.FFHQ512, 2048},
		{"restoreformer_plus_plus", align.FFHQ512, 512},
	}
	var names []string
	for _, f := range facts {
		names = append(names, f.name)
	}
	dir := fixtures.Dir(t, names...)
	colour := [3]uint8{170, 90, 40}
	run := func(model string, tmpl align.Template, size, blend int, weight float64) {
		t.Helper()
		e, err := NewFaceEnhancer(model, ffConfig(t, dir, 1), blend, weight, DefaultMaskOptions())
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		sc := newScene(rand.New(rand.NewPCG(5, 5)), 420, 400, tmpl, 80, 70, 256, size, 0)
		fill := sc.area.Inset(-3).Intersect(sc.frame.Bounds())
		for y := fill.Min.Y; y < fill.Max.Y; y++ {
			for x := fill.Min.X; x < fill.Max.X; x++ {
				sc.frame.Set(x, y, colour[0], colour[1], colour[2])
				sc.orig.Set(x, y, colour[0], colour[1], colour[2])
			}
		}
		if err := enhanceInto(e, []FaceRef{{Frame: sc.frame, Five: sc.five}}); err != nil {
			t.Fatal(err)
		}
		sc.outsideUntouched(t, model)
		m := align.Estimate(sc.five, tmpl, size)
		var x [3]float64
		for k, v := range colour {
			x[k] = (float64(v)/255 - 0.5) / 0.5
		}
		b := float64(blend) / 100
		// The centre and the five points: where they land in the crop is the template's doing.
		for _, p := range append(sc.five[:], geom.Mean(sc.five[:])) {
			px, py := int(p.X), int(p.Y)
			at := m.Apply(geom.Pt{X: float64(px), Y: float64(py)})
			r, g, bl := sc.frame.At(px, py)
			for k, got := range [3]uint8{r, g, bl} {
				out := fixtures.EnhancerOut(k, int(math.Round(at.X)), int(math.Round(at.Y)), size, x, weight, model == "codeformer")
				enhanced := math.RoundToEven((math.Min(1, math.Max(-1, out)) + 1) / 2 * 255)
				want := math.RoundToEven(float64(colour[k])*(1-b) + enhanced*b)
				if math.Abs(float64(got)-want) > 1 {
					t.Errorf("%s blend %d weight %v: (%d, %d) channel %d = %d, want %v", model, blend, weight, px, py, k, got, want)
				}
			}
		}
		if blend == 0 && !unchanged(sc.frame, sc.orig) {
			t.Errorf("%s: blend 0 changed the frame", model)
		}
	}
	for _, f := range facts {
		if m := catalog.Must(f.name); m.Size != f.size || align.Templates[m.Template] != f.tmpl {
			t.Errorf("%s: catalog has %s at %d", f.name, m.Template, m.Size)
		}
		run(f.name, f.tmpl, f.size, 100, 0.5)
	}
	if got := catalog.Selectors(catalog.Enhancer); len(got) != len(facts) {
		t.Errorf("enhancers %v, want FaceFusion's %d", got, len(facts))
	}
	for _, blend := range []int{0, 80} {
		run("gfpgan_1.4", align.FFHQ512, 512, blend, 0.5)
	}
	for _, w := range []float64{0, 1} {
		run("codeformer", align.FFHQ512, 512, 100, w)
	}
	if _, err := NewFaceEnhancer("gfpgan_1.4", ffConfig(t, dir, 1), 101, 0.5, DefaultMaskOptions()); err == nil {
		t.Error("blend 101 accepted")
	}
}

// TestEnhancerBatchEqualsSingle: batch 3 over 6 faces (two overlapping on one frame) gives
// the frames batch 1 gives; Enhance allocates nothing.
func TestEnhancerBatchEqualsSingle(t *testing.T) {
	dir := fixtures.Dir(t, "gpen_bfr_256", "xseg_1")
	var frames [2][]FaceRef
	for i, b := range []int{1, 3} {
		e, err := NewFaceEnhancer("gpen_bfr_256", ffConfig(t, dir, b), 80, 0.5, MaskOptions{Types: []string{"box", "occlusion"}, Blur: 0.3})
		if err != nil {
			t.Fatal(err)
		}
		frames[i] = swapScenes(3)
		if err := enhanceInto(e, frames[i]); err != nil {
			t.Fatal(err)
		}
		again := swapScenes(4)
		if n := testing.AllocsPerRun(2, func() { enhanceInto(e, again) }); n != 0 {
			t.Errorf("batch %d: Enhance allocates %v times per call", b, n)
		}
		e.Close()
	}
	orig := swapScenes(3)
	for j := range frames[0] {
		if !unchanged(frames[0][j].Frame, frames[1][j].Frame) {
			t.Errorf("face %d: batch 3 differs from batch 1", j)
		}
		if unchanged(frames[0][j].Frame, orig[j].Frame) {
			t.Errorf("face %d: nothing enhanced", j)
		}
	}
}
