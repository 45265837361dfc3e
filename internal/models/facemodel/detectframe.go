package facemodel

import (
	"math"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// ManyDetectors is face_detector_model many: FaceFusion runs these in this order on every
// frame (yunet is not one of them) and pools their faces.
var ManyDetectors = []string{"retinaface", "scrfd", "yolo_face"}

// NMSThreshold is FaceFusion's get_nms_threshold: the IoU above which a lower-scored face is
// dropped, 0.1 for many, else by how many angles are searched (repeats count): 0.4 for one,
// 0.3, 0.2 and 0.1 for two, three and four, 0.4 for more.
func NMSThreshold(model string, angles int) float64 {
	if model == "many" {
		return 0.1
	}
	switch angles {
	case 2:
		return 0.3
	case 3:
		return 0.2
	case 4:
		return 0.1
	}
	return DefaultNMSThreshold
}

// MarginPixels is FaceFusion's prepare_margin: each of margin's top, right, bottom, left
// percentages maps 0..100 onto 0..0.5 of the frame's height (top, bottom) or width (right,
// left), numpy.interp's arithmetic, truncated to whole pixels.
func MarginPixels(w, h int, margin [4]int) (top, right, bottom, left int) {
	part := func(side, m int) int {
		v := 0.5
		if m < 100 {
			v = (0.5-0.0)/(100.0-0.0)*(float64(m)-0) + 0
		}
		return int(float64(side) * v)
	}
	return part(h, margin[0]), part(w, margin[1]), part(h, margin[2]), part(w, margin[3])
}

// PadFrame is numpy.pad of frame with black: top, right, bottom, left pixels on each side.
// dst is reused when it has room; the padded frame is returned.
func PadFrame(dst, frame *raster.Image, top, right, bottom, left int) *raster.Image {
	w, h := frame.W+left+right, frame.H+top+bottom
	if dst == nil || cap(dst.Pix) < 3*w*h {
		dst = raster.New(w, h)
	} else {
		*dst = raster.Image{Pix: dst.Pix[:3*w*h], Stride: 3 * w, W: w, H: h}
		clear(dst.Pix)
	}
	for y := range frame.H {
		copy(dst.Pix[(y+top)*dst.Stride+3*left:], frame.Pix[y*frame.Stride:][:3*frame.W])
	}
	return dst
}

// Rotation is FaceFusion's create_rotation_matrix_and_size: cv2.getRotationMatrix2D about the
// frame's centre by angle degrees (counter-clockwise on screen), shifted so the turned frame
// fits an rw×rh frame, whose sides are the bounding extent truncated to whole pixels.
func Rotation(angle float64, w, h int) (m geom.Affine, rw, rh int) {
	a := angle * math.Pi / 180
	alpha, beta := math.Cos(a), math.Sin(a)
	cx, cy := float64(w)/2, float64(h)/2
	m = geom.Affine{A: alpha, B: beta, C: (1-alpha)*cx - beta*cy, D: -beta, E: alpha, F: beta*cx + (1-alpha)*cy}
	sw := math.Abs(m.A)*float64(w) + math.Abs(m.B)*float64(h)
	sh := math.Abs(m.D)*float64(w) + math.Abs(m.E)*float64(h)
	m.C += (sw - float64(w)) * 0.5
	m.F += (sh - float64(h)) * 0.5
	return m, int(sw), int(sh)
}

// TransformDetection maps a face found in a turned frame back by m (the turn's inverse), as
// FaceFusion's transform_bounding_box and transform_points: the box becomes the bounds of its
// four mapped corners, the points are mapped one by one.
func TransformDetection(d *face.Detection, m geom.Affine) {
	b := d.Box
	corners := []geom.Pt{{X: b.X0, Y: b.Y0}, {X: b.X1, Y: b.Y0}, {X: b.X1, Y: b.Y1}, {X: b.X0, Y: b.Y1}}
	for i := range corners {
		corners[i] = m.Apply(corners[i])
	}
	d.Box = normRect(geom.Bounds(corners))
	for i := range d.Five {
		d.Five[i] = m.Apply(d.Five[i])
	}
}

// ShiftDetection moves a face found in a padded frame back by the padding's left and top.
func ShiftDetection(d *face.Detection, left, top int) {
	dx, dy := float64(left), float64(top)
	d.Box = geom.Rect{X0: d.Box.X0 - dx, Y0: d.Box.Y0 - dy, X1: d.Box.X1 - dx, Y1: d.Box.Y1 - dy}
	for i := range d.Five {
		d.Five[i] = geom.Pt{X: d.Five[i].X - dx, Y: d.Five[i].Y - dy}
	}
}
