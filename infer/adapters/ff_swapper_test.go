package adapters

import (
	"github.com/facefusion-hpc/facefusion/internal/face"
	"image"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// faceScene is a noise frame with a uniform patch of value v under the face whose five points
// sit on tmpl at size px from (x, y): the crop is uniform, so the fixtures' arithmetic gives
// one known value per channel at the crop's centre.
type faceScene struct {
	frame, orig *raster.Image
	five        [5]geom.Pt
	area        image.Rectangle
}

func newScene(r *rand.Rand, w, h int, tmpl align.Template, x, y, size float64, crop int, v uint8) faceScene {
	img := noiseFrame(r, w, h)
	var five [5]geom.Pt
	for i, q := range tmpl {
		five[i] = geom.Pt{X: x + q.X*size, Y: y + q.Y*size}
	}
	area := align.PasteArea(w, h, crop, crop, align.Estimate(five, tmpl, crop))
	fill := area.Inset(-3).Intersect(img.Bounds())
	for yy := fill.Min.Y; yy < fill.Max.Y; yy++ {
		for xx := fill.Min.X; xx < fill.Max.X; xx++ {
			img.Set(xx, yy, v, v, v)
		}
	}
	orig := raster.New(w, h)
	copy(orig.Pix, img.Pix)
	return faceScene{frame: img, orig: orig, five: five, area: area}
}

// centre is the frame pixel at the middle of the face (mask 1 under a box mask).
func (s faceScene) centre() [3]uint8 {
	c := geom.Mean(s.five[:])
	r, g, b := s.frame.At(int(c.X), int(c.Y))
	return [3]uint8{r, g, b}
}

// outsideUntouched fails unless every pixel outside the paste area is bit-identical.
func (s faceScene) outsideUntouched(t *testing.T, what string) {
	t.Helper()
	for y := range s.frame.H {
		for x := range s.frame.W {
			if image.Pt(x, y).In(s.area) {
				continue
			}
			i := y*s.frame.Stride + 3*x
			if s.frame.Pix[i] != s.orig.Pix[i] || s.frame.Pix[i+1] != s.orig.Pix[i+1] || s.frame.Pix[i+2] != s.orig.Pix[i+2] {
				t.Fatalf("%s: pixel (%d,%d) outside the paste area %v changed", what, x, y, s.area)
			}
		}
	}
}

func unchanged(a, b *raster.Image) bool {
	for i := range a.Pix {
		if a.Pix[i] != b.Pix[i] {
			return false
		}
	}
	return true
}

func embeddingOf(t testing.TB, raw ...float32) face.Embedding {
	v := make([]float32, 512)
	copy(v, raw)
	e, err := facemodel.NewEmbedding(v)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func clip01(v float64) float64 { return math.Min(1, math.Max(0, v)) }

// TestSwapperArithmetic swaps a uniform face with each swapper family's fixture (out = target
// + source[c]) and checks the centre pixel against FaceFusion's formulas written out: the
// target normalisation, how the source is made (emap projection, unit embedding, crossface
// converter = 2x + 0.25, normalised for simswap), the de-normalisation, clip ×255, truncation.
func TestSwapperArithmetic(t *testing.T) {
	dir := fixtures.Dir(t)
	const v = 100.0
	raw := []float32{0.3, -0.4}
	emb := embeddingOf(t, raw...)
	emap := fixtures.Emap()
	var proj [512]float32
	facemodel.ProjectEmap(proj[:], emb.Raw[:], emap)
	conv := func(j int) float64 { return 2*float64(emb.Raw[j]) + 0.25 }
	convNorm := 0.0
	for j := range 512 {
		convNorm += conv(j) * conv(j)
	}
	convNorm = math.Sqrt(convNorm)
	imagenetM, imagenetS := [3]float64{.485, .456, .406}, [3]float64{.229, .224, .225}
	cases := []struct {
		model string
		tol   float64
		want  func(c int) float64 // 0..1 before ×255
	}{
		{"inswapper_128", 1, func(c int) float64 { return v/255 + float64(proj[c]) }},
		{"inswapper_128_fp16", 1, func(c int) float64 { return v/255 + float64(proj[c]) }},
		{"hyperswap_1a_256", 1, func(c int) float64 { return ((v/255-.5)/.5+float64(emb.Norm[c]))*.5 + .5 }},
		{"simswap_256", 1, func(c int) float64 { return (v/255-imagenetM[c])/imagenetS[c] + conv(c)/convNorm }},
		{"ghost_1_256", 1, func(c int) float64 { return ((v/255-.5)/.5+conv(c))*.5 + .5 }},
	}
	for _, tc := range cases {
		sw, err := NewFaceSwapper(tc.model, ffConfig(t, dir, 1), SwapOptions{Mask: DefaultMaskOptions()})
		if err != nil {
			t.Fatal(err)
		}
		if err := sw.SetSource(emb); err != nil {
			t.Fatal(err)
		}
		mdl, _ := facemodel.LookupSwapper(tc.model)
		sc := newScene(rand.New(rand.NewPCG(1, 2)), 360, 340, align.Templates[string(mdl.Template)], 90, 80, 160, mdl.Size, uint8(v))
		if err := sw.Swap([]FaceRef{{Frame: sc.frame, Five: sc.five}}); err != nil {
			t.Fatal(err)
		}
		got := sc.centre()
		for c := range 3 {
			want := math.Floor(clip01(tc.want(c)) * 255)
			if math.Abs(float64(got[c])-want) > tc.tol {
				t.Errorf("%s: centre channel %d = %d, want %v", tc.model, c, got[c], want)
			}
		}
		sc.outsideUntouched(t, tc.model)
		sw.Close()
	}
	if _, err := NewFaceSwapper("blendswap_256", ffConfig(t, dir, 1), SwapOptions{}); err == nil {
		t.Error("blendswap_256 (takes a source image) accepted")
	}
	if _, err := NewFaceSwapper("inswapper_128", ffConfig(t, dir, 1), SwapOptions{PixelBoost: 200}); err == nil {
		t.Error("pixel boost 200 for a 128 model accepted")
	}
	if _, err := NewFaceSwapper("inswapper_128", ffConfig(t, dir, 1), SwapOptions{Mask: MaskOptions{Types: []string{"area"}}}); err == nil {
		t.Error("unknown mask type accepted")
	}
}

// TestSwapperMasks: box vs box+occlusion vs box+region on a uniform face of value 200.
// The xseg fixture's mask is the crop's mean over channels, v/255, feathered to
// (v/255 − 0.5)·2; the bisenet fixture's class k scores k·mean(ImageNet-normalised), so a
// bright crop is class 18: the default regions keep nothing, regions {18} keep everything.
func TestSwapperMasks(t *testing.T) {
	dir := fixtures.Dir(t, "inswapper_128", "xseg_1", "bisenet_resnet_34")
	emb := embeddingOf(t, 0, 1)
	const v = 200
	run := func(mask MaskOptions) faceScene {
		sw, err := NewFaceSwapper("inswapper_128", ffConfig(t, dir, 2), SwapOptions{Mask: mask})
		if err != nil {
			t.Fatal(err)
		}
		defer sw.Close()
		if err := sw.SetSource(emb); err != nil {
			t.Fatal(err)
		}
		sc := newScene(rand.New(rand.NewPCG(3, 4)), 300, 300, align.ArcFace128, 70, 60, 150, 128, v)
		if err := sw.Swap([]FaceRef{{Frame: sc.frame, Five: sc.five}}); err != nil {
			t.Fatal(err)
		}
		sc.outsideUntouched(t, "mask")
		return sc
	}
	box := run(MaskOptions{Types: []string{"box"}, Blur: 0.3})
	var proj [512]float32
	facemodel.ProjectEmap(proj[:], emb.Raw[:], fixtures.Emap())
	swapped := [3]float64{}
	for c := range 3 {
		swapped[c] = clip01(v/255.0+float64(proj[c])) * 255
		if got := float64(box.centre()[c]); math.Abs(got-math.Floor(swapped[c])) > 1 {
			t.Errorf("box: centre %d = %v, want %v", c, got, math.Floor(swapped[c]))
		}
	}
	occ := run(MaskOptions{Types: []string{"box", "occlusion"}, Blur: 0.3})
	a := (v/255.0 - 0.5) * 2
	for c := range 3 {
		want := math.Floor(v*(1-a) + swapped[c]*a)
		if got := float64(occ.centre()[c]); math.Abs(got-want) > 1 {
			t.Errorf("box+occlusion: centre %d = %v, want %v (mask %.3f)", c, got, want, a)
		}
	}
	if box.centre() == occ.centre() {
		t.Error("the occlusion mask changed nothing")
	}
	none := run(MaskOptions{Types: []string{"box", "region"}, Blur: 0.3})
	if !unchanged(none.frame, none.orig) {
		t.Error("box+region with the default regions (class 18 not among them) changed the frame")
	}
	all := run(MaskOptions{Types: []string{"box", "region"}, Blur: 0.3, Regions: []int{18}})
	// The feathered region mask is 1 to within float32 rounding (the blur's kernel sums to
	// 1 − ε), which can move a truncated pixel by one level.
	if d := maxDiff(all.frame, box.frame); d > 1 {
		t.Errorf("box+region keeping class 18 differs from box alone by %d levels", d)
	}
}

// swapScenes are faces on noise frames: one per frame, plus two overlapping faces on the
// last frame (which must run one after the other).
func swapScenes(seed uint64) []FaceRef {
	r := rand.New(rand.NewPCG(seed, 9))
	var items []FaceRef
	for i := range 5 {
		img := noiseFrame(r, 260, 240)
		items = append(items, FaceRef{Frame: img, Five: jitterFive(r, 40+float64(i)*5, 30, 150)})
	}
	last := items[len(items)-1].Frame
	items = append(items, FaceRef{Frame: last, Five: jitterFive(r, 70, 50, 130)})
	return items
}

// TestSwapperBatchEqualsSingle: batch 8 with pixel boost (4 tiles per face, 2 faces per
// batch) and a float16 model give the same frames as batch 1; Swap allocates nothing.
func TestSwapperBatchEqualsSingle(t *testing.T) {
	dir := fixtures.Dir(t, "inswapper_128", "inswapper_128_fp16", "hyperswap_1a_256", "xseg_1")
	emb := embeddingOf(t, 0.2, -0.1, 0.3, 0.05)
	for _, tc := range []struct {
		model string
		boost int
		types []string
	}{{"inswapper_128", 256, []string{"box", "occlusion"}}, {"inswapper_128_fp16", 0, nil}, {"hyperswap_1a_256", 0, []string{"box"}}} {
		var frames [2][]FaceRef
		for i, b := range []int{1, 8} {
			sw, err := NewFaceSwapper(tc.model, ffConfig(t, dir, b), SwapOptions{PixelBoost: tc.boost, Mask: MaskOptions{Types: tc.types, Blur: 0.3}})
			if err != nil {
				t.Fatal(err)
			}
			if err := sw.SetSource(emb); err != nil {
				t.Fatal(err)
			}
			frames[i] = swapScenes(1)
			if err := sw.Swap(frames[i]); err != nil {
				t.Fatal(err)
			}
			again := swapScenes(2)
			if n := testing.AllocsPerRun(2, func() { sw.Swap(again) }); n != 0 {
				t.Errorf("%s batch %d: Swap allocates %v times per call", tc.model, b, n)
			}
			sw.Close()
		}
		orig := swapScenes(1)
		for j := range frames[0] {
			if !unchanged(frames[0][j].Frame, frames[1][j].Frame) {
				t.Errorf("%s: face %d: batch 8 differs from batch 1", tc.model, j)
			}
			if unchanged(frames[0][j].Frame, orig[j].Frame) {
				t.Errorf("%s: face %d: nothing swapped", tc.model, j)
			}
		}
	}
}

func benchmarkSwap(b *testing.B, batch int) {
	dir := fixtures.Dir(b, "inswapper_128")
	sw, err := NewFaceSwapper("inswapper_128", ffConfig(b, dir, batch), SwapOptions{Mask: DefaultMaskOptions()})
	if err != nil {
		b.Fatal(err)
	}
	defer sw.Close()
	if err := sw.SetSource(embeddingOf(b, 0.2, 0.1)); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	items := make([]FaceRef, 8)
	for i := range items {
		items[i] = FaceRef{Frame: noiseFrame(r, 640, 360), Five: jitterFive(r, 200, 80, 180)}
	}
	b.ResetTimer()
	for b.Loop() {
		if err := sw.Swap(items); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(items))/1e6, "ms/face")
}

// BenchmarkSwapBatch1 and BenchmarkSwapBatch8: inswapper_128 fixture, 8 faces per op, box
// mask, on the CPU provider.
func BenchmarkSwapBatch1(b *testing.B) { benchmarkSwap(b, 1) }
func BenchmarkSwapBatch8(b *testing.B) { benchmarkSwap(b, 8) }

func maxDiff(a, b *raster.Image) int {
	d := 0
	for i := range a.Pix {
		d = max(d, int(a.Pix[i])-int(b.Pix[i]), int(b.Pix[i])-int(a.Pix[i]))
	}
	return d
}
