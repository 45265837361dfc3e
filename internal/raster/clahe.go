package raster

import "math"

// CLAHE is OpenCV's contrast limited adaptive histogram equalisation of one 8-bit plane
// (cv2.createCLAHE(clipLimit, tileGridSize).apply), in place: pix holds w×h samples, row
// after row. Each of the tilesX×tilesY tiles gets a histogram clipped at
// ⌊clipLimit·tile area/256⌋ (at least 1) with the clipped counts spread evenly and the
// remainder one by one at a regular step, then a cumulative map scaled by 255/tile area; every
// sample is the bilinear blend of the maps of the four tiles around it, in single precision
// as OpenCV computes it. A plane that the grid does not divide is extended bottom-right by
// reflection (BORDER_REFLECT_101) for the histograms, as OpenCV does.
func CLAHE(pix []uint8, w, h int, clipLimit float64, tilesX, tilesY int) {
	src, sw := pix, w
	if w%tilesX != 0 || h%tilesY != 0 {
		ew, eh := w+tilesX-w%tilesX, h+tilesY-h%tilesY
		src, sw = make([]uint8, ew*eh), ew
		for y := range eh {
			sy := Reflect101(y, h)
			for x := range ew {
				src[y*ew+x] = pix[sy*w+Reflect101(x, w)]
			}
		}
	}
	tw, th := sw/tilesX, len(src)/sw/tilesY
	area := tw * th
	lutScale := float32(255) / float32(area)
	limit := 0
	if clipLimit > 0 {
		limit = max(int(clipLimit*float64(area)/256), 1)
	}
	luts := make([][256]uint8, tilesX*tilesY)
	for ty := range tilesY {
		for tx := range tilesX {
			var hist [256]int
			for y := ty * th; y < (ty+1)*th; y++ {
				for _, v := range src[y*sw+tx*tw:][:tw] {
					hist[v]++
				}
			}
			if limit > 0 {
				clipped := 0
				for i, n := range hist {
					if n > limit {
						clipped += n - limit
						hist[i] = limit
					}
				}
				batch := clipped / 256
				residual := clipped - batch*256
				for i := range hist {
					hist[i] += batch
				}
				if residual != 0 {
					step := max(256/residual, 1)
					for i := 0; i < 256 && residual > 0; i, residual = i+step, residual-1 {
						hist[i]++
					}
				}
			}
			lut := &luts[ty*tilesX+tx]
			sum := 0
			for i, n := range hist {
				sum += n
				lut[i] = SaturateU8(float64(f32(float32(sum) * lutScale)))
			}
		}
	}
	invW, invH := f32(1/float32(tw)), f32(1/float32(th))
	for y := range h {
		tyf := f32(f32(float32(y)*invH) - 0.5)
		ty1 := int(math.Floor(float64(tyf)))
		ya := f32(tyf - float32(ty1))
		ya1 := f32(1 - ya)
		ty2 := min(ty1+1, tilesY-1)
		ty1 = max(ty1, 0)
		row := pix[y*w:][:w]
		for x := range w {
			txf := f32(f32(float32(x)*invW) - 0.5)
			tx1 := int(math.Floor(float64(txf)))
			xa := f32(txf - float32(tx1))
			xa1 := f32(1 - xa)
			tx2 := min(tx1+1, tilesX-1)
			tx1 = max(tx1, 0)
			v := row[x]
			top := f32(f32(float32(luts[ty1*tilesX+tx1][v])*xa1) + f32(float32(luts[ty1*tilesX+tx2][v])*xa))
			bottom := f32(f32(float32(luts[ty2*tilesX+tx1][v])*xa1) + f32(float32(luts[ty2*tilesX+tx2][v])*xa))
			row[x] = SaturateU8(float64(f32(f32(top*ya1) + f32(bottom*ya))))
		}
	}
}

// Reflect101 maps an index outside [0, n) into it the way OpenCV's BORDER_REFLECT_101 (the
// default border of GaussianBlur and CLAHE's tiles) does: … 2 1 | 0 1 2 … n−2 n−1 | n−2 …
func Reflect101(i, n int) int {
	if n == 1 {
		return 0
	}
	for i < 0 || i >= n {
		if i < 0 {
			i = -i
		} else {
			i = 2*n - 2 - i
		}
	}
	return i
}
