// Package align cuts faces out of frames and puts them back the way FaceFusion 3.8.1 does:
// warp templates and the 5-point similarity, the crop warp, model tensor packing (float32
// and float16), FaceFusion's box, occlusion and region masks, paste-back and the enhancer
// blend. Everything here is pure Go over caller-owned buffers, so the per-frame path does
// not allocate.
//
// Frames here are RGB; FaceFusion's are BGR. Where FaceFusion flips channels for a model,
// the Norm passed to Pack says which order the model wants.
package align

import "github.com/facefusion-hpc/facefusion/internal/geom"

// Template is a warp template: where FaceFusion puts the 5 face points (left eye, right
// eye, nose tip, left and right mouth corner, in image left/right) inside a crop, as
// fractions of the crop size.
type Template [5]geom.Pt

// FaceFusion 3.8.1's WARP_TEMPLATE_SET (facefusion/face_helper.py).
var (
	ArcFace112V1  = Template{{X: .35473214, Y: .45658929}, {X: .64526786, Y: .45658929}, {X: .5, Y: .61154464}, {X: .37913393, Y: .776875}, {X: .62086607, Y: .776875}}
	ArcFace112V2  = Template{{X: .34191607, Y: .46157411}, {X: .65653393, Y: .45983393}, {X: .500225, Y: .64050536}, {X: .37097589, Y: .82469196}, {X: .63151696, Y: .82325089}}
	ArcFace128    = Template{{X: .36167656, Y: .40387734}, {X: .63696719, Y: .40235469}, {X: .50019687, Y: .56044219}, {X: .38710391, Y: .72160547}, {X: .61507734, Y: .72034453}}
	DFLWholeFace  = Template{{X: .35342266, Y: .39285716}, {X: .62797622, Y: .39285716}, {X: .48660713, Y: .5401786}, {X: .38839287, Y: .68750011}, {X: .59821427, Y: .68750011}}
	FFHQ512       = Template{{X: .37691676, Y: .46864664}, {X: .62285697, Y: .46912813}, {X: .50123859, Y: .61331904}, {X: .39308822, Y: .725411}, {X: .61150205, Y: .72490465}}
	MTCNN512      = Template{{X: .36562865, Y: .46733799}, {X: .63305391, Y: .46585885}, {X: .50019127, Y: .61942959}, {X: .39032951, Y: .77598822}, {X: .61178945, Y: .77476328}}
	StyleGANEx384 = Template{{X: .42353745, Y: .52289879}, {X: .57725008, Y: .52319972}, {X: .50123859, Y: .61331904}, {X: .43364461, Y: .68337652}, {X: .57015325, Y: .68306005}}
)

// Templates maps FaceFusion's template names (as its model options spell them) to the data.
var Templates = map[string]Template{
	"arcface_112_v1": ArcFace112V1,
	"arcface_112_v2": ArcFace112V2,
	"arcface_128":    ArcFace128,
	"dfl_whole_face": DFLWholeFace,
	"ffhq_512":       FFHQ512,
	"mtcnn_512":      MTCNN512,
	"styleganex_384": StyleGANEx384,
}

// Scaled is the template in pixels of a size×size crop.
func (t Template) Scaled(size int) [5]geom.Pt {
	var p [5]geom.Pt
	for i, q := range t {
		p[i] = q.Scale(float64(size))
	}
	return p
}

// Estimate is the frame→crop map that puts the five face points onto the template in a
// size×size crop, as FaceFusion's cv2.estimateAffinePartial2D(RANSAC, threshold 100): the
// least-squares similarity over the points RANSAC keeps. With the landmarks of one face all
// five usually lie within 100 px of the fit; they do not for large crops (gpen_bfr_2048) or
// poor landmarks, where dropping the same points as OpenCV matters.
func Estimate(five [5]geom.Pt, t Template, size int) geom.Affine {
	dst := t.Scaled(size)
	if m, ok := partialAffine(&five, &dst); ok {
		return m
	}
	return geom.Similarity(five[:], dst[:])
}
