package raster

import "image"

// Membrane is a smooth correction field for seamless pasting: it takes the difference
// dst − src where a weight mask says the two should agree (the band at a paste's edge) and
// spreads it over the whole region by push-pull interpolation (Gortler et al.'s pyramid
// fill) on a coarse grid, then adds it to src. After Add, src agrees with dst along the
// band, so blending the two there shows neither a colour step nor a halo, and the field
// carries the low-frequency light (a darker side, a warmer cast) into the interior. It is
// the cheap twin of a Poisson membrane: a few coarse cells per face instead of a solve over
// every pixel. It owns its buffers, so it stops allocating once it has seen its largest
// region. The zero value is ready.
type Membrane struct {
	rect image.Rectangle
	// origin is the grid's top-left corner: r.Min moved back onto the frame's lattice of
	// cells, so that a rectangle moved by a pixel (a still face's bounds rounding the other
	// way) keeps the same cells and the same field, where a grid starting at r.Min would
	// regroup every cell's pixels and make the face's light jump from frame to frame.
	origin image.Point
	cell   int
	levels []membraneLevel
	row    []float32 // one pixel row of level 0, interpolated between grid rows
}

// membraneLevel is one pyramid level: per cell a weight and a colour (premultiplied by
// the weight until the level is normalised).
type membraneLevel struct {
	w, h int
	wt   []float32
	val  []float32 // 3 per cell
}

func (l *membraneLevel) reset(w, h int) {
	l.w, l.h = w, h
	if cap(l.wt) < w*h {
		l.wt = make([]float32, w*h)
		l.val = make([]float32, 3*w*h)
	}
	l.wt, l.val = l.wt[:w*h], l.val[:3*w*h]
	clear(l.wt)
	clear(l.val)
}

// Fit builds the field over r with cells of cell×cell pixels, on the lattice of cells from the
// frame's origin, from dst − src weighted by wt (wt outside its Rect, src or dst counts as 0). It reports false, leaving no field, when
// the weights are all zero.
func (mb *Membrane) Fit(r image.Rectangle, cell int, dst *Image, src *FloatImage, wt *Mask) bool {
	cell = max(cell, 1)
	mb.rect, mb.cell = r, cell
	mb.origin = image.Pt(floorMultiple(r.Min.X, cell), floorMultiple(r.Min.Y, cell))
	o := mb.origin
	gw, gh := (r.Max.X-o.X+cell-1)/cell, (r.Max.Y-o.Y+cell-1)/cell
	if gw <= 0 || gh <= 0 {
		return false
	}
	n := 1
	for w, h := gw, gh; w > 1 || h > 1; w, h = (w+1)/2, (h+1)/2 {
		n++
	}
	if len(mb.levels) < n {
		mb.levels = append(mb.levels, make([]membraneLevel, n-len(mb.levels))...)
	}
	mb.levels = mb.levels[:n]
	l0 := &mb.levels[0]
	l0.reset(gw, gh)
	in := r.Intersect(wt.Rect).Intersect(src.Rect).Intersect(dst.Bounds())
	var total float32
	for y := in.Min.Y; y < in.Max.Y; y++ {
		wrow := wt.Pix[(y-wt.Rect.Min.Y)*wt.Stride+in.Min.X-wt.Rect.Min.X:][:in.Dx()]
		srow := src.Pix[(y-src.Rect.Min.Y)*src.Stride+3*(in.Min.X-src.Rect.Min.X):][:3*in.Dx()]
		drow := dst.Pix[y*dst.Stride+3*in.Min.X:][:3*in.Dx()]
		cy := (y - o.Y) / cell
		for i, w := range wrow {
			if !(w > 0) {
				continue
			}
			c := cy*gw + (in.Min.X+i-o.X)/cell
			l0.wt[c] += w
			v := l0.val[3*c : 3*c+3 : 3*c+3]
			s := srow[3*i : 3*i+3 : 3*i+3]
			d := drow[3*i : 3*i+3 : 3*i+3]
			v[0] += w * (float32(d[0]) - s[0])
			v[1] += w * (float32(d[1]) - s[1])
			v[2] += w * (float32(d[2]) - s[2])
			total += w
		}
	}
	if !(total > 0) {
		return false
	}
	// A cell whose weight reaches a quarter of its area counts as fully known; below that
	// its own value is mixed with the value interpolated from coarser levels.
	mb.push(float32(cell*cell) / 4)
	mb.pull()
	return true
}

// floorMultiple is the largest multiple of m (> 0) not above v.
func floorMultiple(v, m int) int {
	q := v / m
	if v%m != 0 && v < 0 {
		q--
	}
	return q * m
}

// push normalises level 0 (weights saturating at full) and builds each coarser level from
// the 2×2 cells below it.
func (mb *Membrane) push(full float32) {
	norm := func(l *membraneLevel, full float32) {
		for c, w := range l.wt {
			if w > 0 {
				v := l.val[3*c : 3*c+3 : 3*c+3]
				v[0], v[1], v[2] = v[0]/w, v[1]/w, v[2]/w
				l.wt[c] = min(w/full, 1)
			}
		}
	}
	norm(&mb.levels[0], full)
	for k := 1; k < len(mb.levels); k++ {
		f, c := &mb.levels[k-1], &mb.levels[k]
		c.reset((f.w+1)/2, (f.h+1)/2)
		for y := range f.h {
			for x := range f.w {
				i := y*f.w + x
				w := f.wt[i]
				if w == 0 {
					continue
				}
				j := (y/2)*c.w + x/2
				c.wt[j] += w
				c.val[3*j] += w * f.val[3*i]
				c.val[3*j+1] += w * f.val[3*i+1]
				c.val[3*j+2] += w * f.val[3*i+2]
			}
		}
		norm(c, 1)
	}
}

// pull fills each level from the finer end down: a cell keeps its own value in proportion to
// its weight and takes the rest from the bilinear interpolation of the level above.
func (mb *Membrane) pull() {
	for k := len(mb.levels) - 2; k >= 0; k-- {
		f, c := &mb.levels[k], &mb.levels[k+1]
		for y := range f.h {
			for x := range f.w {
				i := y*f.w + x
				w := f.wt[i]
				if w >= 1 {
					continue
				}
				var u [3]float32
				c.sample((float32(x)+0.5)/2-0.5, (float32(y)+0.5)/2-0.5, &u)
				v := f.val[3*i : 3*i+3 : 3*i+3]
				v[0] = w*v[0] + (1-w)*u[0]
				v[1] = w*v[1] + (1-w)*u[1]
				v[2] = w*v[2] + (1-w)*u[2]
				f.wt[i] = 1
			}
		}
	}
}

// sample is the bilinear interpolation of the level's values at cell coordinates (x, y)
// (cell centres at whole numbers), clamped to the grid.
func (l *membraneLevel) sample(x, y float32, out *[3]float32) {
	x = min(max(x, 0), float32(l.w-1))
	y = min(max(y, 0), float32(l.h-1))
	x0, y0 := int(x), int(y)
	x1, y1 := min(x0+1, l.w-1), min(y0+1, l.h-1)
	fx, fy := x-float32(x0), y-float32(y0)
	a, b := l.val[3*(y0*l.w+x0):], l.val[3*(y0*l.w+x1):]
	c, d := l.val[3*(y1*l.w+x0):], l.val[3*(y1*l.w+x1):]
	for k := range 3 {
		top := a[k] + (b[k]-a[k])*fx
		bot := c[k] + (d[k]-c[k])*fx
		out[k] = top + (bot-top)*fy
	}
}

// Shift adds d to the field everywhere, as fitting it to dst + d would (the pyramid fill
// spreads a constant as it is); nothing without a field.
func (mb *Membrane) Shift(d [3]float32) {
	if len(mb.levels) == 0 || d == [3]float32{} {
		return
	}
	v := mb.levels[0].val
	for c := 0; c < len(v); c += 3 {
		v[c], v[c+1], v[c+2] = v[c]+d[0], v[c+1]+d[1], v[c+2]+d[2]
	}
}

// Add adds the field, bilinearly interpolated between cell centres, to f wherever m > 0
// (inside the rectangle Fit was given), scaled by 1 − (1 − inner)·m⁴ (m clamped to 0…1):
// whole where the mask fades (the paste's edge band, where src must meet dst), down to
// inner where the mask is whole. inner 1 adds the whole field everywhere; a smaller one
// keeps more of src's own shading inside a pasted face, whose features the field (fitted
// on the band, at the band's resolution) would otherwise blend with dst's.
func (mb *Membrane) Add(f *FloatImage, m *Mask, inner float32) {
	if len(mb.levels) == 0 {
		return
	}
	l := &mb.levels[0]
	in := mb.rect.Intersect(f.Rect).Intersect(m.Rect)
	inv := 1 / float32(mb.cell)
	cut := 1 - inner
	if cap(mb.row) < 3*l.w {
		mb.row = make([]float32, 3*l.w)
	}
	row := mb.row[:3*l.w]
	for y := in.Min.Y; y < in.Max.Y; y++ {
		mrow := m.Pix[(y-m.Rect.Min.Y)*m.Stride+in.Min.X-m.Rect.Min.X:][:in.Dx()]
		frow := f.Pix[(y-f.Rect.Min.Y)*f.Stride+3*(in.Min.X-f.Rect.Min.X):][:3*in.Dx()]
		// The grid's rows interpolated to this pixel row, then along it per pixel.
		cy := min(max((float32(y-mb.origin.Y)+0.5)*inv-0.5, 0), float32(l.h-1))
		y0 := int(cy)
		y1, fy := min(y0+1, l.h-1), cy-float32(y0)
		a, b := l.val[3*y0*l.w:][:3*l.w], l.val[3*y1*l.w:][:3*l.w]
		for k := range row {
			row[k] = a[k] + (b[k]-a[k])*fy
		}
		for i, w := range mrow {
			if !(w > 0) {
				continue
			}
			cx := min(max((float32(in.Min.X+i-mb.origin.X)+0.5)*inv-0.5, 0), float32(l.w-1))
			x0 := int(cx)
			x1, fx := min(x0+1, l.w-1), cx-float32(x0)
			p, u, v := frow[3*i:3*i+3:3*i+3], row[3*x0:3*x0+3:3*x0+3], row[3*x1:3*x1+3:3*x1+3]
			w = min(w, 1)
			w *= w
			g := 1 - cut*w*w
			p[0] = clamp255(p[0] + g*(u[0]+(v[0]-u[0])*fx))
			p[1] = clamp255(p[1] + g*(u[1]+(v[1]-u[1])*fx))
			p[2] = clamp255(p[2] + g*(u[2]+(v[2]-u[2])*fx))
		}
	}
}
