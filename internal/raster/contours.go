package raster

import "image"

// ContourFinder finds the borders of the regions of a binary image as cv2.findContours with
// RETR_LIST and CHAIN_APPROX_NONE (Suzuki and Abe's border following, as OpenCV implements
// it): every outer and hole border, each as the 8-connected pixels it passes through in OpenCV's
// order, the borders in scan order (drawing them does not depend on it). It keeps its buffers between calls; not for concurrent use.
type ContourFinder struct {
	img      []int8
	points   []image.Point
	contours [][]image.Point
}

// The eight directions of OpenCV's chain code: right, up-right, up, …, down-right.
var chainDX, chainDY = [8]int{1, 1, 0, -1, -1, -1, 0, 1}, [8]int{0, -1, -1, -1, 0, 1, 1, 1}

// Find returns the contours of the w×h image bin (non-zero: inside), positions in bin's own
// coordinates (outside the image counts as outside). The slices stay valid until the next
// call.
func (f *ContourFinder) Find(bin []uint8, w, h int) [][]image.Point {
	f.points, f.contours = f.points[:0], f.contours[:0]
	if w <= 0 || h <= 0 {
		return nil
	}
	// OpenCV frames the image with one row and column of zeros and follows borders there.
	w, h = w+2, h+2
	if cap(f.img) < w*h {
		f.img = make([]int8, w*h)
	}
	img := f.img[:w*h]
	clear(img)
	for y := 1; y < h-1; y++ {
		row := bin[(y-1)*(w-2):][:w-2]
		for x, v := range row {
			if v != 0 {
				img[y*w+x+1] = 1
			}
		}
	}
	var deltas [16]int
	for s := range 8 {
		deltas[s] = chainDY[s]*w + chainDX[s]
		deltas[s+8] = deltas[s]
	}
	var starts []int
	for y := 1; y < h-1; y++ {
		prev := int8(0)
		for x := 1; x < w-1; x++ {
			p := img[y*w+x]
			if p == prev {
				continue
			}
			hole := 0
			if !(prev == 0 && p == 1) {
				if p != 0 || prev < 1 {
					prev = p
					continue
				}
				hole = 1
			}
			starts = append(starts, len(f.points))
			f.follow(img, deltas, y*w+x-hole, image.Pt(x-hole-1, y-1), hole == 1)
			prev = img[y*w+x]
		}
	}
	for i, s := range starts {
		end := len(f.points)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		f.contours = append(f.contours, f.points[s:end:end])
	}
	return f.contours
}

// follow traces one border from pixel i0 (at pt) as OpenCV's icvFetchContour, marking what
// it passes (2, or −126 where the border's right side is outside), every point kept.
func (f *ContourFinder) follow(img []int8, deltas [16]int, i0 int, pt image.Point, hole bool) {
	const nbd, rightEdge = 2, 2 - 128
	s := 4
	if hole {
		s = 0
	}
	end := s
	i1 := i0
	for {
		s = (s - 1) & 7
		i1 = i0 + deltas[s]
		if img[i1] != 0 || s == end {
			break
		}
	}
	if s == end {
		img[i0] = rightEdge
		f.points = append(f.points, pt)
		return
	}
	i3 := i0
	for {
		end = s
		i4 := i3
		for s < 15 {
			s++
			i4 = i3 + deltas[s]
			if img[i4] != 0 {
				break
			}
		}
		s &= 7
		if uint(s-1) < uint(end) {
			img[i3] = rightEdge
		} else if img[i3] == 1 {
			img[i3] = nbd
		}
		f.points = append(f.points, pt)
		pt.X += chainDX[s]
		pt.Y += chainDY[s]
		if i4 == i0 && i3 == i1 {
			return
		}
		i3 = i4
		s = (s + 4) & 7
	}
}
