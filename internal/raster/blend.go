package raster

// Blend composites src into dst with weights m: out = dst·(1−m) + src·m, rounded, with m
// clamped to [0, 1]. It touches only the overlap of m.Rect, src.Rect and dst, and leaves
// pixels where m ≤ 0 bit-identical, so a paste-back never disturbs the frame outside the face.
func Blend(dst *Image, src *FloatImage, m *Mask) {
	in := m.Rect.Intersect(src.Rect).Intersect(dst.Bounds())
	for y := in.Min.Y; y < in.Max.Y; y++ {
		mrow := m.Pix[(y-m.Rect.Min.Y)*m.Stride+in.Min.X-m.Rect.Min.X:][:in.Dx()]
		srow := src.Pix[(y-src.Rect.Min.Y)*src.Stride+3*(in.Min.X-src.Rect.Min.X):][:3*in.Dx()]
		drow := dst.Pix[y*dst.Stride+3*in.Min.X:][:3*in.Dx()]
		for i, w := range mrow {
			if !(w > 0) {
				continue
			}
			w = min(w, 1)
			s := srow[3*i : 3*i+3 : 3*i+3]
			d := drow[3*i : 3*i+3 : 3*i+3]
			for c := range 3 {
				f := float32(d[c])
				d[c] = uint8(clamp255(f+(s[c]-f)*w) + 0.5)
			}
		}
	}
}
