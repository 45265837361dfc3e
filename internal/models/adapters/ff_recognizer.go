package adapters

import (
	"fmt"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// FaceRef is one face in one frame as the model adapters take it: the frame and the face's
// five points in FaceFusion's order (left eye, right eye, nose, left and right mouth corner).
type FaceRef struct {
	Frame *raster.Image
	Five  [5]geom.Pt
	// Embedding is the face's identity where a processor needs it (the face swapper at a
	// --face-swapper-weight other than 0.5); nil elsewhere.
	Embedding *face.Embedding
	// Landmarks are the face's 68 points, for the swapper's area mask (nil where not needed).
	Landmarks *[68]geom.Pt
}

// Recognizer is a face recognizer on an engine, up to its MaxBatch faces per claim; the engine
// batches them with the other workers' faces. Two models share it: FaceFusion's
// arcface_w600k_r50 (NewRecognizer) and the embedded default's fr_feature (NewFRFeature), which
// differ in the five points they align by (Points), the crop and the normalisation.
type Recognizer struct {
	model   *catalog.Model
	eng     *infer.Engine
	crop    *raster.Image // arcface's warped crop (fr_feature warps straight into the tensor)
	prepare func(r *Recognizer, dst []float32, it FaceRef)
	points  func(f *face.Face) [5]geom.Pt
}

// NewRecognizer opens arcface_w600k_r50.onnx from cfg.ModelsDir.
func NewRecognizer(cfg infer.SessionConfig) (*Recognizer, error) {
	return openRecognizer(facemodel.ArcFace, cfg,
		func(r *Recognizer, dst []float32, it FaceRef) {
			facemodel.PrepareArcFace(dst, r.crop, it.Frame, it.Five)
		},
		func(f *face.Face) [5]geom.Pt { return f.Five })
}

// NewFRFeature opens the embedded default's recognizer, fr_feature.onnx, from cfg.ModelsDir
// (`make fetch` puts it beside BlazeFace): the five points of its own package
// (facemodel.FRFeatureFive, from the 68 landmarks), an affine crop of the eyes and nose,
// (v − 127)/128. Compare its embeddings by facemodel.Cosine.
func NewFRFeature(cfg infer.SessionConfig) (*Recognizer, error) {
	return openRecognizer(facemodel.FRFeature, cfg,
		func(_ *Recognizer, dst []float32, it FaceRef) { facemodel.PrepareFRFeature(dst, it.Frame, it.Five) },
		func(f *face.Face) [5]geom.Pt { return facemodel.FRFeatureFive(&f.Landmarks) })
}

// OpenRecognizer opens the recognizer the catalog calls name (arcface_w600k_r50 or fr_feature).
func OpenRecognizer(name string, cfg infer.SessionConfig) (*Recognizer, error) {
	switch name {
	case facemodel.ArcFace.Name:
		return NewRecognizer(cfg)
	case facemodel.FRFeature.Name:
		return NewFRFeature(cfg)
	}
	return nil, fmt.Errorf("model %s: not a face recognizer: use %s or %s", name, facemodel.ArcFace.Name, facemodel.FRFeature.Name)
}

func openRecognizer(m *catalog.Model, cfg infer.SessionConfig, prepare func(*Recognizer, []float32, FaceRef), points func(*face.Face) [5]geom.Pt) (*Recognizer, error) {
	e, err := openModel(m.Name, cfg)
	if err != nil {
		return nil, err
	}
	return &Recognizer{model: m, eng: e, crop: raster.New(m.Size, m.Size), prepare: prepare, points: points}, nil
}

// Name is the recognizer's catalog name.
func (r *Recognizer) Name() string { return r.model.Name }

// Points are the five points of f that this recognizer's FaceRef.Five takes: FaceFusion's for
// arcface (f.Five), the package's own from the 68 landmarks for fr_feature.
func (r *Recognizer) Points(f *face.Face) [5]geom.Pt { return r.points(f) }

// Embed writes the embedding of each item's face into out[i] (len(out) ≥ len(items)),
// running up to MaxBatch faces per inference.
func (r *Recognizer) Embed(items []FaceRef, out []face.Embedding) error {
	if r.eng == nil {
		return fmt.Errorf("model %s: Embed after Close", r.model.Name)
	}
	if len(out) < len(items) {
		return fmt.Errorf("model %s: %d faces but room for %d embeddings", r.model.Name, len(items), len(out))
	}
	b := r.eng.MaxBatch()
	for lo := 0; lo < len(items); lo += b {
		if err := r.embed(items[lo:min(len(items), lo+b)], out[lo:]); err != nil {
			return err
		}
	}
	return nil
}

// embed runs one claim of up to MaxBatch faces.
func (r *Recognizer) embed(items []FaceRef, out []face.Embedding) error {
	l, err := r.eng.Claim(len(items))
	if err != nil {
		return err
	}
	defer l.Release()
	for i, it := range items {
		r.prepare(r, l.In(0, i).Float32(), it)
	}
	if err := l.Run(); err != nil {
		return err
	}
	for i := range items {
		e, err := facemodel.NewEmbedding(l.Output(0, i).Float32())
		if err != nil {
			return fmt.Errorf("model %s %s: %w", r.model.Name, r.eng.Path(), err)
		}
		out[i] = e
	}
	return nil
}

// Close lets the engine go (closing it when it is the recognizer's own).
func (r *Recognizer) Close() error {
	if r.eng == nil {
		return nil
	}
	err := r.eng.Close()
	r.eng = nil
	return err
}
