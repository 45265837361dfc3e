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

// Recognizer is FaceFusion's arcface_w600k_r50 on a session, batched up to the session's
// MaxBatch.
type Recognizer struct {
	sess *infer.Session
	crop *raster.Image
}

// NewRecognizer opens arcface_w600k_r50.onnx from cfg.ModelsDir.
func NewRecognizer(cfg infer.SessionConfig) (*Recognizer, error) {
	s, err := openModel("arcface_w600k_r50", cfg)
	if err != nil {
		return nil, err
	}
	return &Recognizer{sess: s, crop: raster.New(facemodel.ArcFaceSize, facemodel.ArcFaceSize)}, nil
}

// Embed writes the embedding of each item's face into out[i] (len(out) ≥ len(items)),
// running up to MaxBatch faces per inference.
func (r *Recognizer) Embed(items []FaceRef, out []face.Embedding) error {
	if r.sess == nil {
		return fmt.Errorf("model arcface_w600k_r50: Embed after Close")
	}
	if len(out) < len(items) {
		return fmt.Errorf("model arcface_w600k_r50: %d faces but room for %d embeddings", len(items), len(out))
	}
	in, res := r.sess.Inputs()[0], r.sess.Outputs()[0]
	b := r.sess.MaxBatch()
	for lo := 0; lo < len(items); lo += b {
		hi := min(len(items), lo+b)
		for i := lo; i < hi; i++ {
			facemodel.PrepareArcFace(in.Float32()[(i-lo)*in.ItemLen():], r.crop, items[i].Frame, items[i].Five)
		}
		if err := r.sess.Run(hi - lo); err != nil {
			return err
		}
		for i := lo; i < hi; i++ {
			e, err := facemodel.NewEmbedding(res.Float32()[(i-lo)*res.ItemLen():][:res.ItemLen()])
			if err != nil {
				return fmt.Errorf("model arcface_w600k_r50 %s: %w", r.sess.Path(), err)
			}
			out[i] = e
		}
	}
	return nil
}

// Close releases the session.
func (r *Recognizer) Close() error {
	if r.sess == nil {
		return nil
	}
	err := r.sess.Close()
	r.sess = nil
	return err
}
