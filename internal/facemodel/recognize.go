package facemodel

import (
	"fmt"
	"math"

	"github.com/facefusion-hpc/facefusion/infer/catalog"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// ArcFace is arcface_w600k_r50's catalog entry, the recognizer the adapter and the pipeline open: an ArcFaceSize crop on its template in, an
// EmbeddingLen embedding out. FaceFusion reverses its BGR crop to RGB and maps it to v/127.5 − 1.
var ArcFace = catalog.Must("arcface_w600k_r50")

// ArcFaceSize is the recognizer's crop side.
var ArcFaceSize = ArcFace.Size

// EmbeddingLen is the width of an identity embedding (arcface's output).
const EmbeddingLen = face.EmbeddingLen

// DefaultReferenceDistance is FaceFusion's --reference-face-distance.
const DefaultReferenceDistance = 0.3

// ArcFaceMatrix is the frame→crop map of the recognizer's crop.
func ArcFaceMatrix(five [5]geom.Pt) geom.Affine {
	return align.Estimate(five, align.Templates[ArcFace.Template], ArcFaceSize)
}

// PrepareArcFace writes the recognizer input for the face with the given five points
// (1·3·112·112 floats, NCHW, RGB, v/127.5 − 1; the frame's edge replicated) into dst. crop is
// the caller's 112×112 scratch image, which receives the warped face.
func PrepareArcFace(dst []float32, crop, frame *raster.Image, five [5]geom.Pt) {
	align.WarpCrop(crop, frame, ArcFaceMatrix(five))
	t := table(ArcFace.Norm)
	tensorFromImage(dst, crop, ArcFace.Norm, &t)
}

// NewEmbedding takes the recognizer's output (512 floats).
func NewEmbedding(raw []float32) (face.Embedding, error) {
	var e face.Embedding
	if len(raw) < EmbeddingLen {
		return e, fmt.Errorf("facemodel: face recognizer gave %d values, want %d: is the model file arcface_w600k_r50.onnx?", len(raw), EmbeddingLen)
	}
	copy(e.Raw[:], raw)
	normalize(e.Norm[:], e.Raw[:])
	return e, nil
}

// normalize writes v/‖v‖ to dst (zero stays zero).
func normalize(dst, v []float32) {
	n := norm(v)
	if n == 0 {
		clear(dst)
		return
	}
	for i, x := range v {
		dst[i] = float32(float64(x) / n)
	}
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// Distance is FaceFusion's face distance on [0, 1]: (1 − cos)/2 of the two normed
// embeddings (calculate_face_distance, then interp [0, 2] → [0, 1]). A face matches a
// reference when Distance < --reference-face-distance.
func Distance(a, b *face.Embedding) float64 {
	var dot float64
	for i := range a.Norm {
		dot += float64(a.Norm[i]) * float64(b.Norm[i])
	}
	return min(1, max(0, (1-dot)/2))
}

// AverageEmbeddings is FaceFusion's average_face_identity over several source faces: the
// element-wise mean of the raw embeddings and, separately, of the normed ones (the mean of
// unit vectors is not rescaled to unit length, exactly as FaceFusion leaves it).
func AverageEmbeddings(es []face.Embedding) face.Embedding {
	var out face.Embedding
	if len(es) == 0 {
		return out
	}
	var raw, nrm [EmbeddingLen]float64
	for i := range es {
		for j := range raw {
			raw[j] += float64(es[i].Raw[j])
			nrm[j] += float64(es[i].Norm[j])
		}
	}
	n := float64(len(es))
	for j := range raw {
		out.Raw[j], out.Norm[j] = float32(raw[j]/n), float32(nrm[j]/n)
	}
	return out
}
