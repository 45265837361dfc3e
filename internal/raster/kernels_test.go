package raster

import (
	"image"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/geom"
)

func randImage(rng *rand.Rand, w, h int) *Image {
	m := New(w, h)
	for i := range m.Pix {
		m.Pix[i] = uint8(rng.IntN(256))
	}
	return m
}

// randCoord returns coordinates that often sit exactly on pixel centres or on the
// fixed-point grid, where fill-rule ties happen.
func randCoord(rng *rand.Rand, lo, hi float64) float64 {
	v := lo + rng.Float64()*(hi-lo)
	switch rng.IntN(3) {
	case 0:
		return math.Round(v)
	case 1:
		return math.Round(v*sub) / sub
	}
	return v
}

func TestWarpTrianglesMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 300 {
		src := randImage(rng, 1+rng.IntN(40), 1+rng.IntN(40))
		n := 3 + rng.IntN(8)
		sp, dp := make([]geom.Pt, n), make([]geom.Pt, n)
		for i := range n {
			sp[i] = geom.Pt{X: randCoord(rng, -5, 45), Y: randCoord(rng, -5, 45)}
			dp[i] = geom.Pt{X: randCoord(rng, -10, 50), Y: randCoord(rng, -10, 50)}
		}
		tris := make([][3]int, 1+rng.IntN(8))
		for i := range tris {
			tris[i] = [3]int{rng.IntN(n), rng.IntN(n), rng.IntN(n)} // duplicates give degenerate ones
		}
		r := image.Rect(rng.IntN(20)-10, rng.IntN(20)-10, rng.IntN(30)+10, rng.IntN(30)+10)
		var fd, rd FloatImage
		var fc, rc Mask
		fd.Reset(r)
		rd.Reset(r)
		fc.Reset(r)
		rc.Reset(r)
		WarpTriangles(&fd, &fc, src, sp, dp, tris)
		warpRef(&rd, &rc, src, sp, dp, tris)
		for i := range fc.Pix {
			if fc.Pix[i] != rc.Pix[i] {
				t.Fatalf("iter %d: coverage differs at pixel %d: fast %v, reference %v", iter, i, fc.Pix[i], rc.Pix[i])
			}
		}
		for i := range fd.Pix {
			if d := math.Abs(float64(fd.Pix[i] - rd.Pix[i])); d > 0.05 {
				t.Fatalf("iter %d: value differs at %d: fast %v, reference %v", iter, i, fd.Pix[i], rd.Pix[i])
			}
		}
	}
}

// A mesh of a rectangle must cover every pixel inside the rectangle exactly once, however
// the vertices fall relative to pixel centres.
func TestWarpTrianglesCoversMeshExactlyOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const g, cell = 6, 7.0 // g×g vertices, rectangle [0, (g-1)·cell]²
	src := randImage(rng, 8, 8)
	for iter := range 50 {
		pts := make([]geom.Pt, g*g)
		for j := range g {
			for i := range g {
				p := geom.Pt{X: float64(i) * cell, Y: float64(j) * cell}
				if i > 0 && i < g-1 && j > 0 && j < g-1 {
					p.X = randCoord(rng, p.X-1, p.X+1) // small enough to keep every quad convex
					p.Y = randCoord(rng, p.Y-1, p.Y+1)
				}
				pts[j*g+i] = p
			}
		}
		var tris [][3]int
		for j := range g - 1 {
			for i := range g - 1 {
				a, b, c, d := j*g+i, j*g+i+1, (j+1)*g+i, (j+1)*g+i+1
				if rng.IntN(2) == 0 {
					tris = append(tris, [3]int{a, b, d}, [3]int{a, d, c})
				} else {
					tris = append(tris, [3]int{a, b, c}, [3]int{b, d, c})
				}
			}
		}
		r := image.Rect(-2, -2, 40, 40)
		count := make([]int, r.Dx()*r.Dy())
		var dst FloatImage
		var cov Mask
		for _, tr := range tris {
			dst.Reset(r)
			cov.Reset(r)
			WarpTriangles(&dst, &cov, src, pts, pts, [][3]int{tr})
			for i, v := range cov.Pix {
				count[i] += int(v)
			}
		}
		side := int((g - 1) * cell)
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				c := count[(y-r.Min.Y)*r.Dx()+x-r.Min.X]
				inside := x > 0 && y > 0 && x < side && y < side
				outside := x < 0 || y < 0 || x > side || y > side
				if c > 1 || (inside && c != 1) || (outside && c != 0) {
					t.Fatalf("iter %d: pixel (%d,%d) covered %d times", iter, x, y, c)
				}
			}
		}
	}
}

func TestWarpTrianglesIdentityCopiesSource(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	src := randImage(rng, 30, 20)
	// The triangles run along pixel borders, so every pixel centre is strictly inside.
	pts := []geom.Pt{{X: -0.5, Y: -0.5}, {X: 29.5, Y: -0.5}, {X: 29.5, Y: 19.5}, {X: -0.5, Y: 19.5}}
	var dst FloatImage
	var cov Mask
	dst.Reset(src.Bounds())
	cov.Reset(src.Bounds())
	WarpTriangles(&dst, &cov, src, pts, pts, [][3]int{{0, 1, 2}, {0, 2, 3}})
	for y := range 20 {
		for x := range 30 {
			if cov.At(x, y) != 1 {
				t.Fatalf("pixel (%d,%d) not covered", x, y)
			}
			for c := range 3 {
				got, want := dst.Pix[y*dst.Stride+3*x+c], float32(src.Pix[y*src.Stride+3*x+c])
				if math.Abs(float64(got-want)) > 1e-3 {
					t.Fatalf("pixel (%d,%d,%d) = %v, source %v", x, y, c, got, want)
				}
			}
		}
	}
}

func TestWarpTrianglesToleratesNonsense(t *testing.T) {
	src := New(4, 4)
	nan, inf := math.NaN(), math.Inf(1)
	pts := []geom.Pt{{X: nan, Y: 0}, {X: 1e300, Y: -1e300}, {X: inf, Y: 3}, {X: 1, Y: 1}, {X: 1, Y: 1}, {X: 5, Y: 5}}
	var dst FloatImage
	var cov Mask
	dst.Reset(image.Rect(0, 0, 10, 10))
	cov.Reset(dst.Rect)
	WarpTriangles(&dst, &cov, src, pts, pts, [][3]int{{0, 1, 2}, {1, 3, 5}, {3, 4, 5}, {0, 3, 5}, {1, 2, 3}})
	WarpTriangles(&dst, &cov, New(0, 0), pts, pts, [][3]int{{1, 3, 5}})
}

func TestFillConvexMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for iter := range 500 {
		n := 3 + rng.IntN(10)
		cx, cy := randCoord(rng, -5, 35), randCoord(rng, -5, 35)
		rx, ry := 0.5+rng.Float64()*25, 0.5+rng.Float64()*25
		angles := make([]float64, n)
		for i := range angles {
			angles[i] = rng.Float64() * 2 * math.Pi
		}
		sortFloats(angles)
		poly := make([]geom.Pt, n)
		for i, a := range angles {
			poly[i] = geom.Pt{X: randCoord(rng, cx+rx*math.Cos(a), cx+rx*math.Cos(a)), Y: cy + ry*math.Sin(a)}
		}
		if rng.IntN(2) == 0 { // either orientation
			for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
				poly[i], poly[j] = poly[j], poly[i]
			}
		}
		r := image.Rect(rng.IntN(10)-5, rng.IntN(10)-5, 20+rng.IntN(20), 20+rng.IntN(20))
		var fast, ref Mask
		fast.Reset(r)
		ref.Reset(r)
		FillConvex(&fast, poly, 0.75)
		fillConvexRef(&ref, poly, 0.75)
		for i := range fast.Pix {
			if fast.Pix[i] != ref.Pix[i] {
				t.Fatalf("iter %d: pixel %d: fast %v, reference %v (polygon %v)", iter, i, fast.Pix[i], ref.Pix[i], poly)
			}
		}
	}
}

func sortFloats(a []float64) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func TestFillConvexFillsSquare(t *testing.T) {
	var m Mask
	m.Reset(image.Rect(0, 0, 10, 10))
	FillConvex(&m, []geom.Pt{{X: 2, Y: 2}, {X: 6, Y: 2}, {X: 6, Y: 6}, {X: 2, Y: 6}}, 1)
	var n int
	for _, v := range m.Pix {
		n += int(v)
	}
	// Pixel centres 2…6 on a closed square: the top-left rule keeps two sides, so 4×4.
	if n != 16 {
		t.Fatalf("square [2,6]² filled %d pixels, want 16", n)
	}
	FillConvex(&m, []geom.Pt{{X: 0, Y: 0}, {X: 5, Y: 5}, {X: 9, Y: 9}}, 5) // collinear: nothing
	FillConvex(&m, []geom.Pt{{X: math.NaN(), Y: 0}, {X: 5, Y: 5}, {X: 0, Y: 9}}, 5)
	for _, v := range m.Pix {
		if v > 1 {
			t.Fatal("a degenerate polygon filled pixels")
		}
	}
}

func randMask(rng *rand.Rand, r image.Rectangle) *Mask {
	m := &Mask{}
	m.Reset(r)
	for i := range m.Pix {
		if rng.IntN(3) > 0 {
			m.Pix[i] = rng.Float32()
		}
	}
	return m
}

func TestBlurMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var b Blur
	for iter := range 120 {
		r := image.Rect(rng.IntN(10)-5, rng.IntN(10)-5, 0, 0)
		r.Max = r.Min.Add(image.Pt(1+rng.IntN(30), 1+rng.IntN(30)))
		m := randMask(rng, r)
		sigma := 0.3 + rng.Float64()*5
		want := blurRef(m, sigma)
		b.Apply(m, sigma)
		for i := range m.Pix {
			if d := math.Abs(float64(m.Pix[i] - want.Pix[i])); d > 1e-5 {
				t.Fatalf("iter %d (σ=%.2f, %v): pixel %d: fast %v, reference %v", iter, sigma, r, i, m.Pix[i], want.Pix[i])
			}
		}
	}
}

// Far from the borders a blur keeps the total mass and smooths a step into the Gaussian
// CDF: value 0.5 on the edge, Φ(−1) one sigma outside it.
func TestBlurFeathersStep(t *testing.T) {
	var m Mask
	m.Reset(image.Rect(0, 0, 100, 41))
	for y := range 41 {
		for x := 50; x < 100; x++ {
			m.Pix[y*m.Stride+x] = 1
		}
	}
	var b Blur
	b.Apply(&m, 4)
	// The step lies between pixels 49 and 50, i.e. at 49.5; pixel 45.5 is one σ outside.
	at := func(x int) float64 { return float64(m.At(x, 20)) }
	if math.Abs((at(49)+at(50))/2-0.5) > 1e-3 {
		t.Fatalf("edge value %v, want 0.5", (at(49)+at(50))/2)
	}
	if phi := 0.5 * math.Erfc(1/math.Sqrt2); math.Abs((at(45)+at(46))/2-phi) > 0.01 {
		t.Fatalf("one sigma out: %v, want about %v", (at(45)+at(46))/2, phi)
	}
	b.Apply(&m, 0) // no-op
}

func TestColourStatsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for iter := range 100 {
		img := randImage(rng, 5+rng.IntN(30), 5+rng.IntN(30))
		mr := image.Rect(rng.IntN(10)-5, rng.IntN(10)-5, rng.IntN(40), rng.IntN(40))
		m := randMask(rng, mr)
		got := StatsImage(img, m)
		want := statsRef(func(x, y int) [3]float64 {
			r, g, b := img.At(x, y)
			return [3]float64{float64(r), float64(g), float64(b)}
		}, m, img.Bounds())
		compareStats(t, iter, got, want)

		var f FloatImage
		f.Reset(image.Rect(rng.IntN(6)-3, rng.IntN(6)-3, 10+rng.IntN(20), 10+rng.IntN(20)))
		for i := range f.Pix {
			f.Pix[i] = rng.Float32() * 255
		}
		got = StatsFloat(&f, m)
		want = statsRef(func(x, y int) [3]float64 {
			i := (y-f.Rect.Min.Y)*f.Stride + 3*(x-f.Rect.Min.X)
			return [3]float64{float64(f.Pix[i]), float64(f.Pix[i+1]), float64(f.Pix[i+2])}
		}, m, f.Rect)
		compareStats(t, iter, got, want)
	}
}

func compareStats(t *testing.T, iter int, got, want ColourStats) {
	t.Helper()
	if math.Abs(got.Weight-want.Weight) > 1e-6*math.Max(1, want.Weight) {
		t.Fatalf("iter %d: weight %v, reference %v", iter, got.Weight, want.Weight)
	}
	for c := range 3 {
		if math.Abs(got.Mean[c]-want.Mean[c]) > 1e-3 || math.Abs(got.Std[c]-want.Std[c]) > 1e-2 {
			t.Fatalf("iter %d channel %d: mean %v std %v, reference mean %v std %v",
				iter, c, got.Mean[c], got.Std[c], want.Mean[c], want.Std[c])
		}
	}
}

func TestTransferColourMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for iter := range 200 {
		var f FloatImage
		f.Reset(image.Rect(rng.IntN(6)-3, rng.IntN(6)-3, 10+rng.IntN(20), 10+rng.IntN(20)))
		for i := range f.Pix {
			f.Pix[i] = rng.Float32() * 255
		}
		m := randMask(rng, image.Rect(rng.IntN(10)-5, rng.IntN(10)-5, rng.IntN(40), rng.IntN(40)))
		var from, to ColourStats
		from.Weight, to.Weight = 1, 1
		for c := range 3 {
			from.Mean[c], to.Mean[c] = rng.Float64()*100-50, rng.Float64()*100-50
			from.Std[c], to.Std[c] = rng.Float64()*60, rng.Float64()*60
		}
		from.Mean[0] += 128
		to.Mean[0] += 128
		if iter%10 == 0 {
			from.Std[1] = 0 // flat channel: gain 1
		}
		ref := FloatImage{Pix: append([]float32(nil), f.Pix...), Stride: f.Stride, Rect: f.Rect}
		TransferColour(&f, m, from, to)
		transferRef(&ref, m, from, to)
		for i := range f.Pix {
			if d := math.Abs(float64(f.Pix[i] - ref.Pix[i])); d > 0.02 {
				t.Fatalf("iter %d: value %d: fast %v, reference %v", iter, i, f.Pix[i], ref.Pix[i])
			}
		}
	}
}

// After the transfer, the region measured again has the statistics it was given.
func TestTransferColourReachesTarget(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	var f FloatImage
	f.Reset(image.Rect(0, 0, 60, 60))
	for i := range f.Pix {
		f.Pix[i] = 100 + rng.Float32()*40
	}
	var m Mask
	m.Reset(f.Rect)
	FillConvex(&m, []geom.Pt{{X: 5, Y: 5}, {X: 55, Y: 10}, {X: 40, Y: 55}}, 1)
	from := StatsFloat(&f, &m)
	to := ColourStats{Mean: [3]float64{150, -10, 20}, Std: [3]float64{15, 4, 6}, Weight: 1}
	TransferColour(&f, &m, from, to)
	got := StatsFloat(&f, &m)
	for c := range 3 {
		if math.Abs(got.Mean[c]-to.Mean[c]) > 0.05 || math.Abs(got.Std[c]-to.Std[c]) > 0.05 {
			t.Fatalf("channel %d after transfer: mean %.3f std %.3f, want %.3f, %.3f",
				c, got.Mean[c], got.Std[c], to.Mean[c], to.Std[c])
		}
	}
	if f.Pix[0] < 100 || f.Pix[0] > 140 {
		t.Fatalf("pixel outside the mask changed to %v", f.Pix[0])
	}
}

func TestBlendMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for iter := range 200 {
		frame := randImage(rng, 5+rng.IntN(30), 5+rng.IntN(30))
		var src FloatImage
		src.Reset(image.Rect(rng.IntN(10)-5, rng.IntN(10)-5, rng.IntN(40), rng.IntN(40)))
		for i := range src.Pix {
			src.Pix[i] = rng.Float32()*300 - 20 // out-of-range values must clip
		}
		m := randMask(rng, image.Rect(rng.IntN(10)-5, rng.IntN(10)-5, rng.IntN(40), rng.IntN(40)))
		for i := range m.Pix {
			if rng.IntN(8) == 0 {
				m.Pix[i] = rng.Float32()*3 - 1 // out of [0,1]: clamped
			}
		}
		got, want := frame.Clone(), frame.Clone()
		Blend(got, &src, m)
		blendRef(want, &src, m)
		for i := range got.Pix {
			if d := int(got.Pix[i]) - int(want.Pix[i]); d < -1 || d > 1 {
				t.Fatalf("iter %d: byte %d: fast %d, reference %d", iter, i, got.Pix[i], want.Pix[i])
			}
			x, y := (i%frame.Stride)/3, i/frame.Stride
			if m.At(x, y) <= 0 || !(image.Point{x, y}).In(src.Rect) {
				if got.Pix[i] != frame.Pix[i] {
					t.Fatalf("iter %d: pixel (%d,%d) outside the mask changed", iter, x, y)
				}
			}
		}
	}
}

func TestResizeMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	var z Resizer
	for iter := range 300 {
		src := randImage(rng, 1+rng.IntN(50), 1+rng.IntN(50))
		dst := randImage(rng, 1+rng.IntN(40), 1+rng.IntN(40))
		dr := image.Rect(rng.IntN(10)-5, rng.IntN(10)-5, 0, 0)
		dr.Max = dr.Min.Add(image.Pt(1+rng.IntN(50), 1+rng.IntN(50)))
		if iter%5 == 0 { // OpenCV's 2× shrink
			dr.Max = dr.Min.Add(image.Pt((src.W+1)/2, (src.H+1)/2))
			src = randImage(rng, 2*dr.Dx(), 2*dr.Dy())
		}
		got, want := dst.Clone(), dst.Clone()
		z.Resize(got, dr, src)
		resizeRef(want, dr, src)
		for i := range got.Pix {
			if got.Pix[i] != want.Pix[i] {
				t.Fatalf("iter %d (%dx%d → %v in %dx%d): byte %d: fast %d, reference %d",
					iter, src.W, src.H, dr, dst.W, dst.H, i, got.Pix[i], want.Pix[i])
			}
		}
	}
}

// TestResizeMatchesOpenCV holds Resizer to cv2.resize itself (INTER_LINEAR, Debian's OpenCV
// 4.6, testdata/cv2resize/gen.py): shrinks, growths, FaceFusion's 0.625 detector shrink, the
// exact 2× shrink, one axis only, to a single pixel; whole and into a clipped sub-rectangle.
func TestResizeMatchesOpenCV(t *testing.T) {
	outs, err := filepath.Glob("testdata/cv2resize/*-*x*.png")
	if err != nil || len(outs) < 20 {
		t.Fatalf("testdata/cv2resize: %d goldens (%v): run gen.py there", len(outs), err)
	}
	var z Resizer
	for _, path := range outs {
		name := filepath.Base(path)
		src, err := Load(filepath.Join("testdata/cv2resize", name[:strings.IndexByte(name, '-')]+".png"))
		if err != nil {
			t.Fatal(err)
		}
		want, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		got := New(want.W, want.H)
		z.Resize(got, got.Bounds(), src)
		if i := firstDiff(got, want, got.Bounds()); i >= 0 {
			t.Errorf("%s: byte %d: ours %d, cv2 %d", name, i, got.Pix[i], want.Pix[i])
		}
		// Into a rectangle that sticks out of dst on the left and the top: the part inside is
		// cv2's.
		off := New(want.W, want.H)
		z.Resize(off, image.Rect(-2, -1, want.W-2, want.H-1), src)
		for y := range want.H - 1 {
			for x := range want.W - 2 {
				if !slices.Equal(off.Pix[y*off.Stride+3*x:][:3], want.Pix[(y+1)*want.Stride+3*(x+2):][:3]) {
					t.Fatalf("%s clipped: pixel (%d,%d) is not cv2's (%d,%d)", name, x, y, x+2, y+1)
				}
			}
		}
	}
}

func firstDiff(a, b *Image, r image.Rectangle) int {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := 3 * r.Min.X; x < 3*r.Max.X; x++ {
			if i := y*a.Stride + x; a.Pix[i] != b.Pix[y*b.Stride+x] {
				return i
			}
		}
	}
	return -1
}

func TestResizeSameSizeCopies(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	src := randImage(rng, 33, 17)
	dst := New(33, 17)
	var z Resizer
	z.Resize(dst, dst.Bounds(), src)
	for i := range src.Pix {
		if src.Pix[i] != dst.Pix[i] {
			t.Fatalf("byte %d: %d, source %d", i, dst.Pix[i], src.Pix[i])
		}
	}
}

func TestMaskMul(t *testing.T) {
	var a, b Mask
	a.Reset(image.Rect(0, 0, 4, 4))
	b.Reset(image.Rect(2, 1, 6, 3))
	for i := range a.Pix {
		a.Pix[i] = 1
	}
	for i := range b.Pix {
		b.Pix[i] = 0.5
	}
	a.Mul(&b)
	for y := range 4 {
		for x := range 4 {
			want := float32(0)
			if x >= 2 && y >= 1 && y < 3 {
				want = 0.5
			}
			if a.At(x, y) != want {
				t.Fatalf("(%d,%d) = %v, want %v", x, y, a.At(x, y), want)
			}
		}
	}
}

func TestKernelsDoNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	src := randImage(rng, 200, 200)
	frame := randImage(rng, 320, 240)
	pts := []geom.Pt{{X: 10, Y: 10}, {X: 190, Y: 20}, {X: 100, Y: 190}}
	tris := [][3]int{{0, 1, 2}}
	var dst FloatImage
	var cov, m Mask
	var b Blur
	var z Resizer
	var mb Membrane
	var tmp Mask
	small := New(128, 128)
	r := image.Rect(50, 50, 250, 250)
	allocs := testing.AllocsPerRun(5, func() {
		dst.Reset(r)
		cov.Reset(r)
		m.Reset(r.Inset(-10))
		WarpTriangles(&dst, &cov, src, pts, pts, tris)
		FillConvex(&m, pts, 1)
		b.Apply(&m, 3)
		m.Mul(&cov)
		TransferColour(&dst, &m, StatsFloat(&dst, &m), StatsImage(frame, &m))
		if mb.Fit(r, 6, frame, &dst, &m) {
			mb.Add(&dst, &m, 1)
		}
		cov.Majority(5, &tmp)
		cov.Dilate(2, &tmp)
		Blend(frame, &dst, &m)
		z.Resize(small, image.Rect(0, 16, 128, 112), frame)
	})
	if allocs != 0 {
		t.Fatalf("kernels allocated %v times per call after warm-up", allocs)
	}
}
