package raster

import "math"

// GaussianBlur8 blurs the RGB image src into dst (the same size) as cv2.GaussianBlur(src, (0, 0),
// sigma) on 8-bit images: OpenCV 4.6's bit-exact path, a kernel of cvRound(6σ + 1)|1 taps in
// 8-bit fixed point whose rounding errors are carried from tap to tap and whose centre takes the
// rest of 256 (getGaussianKernelFixedPoint_ED), rows then columns in integer arithmetic, the
// borders reflected (BORDER_REFLECT_101), rounded half up from 1/65536.
func GaussianBlur8(dst, src *Image, sigma float64) { new(CVScratch).GaussianBlur8(dst, src, sigma) }

// GaussianBlur8 is the package's GaussianBlur8 on z's buffers.
func (z *CVScratch) GaussianBlur8(dst, src *Image, sigma float64) {
	if z.kernel == nil || z.sigma != sigma {
		z.kernel, z.sigma = gaussianFixed(sigma), sigma
	}
	k := z.kernel
	r := len(k) / 2
	w, h := src.W, src.H
	if cap(z.u32) < 3*w*h {
		z.u32 = make([]uint32, 3*w*h)
	}
	rows := z.u32[:3*w*h]
	for y := range h {
		in := src.Pix[y*src.Stride:]
		for x := range w {
			for c := range 3 {
				var v uint32
				for j, kv := range k {
					v += kv * uint32(in[3*Reflect101(x-r+j, w)+c])
				}
				rows[3*(y*w+x)+c] = v
			}
		}
	}
	for y := range h {
		out := dst.Pix[y*dst.Stride:]
		for i := range 3 * w {
			var v uint32
			for j, kv := range k {
				v += kv * rows[3*Reflect101(y-r+j, h)*w+i]
			}
			out[i] = uint8(min(255, (v+1<<15)>>16))
		}
	}
}

// gaussianFixed is OpenCV's 8-bit Gaussian kernel for sigma: exp(−x²/2σ²) normalised, × 256,
// each outer tap rounded with the error carried inwards, the centre 256 minus the rest.
func gaussianFixed(sigma float64) []uint32 {
	n := int(math.RoundToEven(sigma*3*2+1)) | 1
	half := n / 2
	f := make([]float64, n)
	sum := 1.0
	for i := range half {
		x := float64(2*i + 1 - n) // OpenCV steps x by 2 and scales by −1/8σ²
		f[i] = math.Exp(x * x * (-0.125 / (sigma * sigma)))
		sum += 2 * f[i]
	}
	k := make([]uint32, n)
	errCarry, total := 0.0, 0
	for i := range half {
		adj := f[i]/sum*256 + errCarry
		v := int(math.RoundToEven(adj))
		errCarry = adj - float64(v)
		k[i], k[n-1-i] = uint32(v), uint32(v)
		total += 2 * v
	}
	k[half] = uint32(256 - total)
	return k
}
