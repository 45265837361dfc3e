package facemodel

import (
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

func randomVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// TestProjectEmap checks inswapper's source against a direct computation: column j of emap
// dotted with the raw embedding, over the raw embedding's length.
func TestProjectEmap(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	raw, emap := randomVec(r, 512), randomVec(r, 512*512)
	var length float64
	for _, v := range raw {
		length += float64(v) * float64(v)
	}
	length = math.Sqrt(length)
	got := make([]float32, 512)
	ProjectEmap(got, raw, emap)
	for _, j := range []int{0, 1, 255, 511} {
		var col float64
		for i := range 512 {
			col += float64(raw[i]) * float64(emap[i*512+j])
		}
		if !near(float64(got[j]), col/length, 1e-4*math.Abs(col/length)+1e-6) {
			t.Errorf("component %d = %v, want %v", j, got[j], col/length)
		}
	}
	// Through the swapper: inswapper uses the raw embedding (its length divides out).
	sw, _ := LookupSwapper("inswapper_128_fp16")
	e, _ := NewEmbedding(raw)
	viaSwapper := make([]float32, 512)
	if err := sw.SourceEmbedding(viaSwapper, &e, emap, nil); err != nil {
		t.Fatal(err)
	}
	for j := range got {
		if viaSwapper[j] != got[j] {
			t.Fatalf("SourceEmbedding differs from ProjectEmap at %d", j)
		}
	}
	if err := sw.SourceEmbedding(viaSwapper, &e, emap[:100], nil); err == nil {
		t.Error("a short emap accepted")
	}
	if n := testing.AllocsPerRun(5, func() { ProjectEmap(got, raw, emap) }); n != 0 {
		t.Errorf("ProjectEmap allocates %v times", n)
	}
}

func TestSourceEmbeddingPerType(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	e, _ := NewEmbedding(randomVec(r, 512))
	converted := randomVec(r, 512)
	dst := make([]float32, 512)
	check := func(name string, want []float32) {
		t.Helper()
		sw, err := LookupSwapper(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := sw.SourceEmbedding(dst, &e, nil, converted); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if !near(float64(dst[i]), float64(want[i]), 1e-6) {
				t.Fatalf("%s: component %d = %v, want %v", name, i, dst[i], want[i])
			}
		}
	}
	check("hyperswap_1b_256", e.Norm[:])
	check("ghost_2_256", converted)
	unit := make([]float32, 512)
	normalize(unit, converted)
	check("simswap_256", unit)
	check("hififace_unofficial_256", unit)
	check("simswap_unofficial_512", unit)
	uni, _ := LookupSwapper("uniface_256")
	if uni.TakesEmbedding() || uni.SourceEmbedding(dst, &e, nil, converted) == nil {
		t.Error("uniface takes a source crop, not an embedding")
	}
	if _, err := LookupSwapper("inswapper_256"); err == nil {
		t.Error("unknown swapper found")
	}
}

func TestBalanceSource(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	tgt, _ := NewEmbedding(randomVec(r, 512))
	src := randomVec(r, 512)
	for _, c := range []struct {
		name   string
		weight float64
		w      float32 // share of the target
		raw    bool
	}{
		{"inswapper_128", 0.5, 0, false},
		{"hyperswap_1a_256", 0, 0.35, false},
		{"simswap_256", 1, -0.35, false},
		{"ghost_1_256", 0, 0.35, true},
	} {
		sw, _ := LookupSwapper(c.name)
		if got := SwapperBalance(c.weight); got != c.w {
			t.Fatalf("weight %v: balance %v, want %v", c.weight, got, c.w)
		}
		got := make([]float32, 512)
		sw.BalanceSource(got, src, &tgt, SwapperBalance(c.weight))
		tv := tgt.Norm[:]
		if c.raw {
			tv = tgt.Raw[:]
		}
		for i := range got {
			want := src[i]*(1-c.w) + tv[i]*c.w
			if !near(float64(got[i]), float64(want), 1e-5) {
				t.Fatalf("%s weight %v: component %d = %v, want %v", c.name, c.weight, i, got[i], want)
			}
		}
	}
}

// PrepareSourceFrame warps the source face onto its template, RGB, v/255: a face whose five
// points are the template's own at the crop size is the frame's top-left corner as it is.
func TestPrepareSourceFrame(t *testing.T) {
	for _, name := range []string{"blendswap_256", "uniface_256"} {
		sw, _ := LookupSwapper(name)
		n := sw.SourceSize
		frame := raster.New(n+40, n+30)
		for i := range frame.Pix {
			frame.Pix[i] = uint8(i*7 + i/3)
		}
		var five [5]geom.Pt
		for i, q := range align.Templates[string(sw.SourceTemplate)] {
			five[i] = geom.Pt{X: q.X * float64(n), Y: q.Y * float64(n)}
		}
		dst := make([]float32, 3*n*n)
		if err := sw.PrepareSourceFrame(dst, raster.New(n, n), frame, five); err != nil {
			t.Fatal(err)
		}
		for _, p := range [][2]int{{0, 0}, {n - 1, 3}, {5, n - 2}} {
			r, g, b := frame.At(p[0], p[1])
			for c, v := range []uint8{r, g, b} {
				if got, want := dst[c*n*n+p[1]*n+p[0]], float32(float64(v)/255); math.Abs(float64(got-want)) > 1e-6 {
					t.Errorf("%s: plane %d at %v = %v, want %v (RGB v/255)", name, c, p, got, want)
				}
			}
		}
	}
	ins, _ := LookupSwapper("inswapper_128")
	if ins.PrepareSourceFrame(make([]float32, 3*112*112), raster.New(112, 112), raster.New(200, 200), [5]geom.Pt{}) == nil {
		t.Error("inswapper accepted a source crop")
	}
}

// identityModel stands in for a swapper whose output is its input: then FinishOutput must
// undo PrepareTarget for the types FaceFusion de-normalises, and clip the others.
func TestSwapperTargetRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, name := range []string{"hyperswap_1a_256", "inswapper_128", "ghost_3_256", "simswap_256"} {
		sw, _ := LookupSwapper(name)
		for _, k := range []int{1, 2} {
			size := k * sw.Size
			crop := randomFrame(r, size, size)
			out := NewBoostCrop(size)
			tensor := make([]float32, 3*sw.Size*sw.Size)
			for tile := range k * k {
				if err := sw.PrepareTarget(tensor, crop, tile); err != nil {
					t.Fatal(err)
				}
				if tile == k*k-1 && k == 2 {
					// Tile 3 = (a, b) = (1, 1): crop pixel (2j+1, 2i+1), RGB planes.
					cr, _, _ := crop.At(2*5+1, 2*3+1)
					if got, want := tensor[3*sw.Size+5], float32((float64(cr)/255-sw.Mean[0])/sw.Std[0]); got != want {
						t.Errorf("%s tile 3 (5,3) red = %v, want %v", name, got, want)
					}
				}
				if err := sw.FinishOutput(out, tensor, tile); err != nil {
					t.Fatal(err)
				}
			}
			for y := range size {
				for x := range size {
					for c := range 3 {
						v := float64(crop.Pix[y*crop.Stride+3*x+c])
						want := v
						if sw.Type == Simswap { // not de-normalised: the normalised value, clipped, ×255
							want = min(1, max(0, (v/255-sw.Mean[c])/sw.Std[c])) * 255
						}
						if got := float64(out.Pix[y*out.Stride+3*x+c]); !near(got, want, 1e-3) {
							t.Fatalf("%s k=%d (%d,%d,%d) = %v, want %v", name, k, x, y, c, got, want)
						}
					}
				}
			}
		}
		if err := sw.PrepareTarget(make([]float32, 3*sw.Size*sw.Size), raster.New(sw.Size+1, sw.Size+1), 0); err == nil {
			t.Errorf("%s: crop of %d accepted", name, sw.Size+1)
		}
	}
}

func TestSwapperTable(t *testing.T) {
	for _, c := range []struct {
		name     string
		template Template
		size     int
		conv     string
	}{
		{"inswapper_128", ArcFace128, 128, ""},
		{"hyperswap_1c_256", ArcFace128, 256, ""},
		{"simswap_256", ArcFace112V1, 256, "crossface_simswap"},
		{"ghost_1_256", ArcFace112V1, 256, "crossface_ghost"},
	} {
		sw, err := LookupSwapper(c.name)
		if err != nil || sw.Template != c.template || sw.Size != c.size || sw.Converter != c.conv || sw.PixelBoost[0] != c.size {
			t.Errorf("%s: %+v", c.name, sw)
		}
		if _, err := sw.Template.Points(sw.Size); err != nil {
			t.Error(err)
		}
	}
}

func TestEnhancer(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, m := range catalog.Of(catalog.Enhancer) {
		e, err := LookupEnhancer(m.Name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Template.Points(e.Size); err != nil {
			t.Error(err)
		}
	}
	cf, _ := LookupEnhancer("codeformer")
	gp, _ := LookupEnhancer("gpen_bfr_256")
	if !cf.Weight || gp.Weight || gp.Template != ArcFace128 || gp.Size != 256 {
		t.Errorf("table: codeformer %+v, gpen_bfr_256 %+v", cf, gp)
	}
	// An identity model gives back the crop exactly; out-of-range outputs clip to 0 and 255;
	// 0 is mid-grey, 127.5, which numpy rounds to 128.
	crop := randomFrame(r, 256, 256)
	tensor := make([]float32, 3*256*256)
	if err := gp.Prepare(tensor, crop); err != nil {
		t.Fatal(err)
	}
	if got, want := tensor[0], float32((float64(crop.Pix[0])/255-0.5)/0.5); got != want {
		t.Errorf("input red (0,0) = %v, want %v", got, want)
	}
	out := raster.New(256, 256)
	if err := gp.Finish(out, tensor); err != nil {
		t.Fatal(err)
	}
	for i := range out.Pix {
		if out.Pix[i] != crop.Pix[i] {
			t.Fatalf("sample %d = %d, want %d", i, out.Pix[i], crop.Pix[i])
		}
	}
	tensor[0], tensor[1], tensor[2] = 3, -7, 0
	gp.Finish(out, tensor)
	if out.Pix[0] != 255 || out.Pix[3] != 0 || out.Pix[6] != 128 {
		t.Errorf("clip/round: %d %d %d, want 255 0 128", out.Pix[0], out.Pix[3], out.Pix[6])
	}
	if _, err := LookupEnhancer("gfpgan_2"); err == nil {
		t.Error("unknown enhancer found")
	}
}

func BenchmarkProjectEmap(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	raw, emap, dst := randomVec(r, 512), randomVec(r, 512*512), make([]float32, 512)
	for b.Loop() {
		ProjectEmap(dst, raw, emap)
	}
}

func BenchmarkSwapperTarget256(b *testing.B) {
	sw, _ := LookupSwapper("hyperswap_1a_256")
	crop := randomFrame(rand.New(rand.NewPCG(1, 2)), 256, 256)
	tensor := make([]float32, 3*256*256)
	out := NewBoostCrop(256)
	for b.Loop() {
		sw.PrepareTarget(tensor, crop, 0)
		sw.FinishOutput(out, tensor, 0)
	}
}

// TestWarpFace: a face whose five points sit exactly on the arcface_128 template at 256 is
// copied unchanged into the crop, and the returned map is the identity.
func TestWarpFace(t *testing.T) {
	frame := randomFrame(rand.New(rand.NewPCG(40, 41)), 256, 256)
	five, _ := ArcFace128.Points(256)
	crop := raster.New(256, 256)
	m, err := WarpFace(crop, frame, five, ArcFace128)
	if err != nil {
		t.Fatal(err)
	}
	if !near(m.A, 1, 1e-9) || !near(m.B, 0, 1e-9) || !near(m.C, 0, 1e-6) || !near(m.F, 0, 1e-6) {
		t.Fatalf("map %+v, want identity", m)
	}
	for i := range crop.Pix {
		if crop.Pix[i] != frame.Pix[i] {
			t.Fatalf("sample %d = %d, want %d", i, crop.Pix[i], frame.Pix[i])
		}
	}
	if _, err := WarpFace(crop, frame, five, "arcface_999"); err == nil {
		t.Error("unknown template accepted")
	}
}
