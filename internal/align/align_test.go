package align

import (
	"image"
	"math"
	"math/rand"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

func randomImage(rng *rand.Rand, w, h int) *raster.Image {
	m := raster.New(w, h)
	for i := range m.Pix {
		m.Pix[i] = uint8(rng.Intn(256))
	}
	return m
}

// randomSimilarity maps a face-sized region somewhere around a w×h frame (sometimes half
// outside it) onto a size×size crop.
func randomSimilarity(rng *rand.Rand, w, h, size int) geom.Affine {
	s := float64(size) / (20 + rng.Float64()*float64(max(w, h)))
	th := (rng.Float64() - 0.5) * 2
	cx, cy := rng.Float64()*float64(w)*1.4-0.2*float64(w), rng.Float64()*float64(h)*1.4-0.2*float64(h)
	a, b := s*math.Cos(th), s*math.Sin(th)
	// crop centre ← frame point (cx, cy)
	return geom.Affine{A: a, B: -b, C: float64(size)/2 - (a*cx - b*cy), D: b, E: a, F: float64(size)/2 - (b*cx + a*cy)}
}

func TestTemplatesAreFaceFusions(t *testing.T) {
	if len(Templates) != 7 {
		t.Fatalf("%d templates, want FaceFusion 3.8.1's 7", len(Templates))
	}
	// Spot values from facefusion/face_helper.py.
	if Templates["arcface_128"][2] != (geom.Pt{X: .50019687, Y: .56044219}) ||
		Templates["ffhq_512"][4] != (geom.Pt{X: .61150205, Y: .72490465}) ||
		Templates["arcface_112_v2"][0] != (geom.Pt{X: .34191607, Y: .46157411}) {
		t.Error("template values differ from FaceFusion's")
	}
	for name, tp := range Templates {
		if !(tp[0].X < tp[2].X && tp[2].X < tp[1].X && tp[3].X < tp[4].X && tp[0].Y < tp[2].Y && tp[2].Y < tp[3].Y) {
			t.Errorf("%s: points are not left eye, right eye, nose, left mouth, right mouth", name)
		}
	}
}

func TestEstimateRecoversAKnownSimilarity(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 300; i++ {
		size := []int{112, 128, 256, 512}[i%4]
		want := randomSimilarity(rng, 1920, 1080, size)
		inv, _ := want.Invert()
		tp := ArcFace128
		var five [5]geom.Pt
		for k, p := range tp.Scaled(size) {
			five[k] = inv.Apply(p)
		}
		got := Estimate(five, tp, size)
		// OpenCV fits the points rounded to float32: exact up to that rounding.
		for k, p := range tp.Scaled(size) {
			if d := got.Apply(five[k]).Dist(p); d > 1e-3 {
				t.Fatalf("case %d: point %d lands %.3g px from the template: estimated %+v, want %+v", i, k, d, got, want)
			}
		}
	}
}

// With noisy landmarks the map is the least-squares fit, which puts the five points on the
// template up to the noise, and its residual is no worse than the true map's. The fit is over
// the points as OpenCV holds them, rounded to float32.
func TestEstimateIsTheLeastSquaresFit(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	tp := FFHQ512
	dst := tp.Scaled(512)
	for i := 0; i < 100; i++ {
		truth := randomSimilarity(rng, 1280, 720, 512)
		inv, _ := truth.Invert()
		var five [5]geom.Pt
		for k := range five {
			five[k] = inv.Apply(dst[k]).Add(geom.Pt{X: rng.NormFloat64() * 0.5, Y: rng.NormFloat64() * 0.5})
		}
		got := Estimate(five, tp, 512)
		res := func(m geom.Affine) (s float64) {
			for k := range five {
				d := m.Apply(round32(five[k])).Dist(round32(dst[k]))
				s += d * d
			}
			return s
		}
		if res(got) > res(truth)+1e-9 {
			t.Fatalf("case %d: residual %.4f exceeds the true map's %.4f", i, res(got), res(truth))
		}
		for k := range five {
			if d := got.Apply(five[k]).Dist(dst[k]); d > 0.5*512/20*4 {
				t.Fatalf("case %d: point %d lands %.2f px from the template", i, k, d)
			}
		}
		// Perturbing the fit in any parameter direction must not lower the residual.
		for _, dp := range []geom.Affine{{A: 1e-6, E: 1e-6}, {B: -1e-6, D: 1e-6}, {C: 1e-4}, {F: 1e-4}} {
			for _, sgn := range []float64{1, -1} {
				p := geom.Affine{A: got.A + sgn*dp.A, B: got.B + sgn*dp.B, C: got.C + sgn*dp.C, D: got.D + sgn*dp.D, E: got.E + sgn*dp.E, F: got.F + sgn*dp.F}
				if res(p) < res(got)-1e-9 {
					t.Fatalf("case %d: a nearby similarity fits better", i)
				}
			}
		}
	}
}

func TestWarpCropMatchesTwin(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 60; i++ {
		w, h := 1+rng.Intn(200), 1+rng.Intn(150)
		src := randomImage(rng, w, h)
		size := 1 + rng.Intn(96)
		m := randomSimilarity(rng, w, h, size)
		if i%5 == 0 { // a general affine, and sometimes a pure upscale inside the frame
			m.B += rng.Float64() * 0.3
		}
		got, want := raster.New(size, size), raster.New(size, size)
		WarpCrop(got, src, m)
		warpCropRef(want, src, m)
		for k := range got.Pix {
			if got.Pix[k] != want.Pix[k] {
				x, y := k/3%size, k/3/size
				t.Fatalf("case %d (%dx%d → %d): pixel (%d,%d) ch %d = %d, twin %d", i, w, h, size, x, y, k%3, got.Pix[k], want.Pix[k])
			}
		}
	}
}

func TestWarpCropKnownAnswers(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	src := randomImage(rng, 64, 48)
	crop := raster.New(16, 16)
	// A pure integer translation copies pixels exactly.
	WarpCrop(crop, src, geom.Affine{A: 1, C: -10, E: 1, F: -20})
	for y := range 16 {
		for x := range 16 {
			r, g, b := crop.At(x, y)
			sr, sg, sb := src.At(x+10, y+20)
			if r != sr || g != sg || b != sb {
				t.Fatalf("(%d,%d): %v, want %v", x, y, []uint8{r, g, b}, []uint8{sr, sg, sb})
			}
		}
	}
	// Far outside the frame the border replicates: the top-left crop pixel looks at
	// (−100, −100) and must take the frame's corner.
	WarpCrop(crop, src, geom.Affine{A: 1, C: 100, E: 1, F: 100})
	if r, g, b := crop.At(0, 0); [3]uint8{r, g, b} != [3]uint8(src.Pix[:3]) {
		t.Errorf("outside pixel %v, want the replicated corner %v", []uint8{r, g, b}, src.Pix[:3])
	}
	// A half-pixel shift averages neighbours: (a+b)/2 rounded half to even.
	WarpCrop(crop, src, geom.Affine{A: 1, C: -0.5, E: 1})
	for x := range 15 {
		a, b := float64(src.Pix[3*x]), float64(src.Pix[3*x+3])
		if got := crop.Pix[3*x]; got != uint8(math.RoundToEven((a+b)/2)) {
			t.Fatalf("x=%d: %d, want round((%v+%v)/2)", x, got, a, b)
		}
	}
}

func TestPackLayout(t *testing.T) {
	const w, h = 5, 3
	crop := raster.New(w, h)
	for y := range h {
		for x := range w {
			crop.Set(x, y, uint8(10*y+x), uint8(100+10*y+x), uint8((200+10*y+x)%256))
		}
	}
	buf := make([]float32, 3*w*h)
	id := Norm{Std: [3]float64{1. / 255, 1. / 255, 1. / 255}} // tensor value = sample
	for _, bgr := range []bool{false, true} {
		n := id
		n.BGR = bgr
		for _, l := range []Layout{NCHW, NHWC} {
			n.Pack(buf, crop, l)
			for y := range h {
				for x := range w {
					rgb := [3]uint8{}
					rgb[0], rgb[1], rgb[2] = crop.At(x, y)
					for c := range 3 {
						want := rgb[c]
						if bgr {
							want = rgb[2-c]
						}
						i := c*h*w + y*w + x
						if l == NHWC {
							i = (y*w+x)*3 + c
						}
						if math.Abs(float64(buf[i])-float64(want)) > 1e-4 {
							t.Fatalf("bgr=%v layout=%d: (%d,%d) ch %d at %d = %v, want %d", bgr, l, x, y, c, i, buf[i], want)
						}
					}
				}
			}
		}
	}
}

func TestPackNormalisesAndUnpackRoundTrips(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	crop := randomImage(rng, 32, 24)
	buf := make([]float32, 3*32*24)
	for _, n := range []Norm{Unit, Half, ImageNet, UnitBGR, {Mean: [3]float64{.1, .2, .3}, Std: [3]float64{.4, .5, .6}, BGR: true}} {
		for _, l := range []Layout{NCHW, NHWC} {
			n.Pack(buf, crop, l)
			// The first value is FaceFusion's formula on channel 0's source sample.
			p := crop.Pix[n.src(0)]
			if want := float32((float64(p)/255 - n.Mean[0]) / n.Std[0]); buf[0] != want {
				t.Fatalf("%+v: first value %v, want %v", n, buf[0], want)
			}
			img := raster.New(32, 24)
			n.UnpackImage(img, buf, l)
			for i := range img.Pix {
				if img.Pix[i] != crop.Pix[i] {
					t.Fatalf("%+v layout %d: UnpackImage(Pack) differs at %d: %d vs %d", n, l, i, img.Pix[i], crop.Pix[i])
				}
			}
			var f raster.FloatImage
			f.Reset(image.Rect(0, 0, 32, 24))
			n.Unpack(&f, buf, l)
			for i, v := range f.Pix {
				if math.Abs(float64(v)-float64(crop.Pix[i])) > 1e-3 {
					t.Fatalf("%+v: Unpack(Pack) %v vs %d", n, v, crop.Pix[i])
				}
			}
		}
	}
	// Unpack clips: out-of-range model outputs saturate.
	out := []float32{-3, 2, 0.5}
	img := raster.New(1, 1)
	Unit.UnpackImage(img, out, NCHW)
	if img.Pix[0] != 0 || img.Pix[1] != 255 || img.Pix[2] != 128 {
		t.Errorf("clipped unpack %v, want [0 255 128]", img.Pix)
	}
	Half.UnpackImage(img, out, NCHW) // (v+1)/2: −3→0, 2→1, 0.5→0.75
	if img.Pix[0] != 0 || img.Pix[1] != 255 || img.Pix[2] != 191 {
		t.Errorf("enhancer-style unpack %v, want [0 255 191]", img.Pix)
	}
}

func TestFloat16KnownValues(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, c := range []struct {
		f float32
		h uint16
	}{
		{0, 0}, {float32(math.Copysign(0, -1)), 0x8000}, {1, 0x3c00}, {-2, 0xc000},
		{0.1, 0x2e66}, {1.0 / 3, 0x3555}, {65504, 0x7bff}, {65519.99, 0x7bff},
		{65520, 0x7c00}, {1e6, 0x7c00}, {inf, 0x7c00}, {-inf, 0xfc00},
		{0x1p-14, 0x0400}, {0x1p-24, 0x0001}, {0x1p-25, 0x0000}, {0x1.8p-25, 0x0001},
		{0x3p-25, 0x0002}, {0x1p-26, 0}, {0x1.ff8p-15, 0x03ff}, {0x1.ffcp-15, 0x0400}, {0x3ffp-24, 0x03ff},
		{1 + 0x1p-11, 0x3c00}, {1 + 0x3p-11, 0x3c02}, {1 + 0x1p-10, 0x3c01},
		{2049, 0x6800}, {2051, 0x6802}, {float32(math.NaN()), 0x7e00},
	} {
		if got := Float16(c.f); got != c.h && !(c.h == 0x7e00 && got&0x7c00 == 0x7c00 && got&0x3ff != 0) {
			t.Errorf("Float16(%g) = %#04x, want %#04x", c.f, got, c.h)
		}
	}
	for h := 0; h < 1<<16; h++ {
		f := Float32(uint16(h))
		if math.IsNaN(float64(f)) {
			if h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
				t.Fatalf("%#04x decodes to NaN", h)
			}
			continue
		}
		if back := Float16(f); back != uint16(h) {
			t.Fatalf("%#04x → %g → %#04x", h, f, back)
		}
	}
}

func TestFloat16MatchesTwin(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	check := func(f float32) {
		if got, want := Float16(f), float16Ref(f); got != want {
			t.Fatalf("Float16(%g = %#08x) = %#04x, twin %#04x", f, math.Float32bits(f), got, want)
		}
	}
	for i := 0; i < 3000; i++ {
		check(math.Float32frombits(rng.Uint32()&^(0xff<<23) | uint32(100+rng.Intn(45))<<23)) // 2⁻²⁷…2¹⁷
		check(float32(rng.NormFloat64()))
		// Exactly between two halves, and one float32 ulp either side.
		h := uint16(rng.Intn(0x7bff))
		mid := (float64(Float32(h)) + float64(Float32(h+1))) / 2
		for _, d := range []int32{-1, 0, 1} {
			check(math.Float32frombits(uint32(int32(math.Float32bits(float32(mid))) + d)))
		}
	}
}

func TestBoxMaskHandComputed(t *testing.T) {
	var ws MaskWorkspace
	// blur 0: no Gaussian, 1-pixel borders at least; padding top 10 %, right 20 %,
	// bottom 30 %, left 40 % of a 50×20 crop → rows 2…13, columns 20…39 are 1.
	m := make([]float32, 50*20)
	BoxMask(m, 50, 20, 0, [4]int{10, 20, 30, 40}, &ws)
	for y := range 20 {
		for x := range 50 {
			want := float32(0)
			if y >= 2 && y < 14 && x >= 20 && x < 40 {
				want = 1
			}
			if m[y*50+x] != want {
				t.Fatalf("(%d,%d) = %v, want %v", x, y, m[y*50+x], want)
			}
		}
	}
	// FaceFusion's default on a 128 crop: b = int(128·0.5·0.3) = 19, 9-pixel borders,
	// σ = 4.75. The border rows are zero before the blur; after it the centre is 1 and
	// the mask is symmetric.
	m = make([]float32, 128*128)
	BoxMask(m, 128, 128, 0.3, [4]int{}, &ws)
	if c := m[64*128+64]; math.Abs(float64(c)-1) > 1e-6 {
		t.Errorf("centre %v, want 1", c)
	}
	for y := range 128 {
		for x := range 128 {
			if math.Abs(float64(m[y*128+x]-m[y*128+127-x])) > 1e-6 || math.Abs(float64(m[y*128+x]-m[x*128+y])) > 1e-6 {
				t.Fatalf("mask not symmetric at (%d,%d)", x, y)
			}
		}
	}
	// At the inner edge of the 9-pixel border (row 64, column 9) half the kernel's mass
	// less the tap mass beyond … the 1-D profile at column 9 is Σ_{x≥9} k(x−9) over the
	// reflected unit step; compute that by hand from the kernel.
	k := ws.gaussian(4.75)
	r := len(k) / 2
	want := 0.0
	for j := -r; j <= r; j++ {
		x := raster.Reflect101(9+j, 128)
		if x >= 9 && x < 119 {
			want += float64(k[j+r])
		}
	}
	if got := m[64*128+9]; math.Abs(float64(got)-want) > 1e-6 || len(k) != 39 {
		t.Errorf("edge value %v, want %v (kernel %d taps, want 39)", got, want, len(k))
	}
}

func TestBoxMaskMatchesTwin(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var ws MaskWorkspace
	for i := 0; i < 12; i++ {
		w, h := 16+rng.Intn(80), 16+rng.Intn(80)
		blur := rng.Float64()
		pad := [4]int{rng.Intn(40), rng.Intn(40), rng.Intn(40), rng.Intn(40)}
		got := make([]float32, w*h)
		BoxMask(got, w, h, blur, pad, &ws)
		want := boxMaskRef(w, h, blur, pad)
		for k := range got {
			if math.Abs(float64(got[k]-want[k])) > 2e-6 {
				t.Fatalf("case %d (%dx%d blur %.2f pad %v): %d = %v, twin %v", i, w, h, blur, pad, k, got[k], want[k])
			}
		}
	}
}

func TestGaussianBlurMatchesTwin(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	var ws MaskWorkspace
	for i := 0; i < 10; i++ {
		w, h := 1+rng.Intn(60), 1+rng.Intn(60)
		sigma := 0.3 + rng.Float64()*6
		m := make([]float32, w*h)
		for k := range m {
			m[k] = rng.Float32()
		}
		want := gaussianBlurRef(m, w, h, sigma)
		GaussianBlur(m, w, h, sigma, &ws)
		for k := range m {
			if math.Abs(float64(m[k]-want[k])) > 2e-6 {
				t.Fatalf("case %d (%dx%d σ %.2f): %d = %v, twin %v", i, w, h, sigma, k, m[k], want[k])
			}
		}
	}
}

func TestResizeMaskMatchesTwin(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	var ws MaskWorkspace
	for i := 0; i < 40; i++ {
		sw, sh, dw, dh := 1+rng.Intn(64), 1+rng.Intn(64), 1+rng.Intn(128), 1+rng.Intn(128)
		src := make([]float32, sw*sh)
		for k := range src {
			src[k] = rng.Float32()
		}
		got := make([]float32, dw*dh)
		ResizeMask(got, dw, dh, src, sw, sh, false, &ws)
		want := resizeRef(src, sw, sh, dw, dh)
		for k := range got {
			if math.Abs(float64(got[k]-want[k])) > 1e-5 {
				t.Fatalf("case %d (%dx%d → %dx%d): %d = %v, twin %v", i, sw, sh, dw, dh, k, got[k], want[k])
			}
		}
	}
	// Halving averages 2×2 blocks (xseg 256 → an inswapper 128 crop).
	src := []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	got := make([]float32, 4)
	ResizeMask(got, 2, 2, src, 4, 4, false, &ws)
	if got[0] != 2.5 || got[1] != 4.5 || got[2] != 10.5 || got[3] != 12.5 {
		t.Errorf("4×4 → 2×2 = %v, want [2.5 4.5 10.5 12.5]", got)
	}
}

func TestOcclusionAndRegionMasks(t *testing.T) {
	var ws MaskWorkspace
	// An occluder that says "face" on the right half (values over 1 are clipped) and
	// "occluded" on the left (negative values clipped to 0).
	raw := make([]float32, 256*256)
	for y := range 256 {
		for x := range 256 {
			raw[y*256+x] = -2
			if x >= 128 {
				raw[y*256+x] = 3
			}
		}
	}
	m := make([]float32, 128*128)
	OcclusionMask(m, 128, 128, raw, 256, 256, &ws)
	// After clipping, the step sits between crop columns 63 and 64; blur σ 5 and the
	// 0.5…1 stretch make it 0 left of the step and 1 well right of it.
	for y := range 128 {
		if m[y*128+60] != 0 || m[y*128+63] != 0 || math.Abs(float64(m[y*128+90])-1) > 1e-5 {
			t.Fatalf("row %d: %v %v %v, want 0 0 1", y, m[y*128+60], m[y*128+63], m[y*128+90])
		}
	}
	if v := m[64*128+67]; !(v > 0.2 && v < 0.9) {
		t.Errorf("just right of the step %v, want a partial value", v)
	}
	// A parser: class 1 (skin) wins in a centre square, class 0 (background) elsewhere,
	// and class 17 (hair) on the top rows. With the default regions only the square stays.
	const n, c = 64, 19
	scores := make([]float32, c*n*n)
	for y := range n {
		for x := range n {
			win := 0
			if x >= 16 && x < 48 && y >= 16 && y < 48 {
				win = 1
			}
			if y < 8 {
				win = 17
			}
			scores[win*n*n+y*n+x] = 5
		}
	}
	r := make([]float32, 128*128)
	RegionMask(r, 128, 128, ClassScores{scores, c, n, n}, DefaultRegions, &ws)
	if v := r[64*128+64]; math.Abs(float64(v)-1) > 1e-5 {
		t.Errorf("inside the skin square %v, want 1", v)
	}
	for _, p := range [][2]int{{5, 5}, {64, 5}, {120, 64}, {64, 125}} {
		if v := r[p[1]*128+p[0]]; v != 0 {
			t.Errorf("outside the skin square at %v: %v, want 0", p, v)
		}
	}
	RegionMask(r, 128, 128, ClassScores{scores, c, n, n}, []int{17}, &ws)
	if r[2*128+64] == 0 || r[64*128+64] != 0 {
		t.Errorf("hair-only region: top %v (want > 0), centre %v (want 0)", r[2*128+64], r[64*128+64])
	}
	// MinInto and Clip01 combine masks.
	a, b := []float32{0.2, 1.5, -1}, []float32{0.5, 0.7, 0}
	MinInto(a, b)
	Clip01(a)
	if a[0] != 0.2 || a[1] != 0.7 || a[2] != 0 {
		t.Errorf("combined %v, want [0.2 0.7 0]", a)
	}
}

func TestPasteBackMatchesTwin(t *testing.T) {
	rng := rand.New(rand.NewSource(10))
	var ws MaskWorkspace
	for i := 0; i < 60; i++ {
		w, h := 1+rng.Intn(160), 1+rng.Intn(120)
		size := 2 + rng.Intn(64)
		frame := randomImage(rng, w, h)
		crop := randomImage(rng, size, size)
		var cropF raster.FloatImage
		cropF.Reset(image.Rect(0, 0, size, size))
		for k := range cropF.Pix {
			cropF.Pix[k] = rng.Float32() * 255
		}
		mask := make([]float32, size*size)
		if i%2 == 0 {
			BoxMask(mask, size, size, 0.3, [4]int{}, &ws)
		} else {
			for k := range mask {
				mask[k] = rng.Float32()*1.4 - 0.2
			}
		}
		m := randomSimilarity(rng, w, h, size)
		for mode := range 3 {
			got, want := frame.Clone(), frame.Clone()
			var area image.Rectangle
			switch mode {
			case 0:
				area = PasteBack(got, crop, mask, m)
				pasteBackRef(want, crop, nil, mask, m, -1)
			case 1:
				area = PasteBackFloat(got, &cropF, mask, m)
				pasteBackRef(want, nil, &cropF, mask, m, -1)
			case 2:
				area = PasteBackEnhanced(got, crop, mask, m, rng.Intn(101))
				// same blend drawn again for the twin
			}
			if mode == 2 {
				continue // checked below with a fixed blend
			}
			for k := range got.Pix {
				if got.Pix[k] != want.Pix[k] {
					t.Fatalf("case %d mode %d: byte %d (%d,%d) = %d, twin %d", i, mode, k, k/3%w, k/3/w, got.Pix[k], want.Pix[k])
				}
				x, y := k/3%w, k/3/w
				if !(image.Point{x, y}).In(area) && got.Pix[k] != frame.Pix[k] {
					t.Fatalf("case %d: pixel (%d,%d) outside the paste area %v changed", i, x, y, area)
				}
			}
		}
		blend := rng.Intn(101)
		got, want := frame.Clone(), frame.Clone()
		PasteBackEnhanced(got, crop, mask, m, blend)
		pasteBackRef(want, crop, nil, mask, m, blend)
		for k := range got.Pix {
			if got.Pix[k] != want.Pix[k] {
				t.Fatalf("case %d enhanced (blend %d): byte %d = %d, twin %d", i, blend, k, got.Pix[k], want.Pix[k])
			}
		}
	}
}

// Cutting a face out and pasting it straight back, with FaceFusion's box mask, must give
// the frame back up to interpolation error, and leave everything outside untouched.
func TestPasteBackRoundTripOnAPhoto(t *testing.T) {
	frame, err := raster.Load(testenv.Sample(t, "grace_hopper.png"))
	if err != nil {
		t.Fatal(err)
	}
	// grace_hopper's face (DESIGN §6: box x 168–364, y 145–342) onto a 512 crop: the
	// crop upsamples, so pasting back is close to the original.
	five := [5]geom.Pt{{X: 224, Y: 230}, {X: 305, Y: 228}, {X: 265, Y: 275}, {X: 232, Y: 310}, {X: 300, Y: 308}}
	m := Estimate(five, FFHQ512, 512)
	crop := raster.New(512, 512)
	WarpCrop(crop, frame, m)
	var ws MaskWorkspace
	mask := make([]float32, 512*512)
	BoxMask(mask, 512, 512, 0.3, [4]int{}, &ws)
	out := frame.Clone()
	area := PasteBack(out, crop, mask, m)
	var sum, n float64
	for y := range frame.H {
		for x := range frame.W {
			for c := range 3 {
				i := y*frame.Stride + 3*x + c
				d := math.Abs(float64(out.Pix[i]) - float64(frame.Pix[i]))
				if !(image.Point{x, y}).In(area) && d != 0 {
					t.Fatalf("(%d,%d) outside %v changed", x, y, area)
				}
				if (image.Point{x, y}).In(area) {
					sum += d
					n++
				}
			}
		}
	}
	if n == 0 || sum/n > 1.5 {
		t.Errorf("mean round-trip error %.3f over %v, want ≤ 1.5", sum/n, area)
	}
	// And the box mask works: a black crop pasted back darkens the centre only.
	black := raster.New(512, 512)
	out = frame.Clone()
	PasteBack(out, black, mask, m)
	c := m
	inv, _ := c.Invert()
	centre := inv.Apply(geom.Pt{X: 256, Y: 256})
	if r, g, b := out.At(int(centre.X), int(centre.Y)); r|g|b != 0 {
		t.Errorf("crop centre not replaced: %d %d %d", r, g, b)
	}
}

func TestEnhancerBlend(t *testing.T) {
	if fw, ew := EnhancerWeights(80); math.Abs(float64(fw)-0.2) > 1e-6 || math.Abs(float64(ew)-0.8) > 1e-6 {
		t.Errorf("weights for 80: %v %v, want 0.2 0.8", fw, ew)
	}
	rng := rand.New(rand.NewSource(11))
	frame, enh := randomImage(rng, 40, 30), randomImage(rng, 40, 30)
	r := image.Rect(5, 5, 30, 20)
	for _, blend := range []int{0, 37, 80, 100} {
		got := frame.Clone()
		EnhancerBlend(got, enh, r, blend)
		fw, ew := EnhancerWeights(blend)
		for y := range 30 {
			for x := range 40 {
				for c := range 3 {
					i := y*frame.Stride + 3*x + c
					want := frame.Pix[i]
					if (image.Point{x, y}).In(r) {
						want = uint8(math.RoundToEven(float64(float32(frame.Pix[i])*fw + float32(enh.Pix[i])*ew)))
						if blend == 100 && want != enh.Pix[i] || blend == 0 && want != frame.Pix[i] {
							t.Fatalf("blend %d at (%d,%d) is not the pure frame", blend, x, y)
						}
					}
					if got.Pix[i] != want {
						t.Fatalf("blend %d (%d,%d): %d, want %d", blend, x, y, got.Pix[i], want)
					}
				}
			}
		}
	}
}

func TestHotPathsDoNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	frame := randomImage(rng, 640, 480)
	crop := raster.New(256, 256)
	m := randomSimilarity(rng, 640, 480, 256)
	var cropF raster.FloatImage
	cropF.Reset(image.Rect(0, 0, 256, 256))
	var ws MaskWorkspace
	mask := make([]float32, 256*256)
	raw := make([]float32, 256*256)
	scores := make([]float32, 19*64*64)
	tensor := make([]float32, 3*256*256)
	half := make([]uint16, 3*256*256)
	for name, f := range map[string]func(){
		"WarpCrop":       func() { WarpCrop(crop, frame, m) },
		"Pack":           func() { Half.Pack(tensor, crop, NCHW) },
		"PackHalf":       func() { ImageNet.PackHalf(half, crop, NHWC) },
		"Unpack":         func() { Half.Unpack(&cropF, tensor, NCHW) },
		"UnpackImage":    func() { Half.UnpackImage(crop, tensor, NCHW) },
		"BoxMask":        func() { BoxMask(mask, 256, 256, 0.3, [4]int{}, &ws) },
		"OcclusionMask":  func() { OcclusionMask(mask, 256, 256, raw, 256, 256, &ws) },
		"RegionMask":     func() { RegionMask(mask, 256, 256, ClassScores{scores, 19, 64, 64}, DefaultRegions, &ws) },
		"PasteBack":      func() { PasteBack(frame, crop, mask, m) },
		"PasteBackFloat": func() { PasteBackFloat(frame, &cropF, mask, m) },
		"Enhanced":       func() { PasteBackEnhanced(frame, crop, mask, m, 80) },
		"EnhancerBlend":  func() { EnhancerBlend(frame, frame, image.Rect(0, 0, 100, 100), 80) },
	} {
		f() // warm the workspace
		if n := testing.AllocsPerRun(3, f); n != 0 {
			t.Errorf("%s allocates %v times per call", name, n)
		}
	}
}

// TestEstimateIsOpenCVs: where landmarks miss the fit by more than RANSAC's 100 px (large crops,
// poor landmarks), the map is cv2.estimateAffinePartial2D's, which keeps the inliers of the
// first best two-point model that cv::RNG's sequence draws. The expected matrices are
// OpenCV 4.6's output on these points (scale, tilt, one point off, near-collinear points); a
// change of seed, of the subset draw or of the inlier test moves the last three.
func TestEstimateIsOpenCVs(t *testing.T) {
	for i, c := range []struct {
		size int
		five [10]float64 // x, y of the five points
		want geom.Affine
	}{
		{128, [10]float64{98.44229705819687, -99.55490154394826, 95.72891683928147, -37.084098227186104, 99.1904124957824, -38.423008464469234, 102.39649105242904, -39.660449880643796, 93.41072570720499, -36.21972241014735},
			geom.Affine{A: 0.27573892244755793, B: 0.32614664314178154, C: 53.53563795480876, D: -0.32614664314178154, E: 0.27573892244755793, F: 122.58314367205504}},
		{1024, [10]float64{371.14027122968906, 321.15981205508456, 309.02747874126516, 239.1263851983612, 402.7788302967807, 224.87199382958465, 477.52848273732934, 260.4478494418016, 351.61711746792696, 171.85736120883362},
			geom.Affine{A: -1.76564247073488, B: -1.413798839502872, C: 1512.2921984412815, D: 1.413798839502872, E: -1.76564247073488, F: 498.04632025919375}},
		{512, [10]float64{37.741395749734174, 87.65466371626448, 81.47770380419043, 80.32577554083187, 57.81014130293608, 108.05909601361036, 45.36052830753979, 127.84559048079228, 41.66009329547317, 147.89082321364077},
			geom.Affine{A: 2.155169875788953, B: 1.2179132055420108, C: -0.9234100211324215, D: -1.2179132055420108, E: 2.155169875788953, F: 125.70746866179462}},
		{2048, [10]float64{302.46454150870346, 159.48835579976227, 359.2524105694578, 189.5786131506808, 325.67334215230943, 171.3912713116199, 296.3173994760779, 156.00452688177265, 347.1396065375952, 183.246636652473},
			geom.Affine{A: 13.254750480962837, B: -4.712746964840785, C: -2484.4315007952455, D: 4.712746964840785, E: 13.254750480962837, F: -2570.126993218072}},
	} {
		var five [5]geom.Pt
		for k := range five {
			five[k] = geom.Pt{X: c.five[2*k], Y: c.five[2*k+1]}
		}
		got := Estimate(five, FFHQ512, c.size)
		for k, p := range five {
			if d := got.Apply(p).Dist(c.want.Apply(p)); d > 1e-6 {
				t.Errorf("case %d: point %d lands %.3g px from OpenCV's (got %+v, want %+v)", i, k, d, got, c.want)
				break
			}
		}
	}
}

// TestCvRNG: cv::RNG((uint64)-1)'s first draws (the multiply-with-carry step worked by hand:
// only the low 32 bits are multiplied, the high ones carried) and RANSAC's iteration count.
func TestCvRNG(t *testing.T) {
	r := cvRNG(math.MaxUint64)
	for i, want := range []uint32{130063605, 3133359004, 2578348940, 925327173, 1080261831} {
		if got := r.next(); got != want {
			t.Fatalf("draw %d: %d, want %d", i, got, want)
		}
	}
	// log(0.01)/log(1 − 0.6²) = 10.3; no outliers: done.
	if a, b := ransacUpdateNumIters(0.99, 0, 2, 2000), ransacUpdateNumIters(0.99, 0.4, 2, 2000); a != 0 || b != 10 {
		t.Errorf("iterations for 0%% / 40%% outliers: %d / %d, want 0 / 10", a, b)
	}
}

// TestPasteAreaRoundsTheCorners: FaceFusion maps the crop's corners with cv2.transform on
// integers, which rounds them (half to even); the area is their bounds, clipped to the frame.
// The expected rectangles are cv2.transform's (OpenCV 4.6) on these maps.
func TestPasteAreaRoundsTheCorners(t *testing.T) {
	for _, c := range []struct {
		tx, ty float64 // crop (0,0) in the frame; the crop is 100×100 at scale 0.5
		want   image.Rectangle
	}{
		{100.6, 50.5, image.Rect(101, 50, 151, 100)}, // floor/ceil would give 100..151, 50..101
		{100.6, 51.5, image.Rect(101, 52, 151, 102)}, // halves go to the even neighbour
		{-10.4, 170.4, image.Rect(0, 170, 40, 200)},  // clipped to the 300×200 frame
	} {
		inv := geom.Affine{A: 0.5, E: 0.5, C: c.tx, F: c.ty}
		m, _ := inv.Invert()
		if got := PasteArea(300, 200, 100, 100, m); got != c.want {
			t.Errorf("crop at (%v, %v): area %v, want %v", c.tx, c.ty, got, c.want)
		}
	}
}
