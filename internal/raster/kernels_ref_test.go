package raster

// Slow, obviously correct twins of the kernels: one pixel at a time, float64, no tables, no
// incremental arithmetic. The fast kernels are tested against these.

import (
	"image"
	"math"

	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// insideRef is the fill rule written out for one pixel centre and one positively oriented
// polygon given by fixed-point vertices.
func insideRef(px, py int, poly []fixPt) bool {
	for i := range poly {
		a, b := poly[i], poly[(i+1)%len(poly)]
		dx, dy := b.x-a.x, b.y-a.y
		if dx == 0 && dy == 0 {
			continue
		}
		w := dx*(int64(py)*sub-a.y) - dy*(int64(px)*sub-a.x)
		owner := dy > 0 || (dy == 0 && dx < 0)
		if w < 0 || (w == 0 && !owner) {
			return false
		}
	}
	return true
}

func bilinearRef(src *Image, u, v float64) [3]float64 {
	u = math.Max(0, math.Min(float64(src.W-1), u))
	v = math.Max(0, math.Min(float64(src.H-1), v))
	x0, y0 := int(math.Floor(u)), int(math.Floor(v))
	x1, y1 := min(x0+1, src.W-1), min(y0+1, src.H-1)
	fx, fy := u-float64(x0), v-float64(y0)
	var out [3]float64
	for c := range 3 {
		p := func(x, y int) float64 { return float64(src.Pix[y*src.Stride+3*x+c]) }
		out[c] = (1-fx)*(1-fy)*p(x0, y0) + fx*(1-fy)*p(x1, y0) + (1-fx)*fy*p(x0, y1) + fx*fy*p(x1, y1)
	}
	return out
}

func warpRef(dst *FloatImage, cov *Mask, src *Image, srcPts, dstPts []geom.Pt, tris [][3]int) {
	for y := dst.Rect.Min.Y; y < dst.Rect.Max.Y; y++ {
		for x := dst.Rect.Min.X; x < dst.Rect.Max.X; x++ {
			for _, t := range tris {
				var d [3]fixPt
				ok := true
				for k := range 3 {
					var okk bool
					d[k], okk = toFix(dstPts[t[k]])
					ok = ok && okk
				}
				area := orient2(d[0], d[1], d[2])
				if !ok || area == 0 {
					continue
				}
				if area < 0 {
					d[1], d[2] = d[2], d[1]
				}
				if !insideRef(x, y, d[:]) {
					continue
				}
				m, ok := geom.Triangle([3]geom.Pt{dstPts[t[0]], dstPts[t[1]], dstPts[t[2]]},
					[3]geom.Pt{srcPts[t[0]], srcPts[t[1]], srcPts[t[2]]})
				if !ok {
					continue
				}
				p := m.Apply(geom.Pt{X: float64(x), Y: float64(y)})
				s := bilinearRef(src, p.X, p.Y)
				i := (y-dst.Rect.Min.Y)*dst.Stride + 3*(x-dst.Rect.Min.X)
				for c := range 3 {
					dst.Pix[i+c] = float32(s[c])
				}
				cov.Pix[(y-cov.Rect.Min.Y)*cov.Stride+x-cov.Rect.Min.X] = 1
			}
		}
	}
}

func fillConvexRef(m *Mask, poly []geom.Pt, v float32) {
	var area float64
	fp := make([]fixPt, len(poly))
	for i, p := range poly {
		q := poly[(i+1)%len(poly)]
		area += p.X*q.Y - q.X*p.Y
		fp[(i)], _ = toFix(p)
	}
	if len(poly) < 3 || area == 0 {
		return
	}
	if area < 0 {
		for i, j := 0, len(fp)-1; i < j; i, j = i+1, j-1 {
			fp[i], fp[j] = fp[j], fp[i]
		}
	}
	for y := m.Rect.Min.Y; y < m.Rect.Max.Y; y++ {
		for x := m.Rect.Min.X; x < m.Rect.Max.X; x++ {
			if insideRef(x, y, fp) {
				m.Pix[(y-m.Rect.Min.Y)*m.Stride+x-m.Rect.Min.X] = v
			}
		}
	}
}

// blurRef convolves with the full 2-D Gaussian directly (zero outside the mask).
func blurRef(m *Mask, sigma float64) *Mask {
	r := Radius(sigma)
	out := &Mask{}
	out.Reset(m.Rect)
	var norm float64
	for i := -r; i <= r; i++ {
		norm += math.Exp(-float64(i*i) / (2 * sigma * sigma))
	}
	for y := m.Rect.Min.Y; y < m.Rect.Max.Y; y++ {
		for x := m.Rect.Min.X; x < m.Rect.Max.X; x++ {
			var s float64
			for dy := -r; dy <= r; dy++ {
				for dx := -r; dx <= r; dx++ {
					w := math.Exp(-float64(dx*dx+dy*dy)/(2*sigma*sigma)) / (norm * norm)
					s += w * float64(m.At(x+dx, y+dy))
				}
			}
			out.Pix[(y-m.Rect.Min.Y)*m.Stride+x-m.Rect.Min.X] = float32(s)
		}
	}
	return out
}

// Textbook YCbCr (JPEG) conversions, with the +128 chroma offset.
func yccRef(r, g, b float64) [3]float64 {
	return [3]float64{
		0.299*r + 0.587*g + 0.114*b,
		128 - 0.168736*r - 0.331264*g + 0.5*b,
		128 + 0.5*r - 0.418688*g - 0.081312*b,
	}
}

func rgbRef(y, cb, cr float64) [3]float64 {
	return [3]float64{y + 1.402*(cr-128), y - 0.344136*(cb-128) - 0.714136*(cr-128), y + 1.772*(cb-128)}
}

// statsRef converts every weighted pixel to YCbCr and takes a two-pass weighted mean and
// standard deviation.
func statsRef(px func(x, y int) [3]float64, m *Mask, r image.Rectangle) ColourStats {
	r = r.Intersect(m.Rect)
	var st ColourStats
	for pass := range 2 {
		var acc [3]float64
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				w := float64(m.At(x, y))
				if w <= 0 {
					continue
				}
				p := px(x, y)
				c := yccRef(p[0], p[1], p[2])
				c[1] -= 128
				c[2] -= 128
				if pass == 0 {
					st.Weight += w
				}
				for k := range 3 {
					if pass == 0 {
						acc[k] += w * c[k]
					} else {
						acc[k] += w * (c[k] - st.Mean[k]) * (c[k] - st.Mean[k])
					}
				}
			}
		}
		for k := range 3 {
			if st.Weight == 0 {
				continue
			}
			if pass == 0 {
				st.Mean[k] = acc[k] / st.Weight
			} else {
				st.Std[k] = math.Sqrt(acc[k] / st.Weight)
			}
		}
	}
	return st
}

func transferRef(f *FloatImage, m *Mask, from, to ColourStats) {
	for y := f.Rect.Min.Y; y < f.Rect.Max.Y; y++ {
		for x := f.Rect.Min.X; x < f.Rect.Max.X; x++ {
			if m.At(x, y) <= 0 {
				continue
			}
			i := (y-f.Rect.Min.Y)*f.Stride + 3*(x-f.Rect.Min.X)
			c := yccRef(float64(f.Pix[i]), float64(f.Pix[i+1]), float64(f.Pix[i+2]))
			for k := range 3 {
				off := 0.0
				if k > 0 {
					off = 128
				}
				gain := 1.0
				if from.Std[k] >= 1e-3 {
					gain = math.Max(0.25, math.Min(4, to.Std[k]/from.Std[k]))
				}
				c[k] = (c[k]-off-from.Mean[k])*gain + to.Mean[k] + off
			}
			p := rgbRef(c[0], c[1], c[2])
			for k := range 3 {
				f.Pix[i+k] = float32(math.Max(0, math.Min(255, p[k])))
			}
		}
	}
}

func blendRef(dst *Image, src *FloatImage, m *Mask) {
	for y := 0; y < dst.H; y++ {
		for x := 0; x < dst.W; x++ {
			w := float64(m.At(x, y))
			if !(image.Point{x, y}).In(src.Rect) || w <= 0 {
				continue
			}
			w = math.Min(w, 1)
			i := (y-src.Rect.Min.Y)*src.Stride + 3*(x-src.Rect.Min.X)
			r, g, b := dst.At(x, y)
			o := [3]float64{float64(r), float64(g), float64(b)}
			for c := range 3 {
				s := float64(src.Pix[i+c])
				o[c] = math.Round(math.Max(0, math.Min(255, o[c]*(1-w)+s*w)))
			}
			dst.Set(x, y, uint8(o[0]), uint8(o[1]), uint8(o[2]))
		}
	}
}

// resizeRef is cv2.resize's INTER_LINEAR on 8-bit RGB written out for one destination byte at a
// time: the float32 source position, the weights rounded to 1/2048 (a column past either edge
// takes the edge pixel whole, a row keeps its weights on the clamped rows), the column sums of
// the two source rows, and the vertical rounding of OpenCV's 8-bit kernel.
func resizeRef(dst *Image, dr image.Rectangle, src *Image) {
	dw, dh := dr.Dx(), dr.Dy()
	pos := func(i, n, m int) (int, float32) {
		f := float32((float64(i)+0.5)/(float64(m)/float64(n)) - 0.5)
		lo := float32(math.Floor(float64(f)))
		return int(lo), f - lo
	}
	coef := func(f float32) int64 { return int64(math.RoundToEven(float64(f * 2048))) }
	for y := dr.Min.Y; y < dr.Max.Y; y++ {
		for x := dr.Min.X; x < dr.Max.X; x++ {
			if x < 0 || y < 0 || x >= dst.W || y >= dst.H {
				continue
			}
			i, j := x-dr.Min.X, y-dr.Min.Y
			var o [3]uint8
			for c := range 3 {
				p := func(sx, sy int) int64 { return int64(src.Pix[sy*src.Stride+3*sx+c]) }
				switch {
				case dw == src.W && dh == src.H:
					o[c] = uint8(p(i, j))
					continue
				case 2*dw == src.W && 2*dh == src.H:
					o[c] = uint8((p(2*i, 2*j) + p(2*i+1, 2*j) + p(2*i, 2*j+1) + p(2*i+1, 2*j+1) + 2) / 4)
					continue
				}
				x0, fx := pos(i, src.W, dw)
				x1, a, b := x0+1, coef(1-fx), coef(fx)
				if x0 < 0 {
					x0, x1, a, b = 0, 0, 2048, 0
				} else if x0 >= src.W-1 {
					x0, x1, a, b = src.W-1, src.W-1, 2048, 0
				}
				y0, fy := pos(j, src.H, dh)
				b0, b1 := coef(1-fy), coef(fy)
				y1 := min(max(y0+1, 0), src.H-1)
				y0 = min(max(y0, 0), src.H-1)
				r0 := p(x0, y0)*a + p(x1, y0)*b
				r1 := p(x0, y1)*a + p(x1, y1)*b
				o[c] = uint8(((((r0 >> 4) * b0) >> 16) + (((r1 >> 4) * b1) >> 16) + 2) >> 2)
			}
			dst.Set(x, y, o[0], o[1], o[2])
		}
	}
}
