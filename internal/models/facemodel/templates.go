package facemodel

import (
	"fmt"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Template names one of FaceFusion's 5-point warp templates (left eye, right eye, nose tip,
// left and right mouth corner, image left/right); the points themselves are align.Templates.
type Template string

// FaceFusion 3.8.1's warp templates (face_helper.WARP_TEMPLATE_SET).
const (
	ArcFace112V1  Template = "arcface_112_v1"
	ArcFace112V2  Template = "arcface_112_v2"
	ArcFace128    Template = "arcface_128"
	DFLWholeFace  Template = "dfl_whole_face"
	FFHQ512       Template = "ffhq_512"
	MTCNN512      Template = "mtcnn_512"
	StyleGANEx384 Template = "styleganex_384"
)

// Points returns the template's five points scaled to a size×size crop.
func (t Template) Points(size int) ([5]geom.Pt, error) {
	tp, ok := align.Templates[string(t)]
	if !ok {
		return [5]geom.Pt{}, fmt.Errorf("facemodel: unknown warp template %q: use one of FaceFusion's (arcface_112_v1, arcface_112_v2, arcface_128, ffhq_512, mtcnn_512, …)", string(t))
	}
	return tp.Scaled(size), nil
}

// WarpMatrix is the frame→crop similarity that takes the five points onto the template at
// size×size: align.Estimate for the named template.
func WarpMatrix(five [5]geom.Pt, t Template, size int) (geom.Affine, error) {
	tp, ok := align.Templates[string(t)]
	if !ok {
		_, err := t.Points(size)
		return geom.Affine{}, err
	}
	return align.Estimate(five, tp, size), nil
}

// WarpFace is FaceFusion's warp_face_by_face_landmark_5: dst (square, the model's or the
// pixel-boost size) becomes the face warped onto the template, the frame's edge replicated.
// It returns the frame→crop map, which paste-back inverts.
func WarpFace(dst, frame *raster.Image, five [5]geom.Pt, t Template) (geom.Affine, error) {
	m, err := WarpMatrix(five, t, dst.W)
	if err != nil {
		return m, err
	}
	align.WarpCrop(dst, frame, m)
	return m, nil
}
