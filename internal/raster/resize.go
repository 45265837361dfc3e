package raster

import "image"

// Resizer scales RGB images bilinearly; it keeps its per-column and per-row tables so that
// resizing every frame to the same size does not allocate. The zero value is ready.
type Resizer struct {
	xi   []int32   // source byte offset of the left neighbour, per destination column
	xd   []int32   // byte step to the right neighbour (0 at the image's right edge)
	xf   []float32 // weight of the right neighbour
	key  [4]int    // src W, dst width, and offset the column tables were built for
	keep bool
}

// Resize scales all of src into the rectangle dr of dst (a letterbox draws into a centred
// sub-rectangle); only the part of dr inside dst is written. Sample positions are aligned on
// pixel centres (x_src = (x+0.5)·W_src/W_dst − 0.5, clamped), like OpenCV's INTER_LINEAR.
func (z *Resizer) Resize(dst *Image, dr image.Rectangle, src *Image) {
	dr = dr.Canon()
	clip := dr.Intersect(dst.Bounds())
	if clip.Empty() || src.W == 0 || src.H == 0 {
		return
	}
	w := clip.Dx()
	key := [4]int{src.W, dr.Dx(), clip.Min.X - dr.Min.X, w}
	if !z.keep || z.key != key {
		if cap(z.xi) < w {
			z.xi, z.xd, z.xf = make([]int32, w), make([]int32, w), make([]float32, w)
		}
		z.xi, z.xd, z.xf = z.xi[:w], z.xd[:w], z.xf[:w]
		sx := float64(src.W) / float64(dr.Dx())
		for i := range w {
			x0, f := srcCoord(clip.Min.X-dr.Min.X+i, sx, src.W)
			z.xi[i], z.xf[i] = int32(3*x0), float32(f)
			if x0 < src.W-1 {
				z.xd[i] = 3
			} else {
				z.xd[i] = 0
			}
		}
		z.key, z.keep = key, true
	}
	sy := float64(src.H) / float64(dr.Dy())
	for y := clip.Min.Y; y < clip.Max.Y; y++ {
		y0, fy64 := srcCoord(y-dr.Min.Y, sy, src.H)
		fy := float32(fy64)
		r0 := src.Pix[y0*src.Stride:][:3*src.W]
		r1 := r0
		if y0 < src.H-1 {
			r1 = src.Pix[(y0+1)*src.Stride:][:3*src.W]
		}
		out := dst.Pix[y*dst.Stride+3*clip.Min.X:][:3*w]
		for i := range w {
			a, d, fx := z.xi[i], z.xd[i], z.xf[i]
			for c := int32(0); c < 3; c++ {
				top := float32(r0[a+c]) + fx*(float32(r0[a+d+c])-float32(r0[a+c]))
				bot := float32(r1[a+c]) + fx*(float32(r1[a+d+c])-float32(r1[a+c]))
				out[3*i+int(c)] = uint8(top + fy*(bot-top) + 0.5)
			}
		}
	}
}

// srcCoord maps destination index i to the left/top source neighbour and the weight of the
// next one, for scale s = source size / destination size.
func srcCoord(i int, s float64, n int) (int, float64) {
	v := (float64(i)+0.5)*s - 0.5
	if v <= 0 {
		return 0, 0
	}
	if v >= float64(n-1) {
		return n - 1, 0
	}
	x0 := int(v)
	return x0, v - float64(x0)
}
