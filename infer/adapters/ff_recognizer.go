package adapters

import (
	"fmt"
	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/face"

	"github.com/facefusion-hpc/facefusion/internal/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// FaceRef is one face in one frame as the model adapters take it: the frame and the face's
// five points in FaceFusion's order (left eye, right eye, nose, left and right mouth corner).
type FaceRef struct {
	Frame *raster.Image
	Five  [5]geom.Pt
}

// Recognizer is FaceFusion's arcface_w600k_r50 on an engine, up to its MaxBatch faces per
// claim; the engine batches them with the other workers' faces.
type Recognizer struct {
	eng  *infer.Engine
	crop *raster.Image
}

// NewRecognizer opens arcface_w600k_r50.onnx from cfg.ModelsDir.
func NewRecognizer(cfg infer.SessionConfig) (*Recognizer, error) {
	e, err := openModel(facemodel.ArcFace.Name, cfg)
	if err != nil {
		return nil, err
	}
	return &Recognizer{eng: e, crop: raster.New(facemodel.ArcFaceSize, facemodel.ArcFaceSize)}, nil
}

// Embed writes the embedding of each item's face into out[i] (len(out) ≥ len(items)),
// running up to MaxBatch faces per inference.
func (r *Recognizer) Embed(items []FaceRef, out []face.Embedding) error {
	if r.eng == nil {
		return fmt.Errorf("model arcface_w600k_r50: Embed after Close")
	}
	if len(out) < len(items) {
		return fmt.Errorf("model arcface_w600k_r50: %d faces but room for %d embeddings", len(items), len(out))
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
		facemodel.PrepareArcFace(l.In(0, i).Float32(), r.crop, it.Frame, it.Five)
	}
	if err := l.Run(); err != nil {
		return err
	}
	for i := range items {
		e, err := facemodel.NewEmbedding(l.Output(0, i).Float32())
		if err != nil {
			return fmt.Errorf("model arcface_w600k_r50 %s: %w", r.eng.Path(), err)
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
