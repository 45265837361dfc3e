package raster

import "math"

// Colour transfer works in YCbCr (JPEG/BT.601 full range) rather than Lab or lαβ: it is a
// linear map of RGB, so it separates luma from chroma (the decorrelation Reinhard's method
// relies on, close enough for skin, whose variation is mostly luma) while the whole transfer
// stays one 3×3 matrix plus offset per pixel, with no cube roots or logarithms per pixel.
var (
	toYCC = [3][3]float64{
		{0.299, 0.587, 0.114},
		{-0.168736, -0.331264, 0.5},
		{0.5, -0.418688, -0.081312},
	}
	fromYCC = invert3(toYCC)
)

// RGBOfYCC is the change of R, G, B that a change d of Y, Cb, Cr (as ColourStats measure
// them) makes.
func RGBOfYCC(d [3]float64) (out [3]float64) {
	for i := range 3 {
		for j := range 3 {
			out[i] += fromYCC[i][j] * d[j]
		}
	}
	return out
}

// ColourStats are the mask-weighted mean and standard deviation of Y, Cb, Cr (Cb and Cr
// centred on 0) over a region; Weight is the sum of the mask.
type ColourStats struct {
	Mean, Std [3]float64
	Weight    float64
}

// moments are mask-weighted raw sums: Σm, Σm·c and Σm·cᵢ·cⱼ in RGB.
type moments struct {
	w  float64
	s  [3]float64
	ss [3][3]float64
}

func (mo *moments) stats() ColourStats {
	st := ColourStats{Weight: mo.w}
	if mo.w <= 0 {
		return st
	}
	var mean [3]float64
	var cov [3][3]float64
	for i := range 3 {
		mean[i] = mo.s[i] / mo.w
	}
	for i := range 3 {
		for j := range 3 {
			cov[i][j] = mo.ss[i][j]/mo.w - mean[i]*mean[j]
		}
	}
	// A linear map t moves the mean to t·mean and the variance to tᵀ·Cov·t.
	for c := range 3 {
		t := toYCC[c]
		var v float64
		for i := range 3 {
			st.Mean[c] += t[i] * mean[i]
			for j := range 3 {
				v += t[i] * cov[i][j] * t[j]
			}
		}
		st.Std[c] = math.Sqrt(math.Max(0, v))
	}
	return st
}

func (mo *moments) add(w, r, g, b float64) {
	mo.w += w
	mo.s[0] += w * r
	mo.s[1] += w * g
	mo.s[2] += w * b
	wr, wg, wb := w*r, w*g, w*b
	mo.ss[0][0] += wr * r
	mo.ss[0][1] += wr * g
	mo.ss[0][2] += wr * b
	mo.ss[1][1] += wg * g
	mo.ss[1][2] += wg * b
	mo.ss[2][2] += wb * b
}

func (mo *moments) symmetrise() {
	mo.ss[1][0], mo.ss[2][0], mo.ss[2][1] = mo.ss[0][1], mo.ss[0][2], mo.ss[1][2]
}

// StatsImage measures img weighted by m (over m.Rect inside the image).
func StatsImage(img *Image, m *Mask) ColourStats {
	var mo moments
	in := m.Rect.Intersect(img.Bounds())
	for y := in.Min.Y; y < in.Max.Y; y++ {
		mrow := m.Pix[(y-m.Rect.Min.Y)*m.Stride+in.Min.X-m.Rect.Min.X:][:in.Dx()]
		prow := img.Pix[y*img.Stride+3*in.Min.X:][:3*in.Dx()]
		for i, w := range mrow {
			if w > 0 {
				mo.add(float64(w), float64(prow[3*i]), float64(prow[3*i+1]), float64(prow[3*i+2]))
			}
		}
	}
	mo.symmetrise()
	return mo.stats()
}

// StatsFloat measures f weighted by m (over the overlap of their rectangles).
func StatsFloat(f *FloatImage, m *Mask) ColourStats {
	var mo moments
	in := m.Rect.Intersect(f.Rect)
	for y := in.Min.Y; y < in.Max.Y; y++ {
		mrow := m.Pix[(y-m.Rect.Min.Y)*m.Stride+in.Min.X-m.Rect.Min.X:][:in.Dx()]
		prow := f.Pix[(y-f.Rect.Min.Y)*f.Stride+3*(in.Min.X-f.Rect.Min.X):][:3*in.Dx()]
		for i, w := range mrow {
			if w > 0 {
				mo.add(float64(w), float64(prow[3*i]), float64(prow[3*i+1]), float64(prow[3*i+2]))
			}
		}
	}
	mo.symmetrise()
	return mo.stats()
}

// TransferColour gives the pixels of f where m > 0 the colour statistics to (Reinhard:
// per channel, y' = (y − from.Mean)·to.Std/from.Std + to.Mean in YCbCr), clipped to 0–255.
// A channel with (almost) no spread in from keeps its contrast (gain 1), and gains are
// clamped to [1/4, 4] so a mask that caught a flat or odd region cannot blow the face up.
func TransferColour(f *FloatImage, m *Mask, from, to ColourStats) {
	if from.Weight <= 0 || to.Weight <= 0 {
		return
	}
	// RGB' = Mx·RGB + off with Mx = fromYCC·diag(k)·toYCC and
	// off = fromYCC·(to.Mean − k·from.Mean).
	var k, d [3]float64
	for c := range 3 {
		k[c] = transferGain(from.Std[c], to.Std[c])
		d[c] = to.Mean[c] - k[c]*from.Mean[c]
	}
	var mx [3][3]float32
	var off [3]float32
	for i := range 3 {
		var o float64
		for j := range 3 {
			var s float64
			for c := range 3 {
				s += fromYCC[i][c] * k[c] * toYCC[c][j]
			}
			mx[i][j] = float32(s)
			o += fromYCC[i][j] * d[j]
		}
		off[i] = float32(o)
	}
	in := m.Rect.Intersect(f.Rect)
	for y := in.Min.Y; y < in.Max.Y; y++ {
		mrow := m.Pix[(y-m.Rect.Min.Y)*m.Stride+in.Min.X-m.Rect.Min.X:][:in.Dx()]
		prow := f.Pix[(y-f.Rect.Min.Y)*f.Stride+3*(in.Min.X-f.Rect.Min.X):][:3*in.Dx()]
		for i, w := range mrow {
			if w <= 0 {
				continue
			}
			p := prow[3*i : 3*i+3 : 3*i+3]
			r, g, b := p[0], p[1], p[2]
			p[0] = clamp255(mx[0][0]*r + mx[0][1]*g + mx[0][2]*b + off[0])
			p[1] = clamp255(mx[1][0]*r + mx[1][1]*g + mx[1][2]*b + off[1])
			p[2] = clamp255(mx[2][0]*r + mx[2][1]*g + mx[2][2]*b + off[2])
		}
	}
}

func transferGain(from, to float64) float64 {
	if from < 1e-3 {
		return 1
	}
	return math.Max(0.25, math.Min(4, to/from))
}

func clamp255(v float32) float32 {
	return min(max(v, 0), 255)
}

func invert3(m [3][3]float64) [3][3]float64 {
	det := m[0][0]*(m[1][1]*m[2][2]-m[1][2]*m[2][1]) -
		m[0][1]*(m[1][0]*m[2][2]-m[1][2]*m[2][0]) +
		m[0][2]*(m[1][0]*m[2][1]-m[1][1]*m[2][0])
	var r [3][3]float64
	for i := range 3 {
		for j := range 3 {
			// Cofactor of m[j][i] (transposed) over det.
			a, b := (j+1)%3, (j+2)%3
			c, d := (i+1)%3, (i+2)%3
			r[i][j] = (m[a][c]*m[b][d] - m[a][d]*m[b][c]) / det
		}
	}
	return r
}
