package adapters

import (
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
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
	return newSceneRGB(r, w, h, tmpl, x, y, size, crop, [3]uint8{v, v, v})
}

// newSceneRGB is newScene with a patch of colour v.
func newSceneRGB(r *rand.Rand, w, h int, tmpl align.Template, x, y, size float64, crop int, v [3]uint8) faceScene {
	img := noiseFrame(r, w, h)
	var five [5]geom.Pt
	for i, q := range tmpl {
		five[i] = geom.Pt{X: x + q.X*size, Y: y + q.Y*size}
	}
	area := align.PasteArea(w, h, crop, crop, align.Estimate(five, tmpl, crop))
	fill := area.Inset(-3).Intersect(img.Bounds())
	for yy := fill.Min.Y; yy < fill.Max.Y; yy++ {
		for xx := fill.Min.X; xx < fill.Max.X; xx++ {
			img.Set(xx, yy, v[0], v[1], v[2])
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

// standInCentre is what the swapper stand-in (fixtures.SwapperMix) gives at the centre pixel of
// sc, a face of colour rgb, before the paste: src is its source term per plane. The ramp is
// linear, so its value at the (fractional) crop position the centre samples is exact.
func standInCentre(mdl facemodel.Swapper, sc faceScene, rgb [3]float64, src func(c int) float64) [3]float64 {
	cm := geom.Mean(sc.five[:])
	at := align.Estimate(sc.five, align.Templates[string(mdl.Template)], mdl.Size).Apply(geom.Pt{X: math.Floor(cm.X), Y: math.Floor(cm.Y)})
	gain, offset := fixtures.SwapperGain(mdl.Name)
	var want [3]float64
	for c := range 3 {
		var out float64
		for d := range 3 {
			out += float64(fixtures.SwapperMix[c][d]) * (rgb[d]/255 - mdl.Mean[d]) / mdl.Std[d]
		}
		a, b := float64(fixtures.SwapperRamp(c, 1, 0, 1)), float64(fixtures.SwapperRamp(c, 0, 1, 1))
		out += (a*at.X + b*at.Y) / float64(mdl.Size)
		out = (out+src(c))*float64(gain) + float64(offset)
		switch mdl.Type {
		case facemodel.Ghost, facemodel.Hififace, facemodel.Hyperswap, facemodel.Uniface:
			out = out*mdl.Std[c] + mdl.Mean[c]
		}
		want[c] = math.Floor(clip01(out) * 255)
	}
	return want
}

// standInCrop is the swapper stand-in's output for a crop of one colour rgb (0–255, RGB), as
// FaceFusion's float crop after normalize_crop_frame: per plane (RGB), size² values 0–255,
// not rounded; src is the source term per plane.
func standInCrop(mdl facemodel.Swapper, rgb [3]float64, src func(c int) float64) [3][]float32 {
	gain, offset := fixtures.SwapperGain(mdl.Name)
	var out [3][]float32
	for c := range 3 {
		var mixed float64
		for d := range 3 {
			mixed += float64(fixtures.SwapperMix[c][d]) * (rgb[d]/255 - mdl.Mean[d]) / mdl.Std[d]
		}
		s := src(c)
		out[c] = make([]float32, mdl.Size*mdl.Size)
		for y := range mdl.Size {
			for x := range mdl.Size {
				v := (mixed+float64(fixtures.SwapperRamp(c, x, y, mdl.Size))+s)*float64(gain) + float64(offset)
				switch mdl.Type {
				case facemodel.Ghost, facemodel.Hififace, facemodel.Hyperswap, facemodel.Uniface:
					v = v*mdl.Std[c] + mdl.Mean[c]
				}
				out[c][y*mdl.Size+x] = float32(clip01(v) * 255)
			}
		}
	}
	return out
}

// embeddingTerm is the stand-in's source term for a prepared embedding source.
func embeddingTerm(src []float32) func(c int) float64 {
	return func(c int) float64 {
		var s float64
		for j := range 512 {
			s += float64(fixtures.SwapperPick(j, c)) * float64(src[j])
		}
		return fixtures.SourceGain * math.Tanh(s)
	}
}

// TestSwapperArithmetic swaps a face of one colour with each swapper family's stand-in (see
// fixtures.SwapperMix) and checks the centre pixel against FaceFusion's formulas written out:
// the target normalisation in RGB order, how the source is made (emap projection, unit
// embedding, the family's crossface converter, normalised for simswap and hififace, or the
// source face crop, RGB v/255), the de-normalisation, clip ×255, truncation.
func TestSwapperArithmetic(t *testing.T) {
	dir := fixtures.Dir(t)
	tgtRGB := [3]float64{100, 140, 70}
	raw := make([]float32, 512)
	for j := range raw {
		raw[j] = float32(math.Sin(float64(j)*0.37)) * 0.3
	}
	emb := embeddingOf(t, raw...)
	var proj [512]float32
	facemodel.ProjectEmap(proj[:], emb.Raw[:], fixtures.Emap())
	pick := func(src func(j int) float64) func(c int) float64 {
		return func(c int) float64 {
			var s float64
			for j := range 512 {
				s += float64(fixtures.SwapperPick(j, c)) * src(j)
			}
			return fixtures.SourceGain * math.Tanh(s)
		}
	}
	converted := func(name string, unit bool) func(j int) float64 {
		out := fixtures.ConverterOut(name, emb.Raw[:])
		n := 1.0
		if unit {
			n = 0
			for _, x := range out {
				n += x * x
			}
			n = math.Sqrt(n)
		}
		return func(j int) float64 { return out[j] / n }
	}
	// The source image of the crop swappers: one colour, so the crop is that colour.
	srcRGB := [3]float64{200, 90, 30}
	crop := func(n int) func(c int) float64 {
		var ramp float64
		for y := range n {
			for x := range n {
				ramp += float64(fixtures.SourceRamp(x, y, n))
			}
		}
		ramp /= float64(n * n)
		return func(c int) float64 {
			var s float64
			for d := range 3 {
				s += float64(fixtures.SourceMix[c][d]) * srcRGB[d] / 255 * ramp
			}
			return s
		}
	}
	cases := []struct {
		model string
		src   func(c int) float64
	}{
		{"inswapper_128", pick(func(j int) float64 { return float64(proj[j]) })},
		{"inswapper_128_fp16", pick(func(j int) float64 { return float64(proj[j]) })},
		{"hyperswap_1a_256", pick(func(j int) float64 { return float64(emb.Norm[j]) })},
		{"simswap_256", pick(converted("crossface_simswap", true))},
		{"simswap_unofficial_512", pick(converted("crossface_simswap", true))},
		{"ghost_1_256", pick(converted("crossface_ghost", false))},
		{"hififace_unofficial_256", pick(converted("crossface_hififace", true))},
		{"blendswap_256", crop(112)},
		{"uniface_256", crop(256)},
		{"inswapper_128_fp16 (float16 inputs)", pick(func(j int) float64 { return float64(proj[j]) })},
	}
	half := fixtures.HalfIODir(t)
	for _, tc := range cases {
		mdir := dir
		if m, ok := strings.CutSuffix(tc.model, " (float16 inputs)"); ok {
			tc.model, mdir = m, half
		}
		sw, err := NewFaceSwapper(tc.model, ffConfig(t, mdir, 1), SwapOptions{Mask: DefaultMaskOptions()})
		if err != nil {
			t.Fatal(err)
		}
		mdl, _ := facemodel.LookupSwapper(tc.model)
		if sw.TakesSourceFrame() {
			img := raster.New(300, 300)
			for i := range img.Pix {
				img.Pix[i] = uint8(srcRGB[i%3])
			}
			var five [5]geom.Pt
			for i, q := range align.Templates[string(mdl.SourceTemplate)] {
				five[i] = geom.Pt{X: 50 + 150*q.X, Y: 40 + 150*q.Y}
			}
			if sw.SetSource(emb) == nil {
				t.Errorf("%s: an embedding source accepted", tc.model)
			}
			err = sw.SetSourceFrame(img, five)
		} else {
			err = sw.SetSource(emb)
		}
		if err != nil {
			t.Fatal(err)
		}
		tmpl := align.Templates[string(mdl.Template)]
		sc := newSceneRGB(rand.New(rand.NewPCG(1, 2)), 700, 660, tmpl, 90, 80, 320, mdl.Size, [3]uint8{100, 140, 70})
		if err := swapInto(sw, []FaceRef{{Frame: sc.frame, Five: sc.five}}); err != nil {
			t.Fatal(err)
		}
		want := standInCentre(mdl, sc, tgtRGB, tc.src)
		got := sc.centre()
		for c := range 3 {
			if math.Abs(float64(got[c])-want[c]) > 1 {
				t.Errorf("%s: centre channel %d = %d, want %v (source term %.4f)", tc.model, c, got[c], want[c], tc.src(c))
			}
		}
		sc.outsideUntouched(t, tc.model)
		sw.Close()
	}
	if _, err := NewFaceSwapper("inswapper_128", ffConfig(t, dir, 1), SwapOptions{PixelBoost: 200}); err == nil {
		t.Error("pixel boost 200 for a 128 model accepted")
	}
	if _, err := NewFaceSwapper("inswapper_128", ffConfig(t, dir, 1), SwapOptions{Mask: MaskOptions{Types: []string{"mouth"}}}); err == nil {
		t.Error("unknown mask type accepted")
	}
}

// TestSwapperMasks: each mask type on a face of one colour, against the crop mask computed
// from the stand-ins' own arithmetic (fixtures.OccluderOut, ParserScores) by align's mask
// functions: the adapter feeds each mask model FaceFusion's crop (occluder: the target crop,
// BGR; parser: the swapped float crop, per pixel as standInCrop gives it, resized, RGB,
// ImageNet), runs the model the options name, and takes the minimum. The colour is not grey,
// so a channel order mistake moves the masks.
func TestSwapperMasks(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: swaps with every mask on the stand-ins (make test)")
	}
	dir := fixtures.Dir(t, "inswapper_128", "xseg_1", "xseg_2", "xseg_3", "bisenet_resnet_18", "bisenet_resnet_34")
	emb := embeddingOf(t, 0, 1)
	col := [3]uint8{200, 150, 90} // R, G, B
	const size = 128
	run := func(mask MaskOptions) faceScene {
		sw, err := NewFaceSwapper("inswapper_128", ffConfig(t, dir, 2), SwapOptions{Mask: mask})
		if err != nil {
			t.Fatal(err)
		}
		defer sw.Close()
		if err := sw.SetSource(emb); err != nil {
			t.Fatal(err)
		}
		sc := newScene(rand.New(rand.NewPCG(3, 4)), 300, 300, align.ArcFace128, 70, 60, 150, size, 0)
		fill := sc.area.Inset(-3).Intersect(sc.frame.Bounds())
		for y := fill.Min.Y; y < fill.Max.Y; y++ {
			for x := fill.Min.X; x < fill.Max.X; x++ {
				sc.frame.Set(x, y, col[0], col[1], col[2])
			}
		}
		copy(sc.orig.Pix, sc.frame.Pix)
		if err := swapInto(sw, []FaceRef{{Frame: sc.frame, Five: sc.five}}); err != nil {
			t.Fatal(err)
		}
		sc.outsideUntouched(t, "mask")
		return sc
	}
	var proj [512]float32
	facemodel.ProjectEmap(proj[:], emb.Raw[:], fixtures.Emap())
	mdl, _ := facemodel.LookupSwapper("inswapper_128")
	swapped := standInCrop(mdl, [3]float64{float64(col[0]), float64(col[1]), float64(col[2])}, embeddingTerm(proj[:]))
	var ws align.MaskWorkspace
	box := make([]float32, size*size)
	align.BoxMask(box, size, size, 0.3, [4]int{}, &ws)
	occlusion := func(names ...string) []float32 {
		bgr := [3]float32{float32(float64(col[2]) / 255), float32(float64(col[1]) / 255), float32(float64(col[0]) / 255)}
		acc, tmp, raw := make([]float32, size*size), make([]float32, size*size), make([]float32, 256*256)
		for i, n := range names {
			for p := range raw {
				raw[p] = fixtures.OccluderOut(n, bgr, p%256, p/256)
			}
			align.ResizeMask(tmp, size, size, raw, 256, 256, true, &ws)
			if i == 0 {
				copy(acc, tmp)
			} else {
				align.MinInto(acc, tmp)
			}
		}
		align.Feather(acc, size, size, &ws)
		return acc
	}
	// The parser reads the swapped float crop resized to 512 (cv2.resize per plane), RGB over
	// 255, ImageNet-normalised.
	const plane = 512 * 512
	var big [3][]float32
	for c := range 3 {
		big[c] = make([]float32, plane)
		align.ResizeMask(big[c], 512, 512, swapped[c], size, size, false, &ws)
	}
	region := func(name string, regions []int) []float32 {
		scores := make([]float32, 19*plane)
		for p := range plane {
			var in [3]float32
			for c := range 3 {
				in[c] = (big[c][p]/255 - float32(align.ImageNet.Mean[c])) / float32(align.ImageNet.Std[c])
			}
			for k, v := range fixtures.ParserScores(name, in, p%512, p/512) {
				scores[k*plane+p] = v
			}
		}
		m := make([]float32, size*size)
		align.RegionMask(m, size, size, align.ClassScores{Data: scores, Classes: 19, W: 512, H: 512}, regions, &ws)
		return m
	}
	// check compares every frame pixel whose place in the crop is inside it with the blend
	// the crop mask (bilinear there) gives, and needs the mask partial at some of them.
	check := func(what string, mask MaskOptions, masks ...[]float32) {
		t.Helper()
		sc := run(mask)
		want := slices.Clone(box)
		if !slices.Contains(mask.Types, "box") {
			for i := range want {
				want[i] = 1
			}
		}
		for _, m := range masks {
			align.MinInto(want, m)
		}
		align.Clip01(want)
		toCrop := align.Estimate(sc.five, align.ArcFace128, size)
		partial, bad := 0, 0
		for y := sc.area.Min.Y; y < sc.area.Max.Y; y++ {
			for x := sc.area.Min.X; x < sc.area.Max.X; x++ {
				p := toCrop.Apply(geom.Pt{X: float64(x), Y: float64(y)})
				if p.X < 1 || p.Y < 1 || p.X > size-2 || p.Y > size-2 {
					continue
				}
				x0, y0 := int(p.X), int(p.Y)
				fx, fy := p.X-float64(x0), p.Y-float64(y0)
				bilinear := func(v []float32) float64 {
					m := func(x, y int) float64 { return float64(v[y*size+x]) }
					return (m(x0, y0)*(1-fx)+m(x0+1, y0)*fx)*(1-fy) + (m(x0, y0+1)*(1-fx)+m(x0+1, y0+1)*fx)*fy
				}
				a := bilinear(want)
				if a > 0.1 && a < 0.9 {
					partial++
				}
				r, g, b := sc.frame.At(x, y)
				for c, got := range [3]uint8{r, g, b} {
					w := float64(col[c])*(1-a) + bilinear(swapped[c])*a
					if math.Abs(float64(got)-w) > 1.5 && bad < 3 {
						bad++
						t.Errorf("%s: pixel (%d,%d) channel %d = %d, want %.1f (mask %.3f)", what, x, y, c, got, w, a)
					}
				}
			}
		}
		if partial < 50 {
			t.Errorf("%s: the mask is partial at %d pixels only: choose a scene that tests it", what, partial)
		}
	}
	check("box+occlusion xseg_1", MaskOptions{Types: []string{"box", "occlusion"}, Blur: 0.3}, occlusion("xseg_1"))
	check("occlusion xseg_2", MaskOptions{Types: []string{"occlusion"}, Blur: 0.3, Occluder: "xseg_2"}, occlusion("xseg_2"))
	check("occlusion many", MaskOptions{Types: []string{"occlusion", "box"}, Blur: 0.3, Occluder: "many"}, occlusion("xseg_1", "xseg_2", "xseg_3"))
	for _, r := range [][]int{align.DefaultRegions, {1, 4, 10, 12}, {0, 7, 8, 9, 14}} {
		check(fmt.Sprintf("box+region bisenet_resnet_34 %v", r), MaskOptions{Types: []string{"box", "region"}, Blur: 0.3, Regions: r}, region("bisenet_resnet_34", r))
		check(fmt.Sprintf("region bisenet_resnet_18 %v", r), MaskOptions{Types: []string{"region", "box"}, Blur: 0.3, Parser: "bisenet_resnet_18", Regions: r}, region("bisenet_resnet_18", r))
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
// batch), a model of float16 weights and one of float16 inputs give the same frames as batch
// 1; Swap allocates nothing.
func TestSwapperBatchEqualsSingle(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: runs the swapper stand-ins at every batch (make test)")
	}
	dir := fixtures.Dir(t, "inswapper_128", "inswapper_128_fp16", "hyperswap_1a_256", "xseg_1")
	half := fixtures.HalfIODir(t)
	emb := embeddingOf(t, 0.2, -0.1, 0.3, 0.05)
	for _, tc := range []struct {
		dir, model string
		boost      int
		types      []string
	}{{dir, "inswapper_128", 256, []string{"box", "occlusion"}}, {dir, "inswapper_128_fp16", 0, nil}, {half, "inswapper_128_fp16", 0, nil}, {dir, "hyperswap_1a_256", 0, []string{"box"}}} {
		var frames [2][]FaceRef
		for i, b := range []int{1, 8} {
			sw, err := NewFaceSwapper(tc.model, ffConfig(t, tc.dir, b), SwapOptions{PixelBoost: tc.boost, Mask: MaskOptions{Types: tc.types, Blur: 0.3}})
			if err != nil {
				t.Fatal(err)
			}
			if err := sw.SetSource(emb); err != nil {
				t.Fatal(err)
			}
			frames[i] = swapScenes(1)
			if err := swapInto(sw, frames[i]); err != nil {
				t.Fatal(err)
			}
			again := swapScenes(2)
			if n := testing.AllocsPerRun(2, func() { swapInto(sw, again) }); n != 0 {
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
		if err := swapInto(sw, items); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(items))/1e6, "ms/face")
}

// BenchmarkSwapBatch1 and BenchmarkSwapBatch8: inswapper_128 fixture, 8 faces per op, box
// mask, on the CPU provider.
func BenchmarkSwapBatch1(b *testing.B) { benchmarkSwap(b, 1) }
func BenchmarkSwapBatch8(b *testing.B) { benchmarkSwap(b, 8) }
