package raster

import "image"

// Mask is a one-channel float32 image over Rect, in frame pixel coordinates: the value at
// (x, y) is Pix[(y-Rect.Min.Y)*Stride + x-Rect.Min.X]. Masks hold coverage and feathered
// blend weights; keeping their own origin lets a kernel work on a face's box without
// allocating a frame-sized buffer, and lets the box hang over the frame's edge.
type Mask struct {
	Pix    []float32
	Stride int
	Rect   image.Rectangle
}

// grown is the size a buffer of n values is allocated at: a quarter more, so that a face that
// grows a little from frame to frame (a zoom, a face walking closer) does not cost a fresh
// buffer, and its page faults, every frame.
func grown(n int) int { return n + n/4 }

// Reset makes m an all-zero mask over r, reusing its buffer when it is large enough, so a
// mask kept in a workspace stops allocating once it has seen the largest face.
func (m *Mask) Reset(r image.Rectangle) {
	r = r.Canon()
	n := r.Dx() * r.Dy()
	if cap(m.Pix) < n {
		m.Pix = make([]float32, grown(n))
	}
	m.Pix = m.Pix[:n]
	clear(m.Pix)
	m.Stride, m.Rect = r.Dx(), r
}

// Reuse makes m a mask over r as Reset does, but leaves in it whatever its buffer held: for
// a mask whose every value is written before any is read, so that it costs no clearing.
func (m *Mask) Reuse(r image.Rectangle) {
	r = r.Canon()
	n := r.Dx() * r.Dy()
	if cap(m.Pix) < n {
		m.Pix = make([]float32, grown(n))
	}
	m.Pix = m.Pix[:n]
	m.Stride, m.Rect = r.Dx(), r
}

// At is the value at (x, y), 0 outside Rect.
func (m *Mask) At(x, y int) float32 {
	if !(image.Point{x, y}).In(m.Rect) {
		return 0
	}
	return m.Pix[(y-m.Rect.Min.Y)*m.Stride+x-m.Rect.Min.X]
}

// Mul multiplies m by o pixel by pixel, taking o as 0 outside its Rect.
func (m *Mask) Mul(o *Mask) {
	in := m.Rect.Intersect(o.Rect)
	for y := m.Rect.Min.Y; y < m.Rect.Max.Y; y++ {
		row := m.Pix[(y-m.Rect.Min.Y)*m.Stride:][:m.Rect.Dx()]
		if y < in.Min.Y || y >= in.Max.Y {
			clear(row)
			continue
		}
		a, b := in.Min.X-m.Rect.Min.X, in.Max.X-m.Rect.Min.X
		clear(row[:a])
		clear(row[b:])
		orow := o.Pix[(y-o.Rect.Min.Y)*o.Stride+in.Min.X-o.Rect.Min.X:][:b-a]
		for i, v := range orow {
			row[a+i] *= v
		}
	}
}

// FloatImage is an RGB float32 image over Rect (values nominally 0–255, interleaved like
// Image: (x, y), channel c is Pix[(y-Rect.Min.Y)*Stride + 3*(x-Rect.Min.X) + c]). The warp
// writes here so colour transfer and blending work without an 8-bit round trip.
type FloatImage struct {
	Pix    []float32
	Stride int
	Rect   image.Rectangle
}

// Reset makes f an all-zero image over r, reusing its buffer when it is large enough.
func (f *FloatImage) Reset(r image.Rectangle) {
	r = r.Canon()
	n := 3 * r.Dx() * r.Dy()
	if cap(f.Pix) < n {
		f.Pix = make([]float32, grown(n))
	}
	f.Pix = f.Pix[:n]
	clear(f.Pix)
	f.Stride, f.Rect = 3*r.Dx(), r
}

// Bounds is the image's rectangle, [0,W)×[0,H).
func (m *Image) Bounds() image.Rectangle { return image.Rect(0, 0, m.W, m.H) }
