package raster

import (
	"image"
	"math"
)

// Resizer scales RGB images like OpenCV's cv2.resize with INTER_LINEAR on 8-bit images, bit
// for bit: FaceFusion shrinks every frame into its detector (restrict_frame) and resizes its
// crops into the occluder that way, and a half-level difference there moves boxes and points.
// It keeps its per-column tables and row buffers so that resizing every frame to the same
// size does not allocate. The zero value is ready.
//
// OpenCV's arithmetic (imgproc/src/resize.cpp, baseline SSE2 build as Debian's 4.6): each
// destination column maps to x = float32((dx+0.5)/(dw/sw) − 0.5) (in doubles, then rounded to
// float), its neighbours floor(x) and floor(x)+1 with f = x − floor(x), weights
// round(2048·(1−f)) and round(2048·f), ties to even; a column past either edge takes the edge
// pixel whole (2048, 0). A row of these is an int32 sum per source row. Rows map the same way but keep
// their weights at the edges (both rows clamp to the same one). The vertical pass rounds as
// OpenCV's 8-bit kernel does, its SIMD lanes and its scalar tail alike:
// ((a>>4)·b0>>16 + (c>>4)·b1>>16 + 2) >> 2, not the exact (a·b0 + c·b1 + 2²¹) >> 22.
// OpenCV turns an exact 2× shrink into INTER_AREA, the 2×2 mean (sum+2)>>2: these weights
// (1024 each) give the very same bytes.
type Resizer struct {
	xi     []int32 // source byte offset of the left neighbour, per destination column
	xd     []int32 // byte step to the right neighbour (0 where its weight is 0 at the edge)
	xa, xb []int32 // fixed-point weights of the left and right neighbours
	rows   [2][]int32
	rowY   [2]int // source row held in rows[i], -1 none
	key    [4]int // src W, dst width, and offset/width of the columns the tables were built for
	keep   bool
}

// resizeOne is OpenCV's INTER_RESIZE_COEF_SCALE: the weights' fixed-point one.
const resizeOne = 2048

// Resize scales all of src into the rectangle dr of dst (a letterbox draws into a centred
// sub-rectangle); only the part of dr inside dst is written, with the pixels cv2.resize gives
// for the whole of dr.
func (z *Resizer) Resize(dst *Image, dr image.Rectangle, src *Image) {
	dr = dr.Canon()
	clip := dr.Intersect(dst.Bounds())
	if clip.Empty() || src.W == 0 || src.H == 0 {
		return
	}
	if dr.Dx() == src.W && dr.Dy() == src.H {
		for y := clip.Min.Y; y < clip.Max.Y; y++ {
			s := src.Pix[(y-dr.Min.Y)*src.Stride+3*(clip.Min.X-dr.Min.X):][:3*clip.Dx()]
			copy(dst.Pix[y*dst.Stride+3*clip.Min.X:], s)
		}
		return
	}
	w := clip.Dx()
	key := [4]int{src.W, dr.Dx(), clip.Min.X - dr.Min.X, w}
	if !z.keep || z.key != key {
		if cap(z.xi) < w {
			z.xi, z.xd = make([]int32, w), make([]int32, w)
			z.xa, z.xb = make([]int32, w), make([]int32, w)
			z.rows[0], z.rows[1] = make([]int32, 3*w), make([]int32, 3*w)
		}
		z.xi, z.xd, z.xa, z.xb = z.xi[:w], z.xd[:w], z.xa[:w], z.xb[:w]
		z.rows[0], z.rows[1] = z.rows[0][:3*w], z.rows[1][:3*w]
		sx := 1 / (float64(dr.Dx()) / float64(src.W))
		for i := range w {
			x0, a, b := linearTap(clip.Min.X-dr.Min.X+i, sx)
			if x0 < 0 {
				x0, a, b = 0, resizeOne, 0
			}
			if x0 >= src.W-1 {
				x0, a, b = src.W-1, resizeOne, 0
			}
			z.xi[i], z.xa[i], z.xb[i] = int32(3*x0), a, b
			z.xd[i] = 3
			if b == 0 {
				z.xd[i] = 0
			}
		}
		z.key, z.keep = key, true
	}
	z.rowY = [2]int{-1, -1}
	sy := 1 / (float64(dr.Dy()) / float64(src.H))
	for y := clip.Min.Y; y < clip.Max.Y; y++ {
		y0, b0, b1 := linearTap(y-dr.Min.Y, sy)
		r0 := z.row(src, min(max(y0, 0), src.H-1))
		r1 := z.row(src, min(max(y0+1, 0), src.H-1))
		out := dst.Pix[y*dst.Stride+3*clip.Min.X:][:3*w]
		for i := range out {
			out[i] = vresize(r0[i], r1[i], b0, b1)
		}
	}
}

// row is the horizontal pass of source row y (the column sums, ×2048), computed once.
func (z *Resizer) row(src *Image, y int) []int32 {
	for k := range 2 {
		if z.rowY[k] == y {
			return z.rows[k]
		}
	}
	// Replace the row the next call will not ask for: rows are asked for in ascending
	// pairs, so the lower of the two held rows is the one to go.
	k := 0
	if z.rowY[1] < z.rowY[0] {
		k = 1
	}
	z.rowY[k] = y
	r, s := z.rows[k], src.Pix[y*src.Stride:][:3*src.W]
	for i, a := range z.xi {
		d, wa, wb := z.xd[i], z.xa[i], z.xb[i]
		r[3*i] = int32(s[a])*wa + int32(s[a+d])*wb
		r[3*i+1] = int32(s[a+1])*wa + int32(s[a+d+1])*wb
		r[3*i+2] = int32(s[a+2])*wa + int32(s[a+d+2])*wb
	}
	return r
}

// linearTap is OpenCV's mapping of destination index i at scale s (source/destination): the
// first source neighbour, unclamped, and the two fixed-point weights.
func linearTap(i int, s float64) (int, int32, int32) {
	f := float32((float64(i)+0.5)*s - 0.5)
	x0 := float32(math.Floor(float64(f)))
	f -= x0
	return int(x0), roundCoef((1 - f) * resizeOne), roundCoef(f * resizeOne)
}

// roundCoef is saturate_cast<short>(float): nearest, ties to even.
func roundCoef(v float32) int32 {
	return int32(math.RoundToEven(float64(v)))
}

// vresize is one byte of OpenCV's 8-bit vertical pass: the sums shifted to 16 bits, the high
// halves of their products with the weights, a rounding shift by 2. The sums are at most
// 255·2048, so nothing saturates.
func vresize(a, c, b0, b1 int32) uint8 {
	return uint8(((a>>4)*b0>>16 + (c>>4)*b1>>16 + 2) >> 2)
}
