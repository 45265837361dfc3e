package facemodel

import (
	"fmt"
	"math"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
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
		return e, fmt.Errorf("facemodel: face recognizer gave %d values, want %d: is the model file arcface_w600k_r50.onnx or fr_feature.onnx?", len(raw), EmbeddingLen)
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
	return min(1, max(0, (1-Cosine(a, b))/2))
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

// FRFeature is the embedded default's recognizer, fr_feature from npm
// faceplugin-face-recognition-js (catalog entry): a 112×112 crop in, 512 values out, compared
// by cosine. Its package's lib/fr_feature.js is the reference for everything below.
var FRFeature = catalog.Must("fr_feature")

// frTable is fr_feature's normalisation, (v − 127)/128 per 8-bit sample.
var frTable = table(FRFeature.Norm)

// FRFeatureFive is the package's convert68pts5pts: the five points it aligns by, from the 68
// landmarks: the eyes' centres as the mean of four points each (37, 38, 40, 41 and 43, 44,
// 46, 47: the lids, not the corners, unlike Landmarks68.Five), the nose tip 30, and each mouth
// corner as the mean of the outer and inner lip corner (48 and 60, 54 and 64).
func FRFeatureFive(l *face.Landmarks68) [5]geom.Pt {
	mean := func(idx ...int) geom.Pt {
		var p geom.Pt
		for _, i := range idx {
			p = p.Add(l[i])
		}
		return p.Scale(1 / float64(len(idx)))
	}
	return [5]geom.Pt{mean(37, 38, 40, 41), mean(43, 44, 46, 47), l[30], mean(48, 60), mean(54, 64)}
}

// FRFeatureMatrix is the frame→crop map of fr_feature's crop: the package's
// cv.getAffineTransform of the first three of the five points (the eyes and the nose tip) onto
// the first three of its REFERENCE_FACIAL_POINTS, which are arcface_112_v2's in pixels. The
// mouth corners do not take part. ok is false when the three points are degenerate.
func FRFeatureMatrix(five [5]geom.Pt) (geom.Affine, bool) {
	t := align.Templates[FRFeature.Template].Scaled(FRFeature.Size)
	return geom.Triangle([3]geom.Pt{five[0], five[1], five[2]}, [3]geom.Pt{t[0], t[1], t[2]})
}

// PrepareFRFeature writes fr_feature's input for the face with the five points FRFeatureFive
// gives (1·3·112·112 floats, NCHW, RGB, (v − 127)/128) into dst: the package's
// cv.warpAffine with its defaults, bilinear with a black border. Degenerate points give an
// all-black crop.
func PrepareFRFeature(dst []float32, frame *raster.Image, five [5]geom.Pt) {
	n := FRFeature.Size
	m, ok := FRFeatureMatrix(five)
	if !ok {
		t := frTable
		for i := range dst[:3*n*n] {
			dst[i] = t[i/(n*n)][0]
		}
		return
	}
	warpTensorBlack(dst, n, n, frame, m, FRFeature.Norm, &frTable)
}

// Cosine is the cosine similarity of two embeddings (the dot product of their unit vectors):
// about 1 for one person, near 0 for two. (fr_feature's package compares features with its
// matchFeature, which subtracts the two features' element-wise mean from each, leaving one the
// negative of the other, so it always returns −1; this project uses the plain cosine.)
func Cosine(a, b *face.Embedding) float64 {
	var dot float64
	for i := range a.Norm {
		dot += float64(a.Norm[i]) * float64(b.Norm[i])
	}
	return dot
}
