package align

import (
	"image"
	"math"

	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Masks are crop-sized []float32 planes, row-major (value at (x, y) is m[y·w+x]), 1 where
// the swapped face shows and 0 where the frame stays. FaceFusion combines the box,
// occlusion and region masks of a crop by the per-pixel minimum (MinInto), clips to 0–1
// (Clip01) and hands the result to paste-back.

// MaskWorkspace holds the scratch buffers of the mask functions; the zero value is ready
// and it stops allocating once it has seen the largest mask. Not for concurrent use.
type MaskWorkspace struct {
	tmp, a, b, sel []float32
	kernel         []float32
	sigma          float64
	pts, hull      []image.Point
	in, out        []float32 // PackFloat's planes
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// RegionClasses are the bisenet face-parser classes FaceFusion's region names select.
var RegionClasses = map[string]int{
	"skin": 1, "left-eyebrow": 2, "right-eyebrow": 3, "left-eye": 4, "right-eye": 5,
	"glasses": 6, "nose": 10, "mouth": 11, "upper-lip": 12, "lower-lip": 13,
}

// RegionNames are FaceFusion's --face-mask-regions choices, in its order (its default: all).
var RegionNames = []string{"skin", "left-eyebrow", "right-eyebrow", "left-eye", "right-eye", "glasses", "nose", "mouth", "upper-lip", "lower-lip"}

// DefaultRegions is FaceFusion's default --face-mask-regions: every region, as class ids.
var DefaultRegions = []int{1, 2, 3, 4, 5, 6, 10, 11, 12, 13}

// MaskArea is one of FaceFusion's --face-mask-areas: the 68-landmark points whose convex hull
// it covers (facefusion/choices.py face_mask_area_set).
type MaskArea struct {
	Name   string
	Points []int
}

// MaskAreas are FaceFusion's face mask areas, in its order (its default: all).
var MaskAreas = []MaskArea{
	{"upper-face", []int{0, 1, 2, 31, 32, 33, 34, 35, 14, 15, 16, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17}},
	{"lower-face", []int{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 35, 34, 33, 32, 31}},
	{"mouth", []int{48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67}},
}

// AreaMask writes FaceFusion's area mask (create_area_mask) for a w×h crop into dst: the
// convex hull of the areas' landmarks, mapped into the crop by toCrop (in float32, as
// cv2.transform does for FaceFusion's float32 landmarks) and truncated to whole pixels,
// filled with 1 by cv2.fillConvexPoly, then Feather. areas index MaskAreas; ws.hull is
// scratch.
func AreaMask(dst []float32, w, h int, landmarks *[68]geom.Pt, toCrop geom.Affine, areas []int, ws *MaskWorkspace) {
	dst = dst[:w*h]
	clear(dst)
	m := [6]float32{float32(toCrop.A), float32(toCrop.B), float32(toCrop.C), float32(toCrop.D), float32(toCrop.E), float32(toCrop.F)}
	ws.pts = ws.pts[:0]
	for _, a := range areas {
		for _, i := range MaskAreas[a].Points {
			x, y := float32(landmarks[i].X), float32(landmarks[i].Y)
			cx := float32(float32(m[0]*x)+float32(m[1]*y)) + m[2]
			cy := float32(float32(m[3]*x)+float32(m[4]*y)) + m[5]
			ws.pts = append(ws.pts, image.Pt(int(cx), int(cy))) // numpy's astype(int32) truncates
		}
	}
	if len(ws.pts) > 0 {
		ws.hull = raster.ConvexHull(ws.hull[:0], ws.pts)
		raster.FillConvexPolyMask(dst, w, h, ws.hull, 1)
	}
	Feather(dst, w, h, ws)
}

// BoxMask writes FaceFusion's box mask (create_box_mask) for a w×h crop into dst: ones
// with zero borders, then a Gaussian blur. With b = int(w·0.5·blur), each border is
// max(b/2, 1, int(side·padding/100)) pixels wide (padding in percent, FaceFusion's order:
// top, right, bottom, left; top/bottom measured on h, left/right on w) and the blur has
// σ = b/4 (none when b = 0). FaceFusion's default blur is 0.3 with no padding.
//
// The mask is a product of a column profile and a row profile, and the blur is separable,
// so blurring the two profiles gives the blurred mask in O(w·h). It depends only on its
// arguments: a pipeline computes it once per crop size and reuses it.
func BoxMask(dst []float32, w, h int, blur float64, padding [4]int, ws *MaskWorkspace) {
	amount := int(float64(w) * 0.5 * blur)
	area := max(amount/2, 1)
	top := max(area, int(float64(h)*float64(padding[0])/100))
	right := max(area, int(float64(w)*float64(padding[1])/100))
	bottom := max(area, int(float64(h)*float64(padding[2])/100))
	left := max(area, int(float64(w)*float64(padding[3])/100))
	ws.a, ws.b = grow(ws.a, w), grow(ws.b, h)
	col, row := ws.a, ws.b // col[x]: profile across; row[y]: profile down
	profile(col, left, right)
	profile(row, top, bottom)
	if amount > 0 {
		sigma := float64(amount) * 0.25
		k := ws.gaussian(sigma)
		ws.tmp = grow(ws.tmp, max(w, h))
		blur1D(ws.tmp[:w], col, k)
		copy(col, ws.tmp[:w])
		blur1D(ws.tmp[:h], row, k)
		copy(row, ws.tmp[:h])
	}
	dst = dst[:w*h]
	for y := range h {
		r, d := row[y], dst[y*w:][:w]
		for x, c := range col {
			d[x] = r * c
		}
	}
}

// profile is 1 with the first a and the last z entries 0 (numpy's p[:a] = 0; p[-z:] = 0).
func profile(p []float32, a, z int) {
	for i := range p {
		p[i] = 1
	}
	clear(p[:min(a, len(p))])
	clear(p[max(0, len(p)-z):])
}

// gaussian is cv2.getGaussianKernel for cv2.GaussianBlur(m, (0, 0), sigma) on float32:
// ksize = round(8σ+1)|1 taps of exp(−x²/2σ²), normalised in float64, stored as float32.
func (ws *MaskWorkspace) gaussian(sigma float64) []float32 {
	n := int(math.RoundToEven(sigma*8+1)) | 1
	if ws.sigma == sigma && len(ws.kernel) == n {
		return ws.kernel
	}
	// Two passes over exp instead of a float64 scratch slice: recomputing a kernel
	// (box mask and feathering alternate sigmas) then never allocates.
	tap := func(i int) float64 {
		x := float64(i) - float64(n-1)*0.5
		return math.Exp(-0.5 / (sigma * sigma) * x * x)
	}
	sum := 0.0
	for i := range n {
		sum += tap(i)
	}
	ws.kernel = grow(ws.kernel, n)
	for i := range n {
		ws.kernel[i] = float32(tap(i) / sum)
	}
	ws.sigma = sigma
	return ws.kernel
}

// blur1D convolves src with the odd kernel k into dst (same length), borders reflect-101.
func blur1D(dst, src, k []float32) {
	n, r := len(src), len(k)/2
	for i := range dst {
		var s float32
		if i >= r && i+r < n {
			for j, kv := range k {
				s += kv * src[i-r+j]
			}
		} else {
			for j, kv := range k {
				s += kv * src[raster.Reflect101(i-r+j, n)]
			}
		}
		dst[i] = s
	}
}

// GaussianBlur blurs the w×h mask m in place like cv2.GaussianBlur(m, (0, 0), sigma) on
// float32 (reflect-101 borders, ksize = round(8σ+1)|1): rows first, then columns.
func GaussianBlur(m []float32, w, h int, sigma float64, ws *MaskWorkspace) {
	if !(sigma > 0) {
		return
	}
	k := ws.gaussian(sigma)
	r := len(k) / 2
	ws.tmp = grow(ws.tmp, w*h)
	tmp := ws.tmp
	for y := range h {
		blur1D(tmp[y*w:][:w], m[y*w:][:w], k)
	}
	// Columns: each output row is a weighted sum of whole rows of tmp, which walks memory
	// in order instead of striding down columns.
	for y := range h {
		out := m[y*w:][:w]
		clear(out)
		for j, kv := range k {
			in := tmp[raster.Reflect101(y-r+j, h)*w:][:w]
			for x, v := range in {
				out[x] += kv * v
			}
		}
	}
}

// ResizeMask resizes the sw×sh mask src into the dw×dh mask dst like cv2.resize with
// INTER_LINEAR on float32: source position (d+0.5)·sw/dw − 0.5, clamped to the edge
// pixels, rows interpolated first, then columns. When clip is set, src values are first
// clipped to 0–1 (FaceFusion clips the occluder's output before resizing).
func ResizeMask(dst []float32, dw, dh int, src []float32, sw, sh int, clip bool, ws *MaskWorkspace) {
	ws.tmp = grow(ws.tmp, dw*sh)
	ws.a = grow(ws.a, 2*dw)
	xs, xw := ws.a[:dw], ws.a[dw:]
	scale := 1 / (float64(dw) / float64(sw))
	for d := range dw {
		i, f := linearTap(d, scale, sw)
		xs[d], xw[d] = float32(i), f
	}
	tmp := ws.tmp[:dw*sh]
	for y := range sh {
		in, out := src[y*sw:][:sw], tmp[y*dw:][:dw]
		for d := range dw {
			i, f := int(xs[d]), xw[d]
			a := in[i]
			if clip {
				a = min(1, max(0, a))
			}
			v := a * (1 - f)
			if f != 0 {
				b := in[i+1]
				if clip {
					b = min(1, max(0, b))
				}
				v += b * f
			}
			out[d] = v
		}
	}
	scale = 1 / (float64(dh) / float64(sh))
	for d := range dh {
		i, f := linearTap(d, scale, sh)
		out := dst[d*dw:][:dw]
		r0 := tmp[i*dw:][:dw]
		if f == 0 {
			copy(out, r0)
			continue
		}
		r1 := tmp[(i+1)*dw:][:dw]
		g := 1 - f
		for x := range out {
			out[x] = r0[x]*g + r1[x]*f
		}
	}
}

// linearTap is OpenCV's INTER_LINEAR source index and weight for destination index d:
// the position is computed in float32 as OpenCV does, and positions before the first or
// at/after the last pixel snap to that pixel with weight 0 on the next.
func linearTap(d int, scale float64, n int) (int, float32) {
	f := float32((float64(d)+0.5)*scale - 0.5)
	i := int(math.Floor(float64(f)))
	f -= float32(i)
	if i < 0 {
		return 0, 0
	}
	if i >= n-1 {
		return n - 1, 0
	}
	return i, f
}

// Feather is FaceFusion's finishing step for occlusion and region masks: clip to 0–1,
// Gaussian blur σ = 5, then stretch 0.5…1 to 0…1 (values below 0.5 become 0), so the
// edge of the kept area fades out inside it.
func Feather(m []float32, w, h int, ws *MaskWorkspace) {
	m = m[:w*h]
	Clip01(m)
	GaussianBlur(m, w, h, 5, ws)
	for i, v := range m {
		m[i] = (min(1, max(0.5, v)) - 0.5) * 2
	}
}

// OcclusionMask turns an occluder's raw output (xseg: the rw×rh plane of its 1×256×256×1
// output) into a w×h crop mask: clip to 0–1, resize to the crop, Feather. With several
// occluders FaceFusion takes the minimum before feathering: ResizeMask each with clip,
// MinInto, then Feather.
func OcclusionMask(dst []float32, w, h int, raw []float32, rw, rh int, ws *MaskWorkspace) {
	ResizeMask(dst, w, h, raw, rw, rh, true, ws)
	Feather(dst, w, h, ws)
}

// ClassScores are a face parser's output for one face: Classes planes of W×H scores, one
// after another (bisenet: the 19×512×512 of its 1×19×512×512 output).
type ClassScores struct {
	Data    []float32
	Classes int
	W, H    int
}

// RegionMask turns a face parser's class scores into a w×h crop mask: 1 where the
// best-scoring class (the first on ties, like numpy's argmax) is one of regions, resized to
// the crop, Feather.
func RegionMask(dst []float32, w, h int, cs ClassScores, regions []int, ws *MaskWorkspace) {
	classes, rw, rh := cs.Classes, cs.W, cs.H
	plane := rw * rh
	ws.sel = grow(ws.sel, plane)
	sel := ws.sel
	scores := cs.Data[:classes*plane]
	var want [256]bool
	for _, c := range regions {
		if c >= 0 && c < len(want) {
			want[c] = true
		}
	}
	// Class by class over whole planes keeps the reads sequential; best holds the running
	// maximum and sel (temporarily) the winning class.
	ws.b = grow(ws.b, plane)
	best := ws.b
	copy(best, scores[:plane])
	clear(sel)
	for c := 1; c < classes; c++ {
		p := scores[c*plane:][:plane]
		fc := float32(c)
		for i, v := range p {
			if v > best[i] {
				best[i], sel[i] = v, fc
			}
		}
	}
	for i, c := range sel {
		if int(c) < len(want) && want[int(c)] {
			sel[i] = 1
		} else {
			sel[i] = 0
		}
	}
	ResizeMask(dst, w, h, sel, rw, rh, false, ws)
	Feather(dst, w, h, ws)
}

// MinInto sets dst to the per-pixel minimum of dst and src.
func MinInto(dst, src []float32) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] = min(dst[i], v)
	}
}

// Clip01 clips every value into 0–1.
func Clip01(m []float32) {
	for i, v := range m {
		m[i] = min(1, max(0, v))
	}
}
