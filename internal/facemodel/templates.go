package facemodel

import (
	"fmt"

	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Template is one of FaceFusion's 5-point warp templates, in crop units (0–1): left eye,
// right eye, nose tip, left and right mouth corner, image left/right.
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

var templatePoints = map[Template][5]geom.Pt{
	ArcFace112V1:  {{X: 0.35473214, Y: 0.45658929}, {X: 0.64526786, Y: 0.45658929}, {X: 0.50000000, Y: 0.61154464}, {X: 0.37913393, Y: 0.77687500}, {X: 0.62086607, Y: 0.77687500}},
	ArcFace112V2:  {{X: 0.34191607, Y: 0.46157411}, {X: 0.65653393, Y: 0.45983393}, {X: 0.50022500, Y: 0.64050536}, {X: 0.37097589, Y: 0.82469196}, {X: 0.63151696, Y: 0.82325089}},
	ArcFace128:    {{X: 0.36167656, Y: 0.40387734}, {X: 0.63696719, Y: 0.40235469}, {X: 0.50019687, Y: 0.56044219}, {X: 0.38710391, Y: 0.72160547}, {X: 0.61507734, Y: 0.72034453}},
	DFLWholeFace:  {{X: 0.35342266, Y: 0.39285716}, {X: 0.62797622, Y: 0.39285716}, {X: 0.48660713, Y: 0.54017860}, {X: 0.38839287, Y: 0.68750011}, {X: 0.59821427, Y: 0.68750011}},
	FFHQ512:       {{X: 0.37691676, Y: 0.46864664}, {X: 0.62285697, Y: 0.46912813}, {X: 0.50123859, Y: 0.61331904}, {X: 0.39308822, Y: 0.72541100}, {X: 0.61150205, Y: 0.72490465}},
	MTCNN512:      {{X: 0.36562865, Y: 0.46733799}, {X: 0.63305391, Y: 0.46585885}, {X: 0.50019127, Y: 0.61942959}, {X: 0.39032951, Y: 0.77598822}, {X: 0.61178945, Y: 0.77476328}},
	StyleGANEx384: {{X: 0.42353745, Y: 0.52289879}, {X: 0.57725008, Y: 0.52319972}, {X: 0.50123859, Y: 0.61331904}, {X: 0.43364461, Y: 0.68337652}, {X: 0.57015325, Y: 0.68306005}},
}

// Points returns the template's five points scaled to a size×size crop.
func (t Template) Points(size int) ([5]geom.Pt, error) {
	p, ok := templatePoints[t]
	if !ok {
		return p, fmt.Errorf("facemodel: unknown warp template %q: use one of FaceFusion's (arcface_112_v1, arcface_112_v2, arcface_128, ffhq_512, mtcnn_512, …)", string(t))
	}
	for i := range p {
		p[i] = p[i].Scale(float64(size))
	}
	return p, nil
}

// WarpMatrix is the frame→crop similarity that takes the five points onto the template at
// size×size. FaceFusion fits it with cv2.estimateAffinePartial2D (RANSAC, 100 px threshold);
// with five points and that threshold every point is an inlier, and OpenCV's refinement then
// converges to the least-squares similarity computed here.
func WarpMatrix(five [5]geom.Pt, t Template, size int) (geom.Affine, error) {
	dst, err := t.Points(size)
	if err != nil {
		return geom.Affine{}, err
	}
	return geom.Similarity(five[:], dst[:]), nil
}

// WarpFace is FaceFusion's warp_face_by_face_landmark_5: dst (square, the model's or the
// pixel-boost size) becomes the face warped onto the template, the frame's edge replicated.
// It returns the frame→crop map, which paste-back inverts.
func WarpFace(dst, frame *raster.Image, five [5]geom.Pt, t Template) (geom.Affine, error) {
	m, err := WarpMatrix(five, t, dst.W)
	if err != nil {
		return m, err
	}
	WarpCrop(dst, frame, m, BorderReplicate)
	return m, nil
}
