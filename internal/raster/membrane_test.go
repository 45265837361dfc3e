package raster

import (
	"image"
	"math"
	"math/rand/v2"
	"testing"
)

// membraneRef is push-pull written out in float64 on plain grids, level by level, and the
// field sampled bilinearly at every pixel: the slow twin of Membrane.Fit and Add. It
// returns the field per pixel of r (3 values each) and whether there was any weight. The grid's
// cells are those of the frame's lattice (multiples of cell from (0, 0)) that r touches.
func membraneRef(r image.Rectangle, cell int, dst *Image, src *FloatImage, wt *Mask) ([][3]float64, bool) {
	type grid struct {
		w, h int
		a    []float64 // confidence 0…1
		v    [][3]float64
	}
	at := func(g *grid, x, y float64) [3]float64 {
		x = math.Min(math.Max(x, 0), float64(g.w-1))
		y = math.Min(math.Max(y, 0), float64(g.h-1))
		x0, y0 := int(x), int(y)
		x1, y1 := min(x0+1, g.w-1), min(y0+1, g.h-1)
		fx, fy := x-float64(x0), y-float64(y0)
		var out [3]float64
		for k := range 3 {
			top := g.v[y0*g.w+x0][k]*(1-fx) + g.v[y0*g.w+x1][k]*fx
			bot := g.v[y1*g.w+x0][k]*(1-fx) + g.v[y1*g.w+x1][k]*fx
			out[k] = top*(1-fy) + bot*fy
		}
		return out
	}
	o := r.Min
	for o.X%cell != 0 {
		o.X--
	}
	for o.Y%cell != 0 {
		o.Y--
	}
	gw, gh := (r.Max.X-o.X+cell-1)/cell, (r.Max.Y-o.Y+cell-1)/cell
	g0 := &grid{w: gw, h: gh, a: make([]float64, gw*gh), v: make([][3]float64, gw*gh)}
	var total float64
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			p := image.Pt(x, y)
			if !p.In(wt.Rect) || !p.In(src.Rect) || !p.In(dst.Bounds()) {
				continue
			}
			w := float64(wt.At(x, y))
			if !(w > 0) {
				continue
			}
			c := ((y-o.Y)/cell)*gw + (x-o.X)/cell
			d0, d1, d2 := dst.At(x, y)
			s := src.Pix[(y-src.Rect.Min.Y)*src.Stride+3*(x-src.Rect.Min.X):]
			g0.a[c] += w
			g0.v[c][0] += w * (float64(d0) - float64(s[0]))
			g0.v[c][1] += w * (float64(d1) - float64(s[1]))
			g0.v[c][2] += w * (float64(d2) - float64(s[2]))
			total += w
		}
	}
	if total == 0 {
		return nil, false
	}
	norm := func(g *grid, full float64) {
		for c := range g.a {
			if g.a[c] > 0 {
				for k := range 3 {
					g.v[c][k] /= g.a[c]
				}
				g.a[c] = math.Min(g.a[c]/full, 1)
			}
		}
	}
	norm(g0, float64(cell*cell)/4)
	levels := []*grid{g0}
	for g := g0; g.w > 1 || g.h > 1; {
		c := &grid{w: (g.w + 1) / 2, h: (g.h + 1) / 2}
		c.a, c.v = make([]float64, c.w*c.h), make([][3]float64, c.w*c.h)
		for y := range g.h {
			for x := range g.w {
				j := (y/2)*c.w + x/2
				c.a[j] += g.a[y*g.w+x]
				for k := range 3 {
					c.v[j][k] += g.a[y*g.w+x] * g.v[y*g.w+x][k]
				}
			}
		}
		norm(c, 1)
		levels = append(levels, c)
		g = c
	}
	for l := len(levels) - 2; l >= 0; l-- {
		f, c := levels[l], levels[l+1]
		for y := range f.h {
			for x := range f.w {
				i := y*f.w + x
				if f.a[i] >= 1 {
					continue
				}
				u := at(c, (float64(x)+0.5)/2-0.5, (float64(y)+0.5)/2-0.5)
				for k := range 3 {
					f.v[i][k] = f.a[i]*f.v[i][k] + (1-f.a[i])*u[k]
				}
				f.a[i] = 1
			}
		}
	}
	field := make([][3]float64, r.Dx()*r.Dy())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			field[(y-r.Min.Y)*r.Dx()+x-r.Min.X] = at(g0, (float64(x-o.X)+0.5)/float64(cell)-0.5, (float64(y-o.Y)+0.5)/float64(cell)-0.5)
		}
	}
	return field, true
}

func TestMembraneMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	var mb Membrane
	for iter := range 150 {
		dst := randImage(rng, 60, 50)
		r := image.Rect(rng.IntN(20)-5, rng.IntN(20)-5, 0, 0)
		r.Max = r.Min.Add(image.Pt(1+rng.IntN(50), 1+rng.IntN(45)))
		var src FloatImage
		src.Reset(r.Inset(-rng.IntN(3)))
		for i := range src.Pix {
			src.Pix[i] = rng.Float32() * 255
		}
		wt := randMask(rng, r.Inset(rng.IntN(6)))
		if rng.IntN(3) == 0 { // mostly empty: a thin band, as at a face's edge
			for i := range wt.Pix {
				if rng.IntN(10) > 0 {
					wt.Pix[i] = 0
				}
			}
		}
		m := randMask(rng, r)
		cell := 1 + rng.IntN(9)
		want, wantOK := membraneRef(r, cell, dst, &src, wt)
		before := append([]float32(nil), src.Pix...)
		ok := mb.Fit(r, cell, dst, &src, wt)
		if ok != wantOK {
			t.Fatalf("iter %d: Fit reports %v, reference %v", iter, ok, wantOK)
		}
		if !ok {
			continue
		}
		inner := float32(1)
		if iter%2 == 1 {
			inner = rng.Float32()
		}
		mb.Add(&src, m, inner)
		for y := src.Rect.Min.Y; y < src.Rect.Max.Y; y++ {
			for x := src.Rect.Min.X; x < src.Rect.Max.X; x++ {
				i := (y-src.Rect.Min.Y)*src.Stride + 3*(x-src.Rect.Min.X)
				in := image.Pt(x, y).In(r) && m.At(x, y) > 0
				for k := range 3 {
					exp := float64(before[i+k])
					if in {
						w := math.Min(float64(m.At(x, y)), 1)
						g := 1 - (1-float64(inner))*math.Pow(w, 4)
						exp = math.Min(math.Max(exp+g*want[(y-r.Min.Y)*r.Dx()+x-r.Min.X][k], 0), 255)
					}
					if d := math.Abs(float64(src.Pix[i+k]) - exp); d > 2e-3 {
						t.Fatalf("iter %d (%v, cell %d): (%d,%d) channel %d: fast %v, reference %v", iter, r, cell, x, y, k, src.Pix[i+k], exp)
					}
				}
			}
		}
	}
}

// The field belongs to the frame's lattice of cells, not to the rectangle it is fitted over: a
// rectangle whose corner moves within a cell (a still face's bounds rounding to the next pixel
// from one frame to the next) gives the same field, bit for bit, where a grid from the corner
// regroups every cell's pixels and the face's light jumps (on a still clip, 0.57 grey levels
// of the face region in one frame).
func TestMembraneFieldStaysWithTheFrame(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	dst := randImage(rng, 90, 80)
	var src FloatImage
	src.Reset(image.Rect(0, 0, 90, 80))
	for i := range src.Pix {
		src.Pix[i] = rng.Float32() * 255
	}
	wt := randMask(rng, image.Rect(16, 14, 70, 64)) // inside every rectangle below
	m := randMask(rng, image.Rect(0, 0, 90, 80))
	const cell = 4
	var first []float32
	for _, r := range []image.Rectangle{image.Rect(12, 8, 75, 70), image.Rect(13, 9, 75, 70), image.Rect(15, 11, 76, 69)} {
		var mb Membrane
		out := FloatImage{}
		out.Reset(src.Rect)
		copy(out.Pix, src.Pix)
		if !mb.Fit(r, cell, dst, &src, wt) {
			t.Fatal("Fit found no weight")
		}
		mb.Add(&out, m, 0.5)
		// The pixels every rectangle covers.
		var got []float32
		for y := 11; y < 69; y++ {
			got = append(got, out.Pix[y*out.Stride+3*15:y*out.Stride+3*75]...)
		}
		if first == nil {
			first = got
			continue
		}
		for i := range got {
			if got[i] != first[i] {
				t.Fatalf("fitted over %v, the field at (%d, %d) is %v, over %v it was %v", r, 15+i/3%60, 11+i/180, got[i], image.Rect(12, 8, 75, 70), first[i])
			}
		}
	}
}

// A constant difference along the band becomes the same constant everywhere: the source
// then matches the target's colour exactly, inside as well as at the edge.
func TestMembraneSpreadsConstant(t *testing.T) {
	r := image.Rect(0, 0, 120, 100)
	dst := New(120, 100)
	var src FloatImage
	src.Reset(r)
	for i := range dst.Pix {
		dst.Pix[i] = uint8(100 + 10*(i%3))
		src.Pix[i] = float32(80 + 5*(i%3)) // differences 20, 25, 30
	}
	var band, m Mask
	band.Reset(r)
	m.Reset(r)
	for y := range 100 {
		for x := range 120 {
			m.Pix[y*120+x] = 1
			if x < 6 || y < 6 || x >= 114 || y >= 94 {
				band.Pix[y*120+x] = 1
			}
		}
	}
	var mb Membrane
	if !mb.Fit(r, 4, dst, &src, &band) {
		t.Fatal("Fit found no weight")
	}
	mb.Add(&src, &m, 1)
	for i, v := range src.Pix {
		if want := float32(100 + 10*(i%3)); math.Abs(float64(v-want)) > 1e-3 {
			t.Fatalf("pixel %d channel %d: %v, want %v", i/3, i%3, v, want)
		}
	}
}

func morphRef(m *Mask, in func(x, y int) bool) []float32 {
	out := make([]float32, len(m.Pix))
	for y := m.Rect.Min.Y; y < m.Rect.Max.Y; y++ {
		for x := m.Rect.Min.X; x < m.Rect.Max.X; x++ {
			if in(x, y) {
				out[(y-m.Rect.Min.Y)*m.Stride+x-m.Rect.Min.X] = 1
			}
		}
	}
	return out
}

func TestMorphologyMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	var tmp Mask
	for iter := range 200 {
		r := image.Rect(rng.IntN(10)-5, rng.IntN(10)-5, 0, 0)
		r.Max = r.Min.Add(image.Pt(1+rng.IntN(30), 1+rng.IntN(30)))
		m := randMask(rng, r)
		set := func(x, y int) bool { return image.Pt(x, y).In(r) && m.At(x, y) > 0.5 }
		need, rad := 1+rng.IntN(9), rng.IntN(4)
		wantMaj := morphRef(m, func(x, y int) bool {
			n := 0
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					if set(x+dx, y+dy) {
						n++
					}
				}
			}
			return n >= need
		})
		wantDil := morphRef(m, func(x, y int) bool {
			for dy := -rad; dy <= rad; dy++ {
				for dx := -rad; dx <= rad; dx++ {
					if set(x+dx, y+dy) {
						return true
					}
				}
			}
			return false
		})
		d := &Mask{}
		d.Reset(r)
		copy(d.Pix, m.Pix)
		if rad == 0 { // Dilate(0) leaves the mask as it is, values and all
			wantDil = append([]float32(nil), m.Pix...)
		}
		d.Dilate(rad, &tmp)
		m.Majority(need, &tmp)
		for i := range m.Pix {
			if m.Pix[i] != wantMaj[i] {
				t.Fatalf("iter %d: Majority(%d) pixel %d: %v, reference %v", iter, need, i, m.Pix[i], wantMaj[i])
			}
			if d.Pix[i] != wantDil[i] {
				t.Fatalf("iter %d: Dilate(%d) pixel %d: %v, reference %v", iter, rad, i, d.Pix[i], wantDil[i])
			}
		}
	}
}

// Shift(d) is the field fitted to dst moved by d: a varying difference on the band, fitted
// once to dst and once to dst + d, adds the same to every pixel.
func TestMembraneShiftIsAFitToAMovedDst(t *testing.T) {
	r := image.Rect(0, 0, 90, 70)
	dst, moved := New(90, 70), New(90, 70)
	d := [3]float32{4, -3, 2}
	var src, a, b FloatImage
	src.Reset(r)
	var band, m Mask
	band.Reset(r)
	m.Reset(r)
	for y := range 70 {
		for x := range 90 {
			for c := range 3 {
				i := 3*(y*90+x) + c
				dst.Pix[i] = uint8(90 + (x*3+y*5+c*7)%40)
				moved.Pix[i] = uint8(float32(dst.Pix[i]) + d[c])
				src.Pix[i] = float32(100 + (x+c)%9)
			}
			m.Pix[y*90+x] = 0.5
			if x < 8 || y < 8 || x >= 82 || y >= 62 {
				band.Pix[y*90+x] = 1
			}
		}
	}
	a.Reset(r)
	b.Reset(r)
	copy(a.Pix, src.Pix)
	copy(b.Pix, src.Pix)
	var mb Membrane
	mb.Fit(r, 5, dst, &src, &band)
	mb.Shift(d)
	mb.Add(&a, &m, 0.5)
	mb.Fit(r, 5, moved, &src, &band)
	mb.Add(&b, &m, 0.5)
	for i := range a.Pix {
		if math.Abs(float64(a.Pix[i]-b.Pix[i])) > 1e-3 {
			t.Fatalf("pixel %d channel %d: shifted %v, fitted to the moved dst %v", i/3, i%3, a.Pix[i], b.Pix[i])
		}
	}
}
