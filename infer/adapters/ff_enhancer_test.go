package adapters

import (
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/align"
)

// TestEnhancerBlendAndWeight: on a uniform face of value 100 the fixtures give gfpgan
// (x' = 2x + 1 with x = v/127.5 − 1) → 200 and codeformer (x' = 2x + weight) →
// (2x + w + 1)/2·255; the centre pixel is then FaceFusion's blend of frame and enhanced face:
// round(f·(1 − b) + e·b).
func TestEnhancerBlendAndWeight(t *testing.T) {
	dir := fixtures.Dir(t, "gfpgan_1.4", "codeformer")
	const v = 100.0
	x := v/127.5 - 1
	enhanced := func(out float64) float64 { return math.RoundToEven((math.Min(1, math.Max(-1, out)) + 1) / 2 * 255) }
	run := func(model string, blend int, weight float64) faceScene {
		e, err := NewFaceEnhancer(model, ffConfig(t, dir, 1), blend, weight, DefaultMaskOptions())
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		sc := newScene(rand.New(rand.NewPCG(5, 5)), 420, 400, align.FFHQ512, 80, 70, 256, 512, uint8(v))
		if err := e.Enhance([]FaceRef{{Frame: sc.frame, Five: sc.five}}); err != nil {
			t.Fatal(err)
		}
		sc.outsideUntouched(t, model)
		return sc
	}
	for _, blend := range []int{0, 80, 100} {
		sc := run("gfpgan_1.4", blend, 0.5)
		b := float64(blend) / 100
		want := math.RoundToEven(v*(1-b) + enhanced(2*x+1)*b)
		for c, got := range sc.centre() {
			if math.Abs(float64(got)-want) > 1 {
				t.Errorf("gfpgan blend %d: centre %d = %d, want %v", blend, c, got, want)
			}
		}
		if blend == 0 && !unchanged(sc.frame, sc.orig) {
			t.Error("blend 0 changed the frame")
		}
	}
	for _, w := range []float64{0.2, 0.8} {
		sc := run("codeformer", 100, w)
		want := enhanced(2*x + w)
		for c, got := range sc.centre() {
			if math.Abs(float64(got)-want) > 1 {
				t.Errorf("codeformer weight %v: centre %d = %d, want %v", w, c, got, want)
			}
		}
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
		if err := e.Enhance(frames[i]); err != nil {
			t.Fatal(err)
		}
		again := swapScenes(4)
		if n := testing.AllocsPerRun(2, func() { e.Enhance(again) }); n != 0 {
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
