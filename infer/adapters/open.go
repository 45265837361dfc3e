// Package adapters runs FaceFusion's models and the embedded default's BlazeFace on ONNX Runtime
// sessions (package infer): each adapter packs frames and crops into a session's inputs with
// internal/facemodel and internal/align, runs it and turns the outputs back into faces, points,
// embeddings and pixels. The models' facts come from infer/catalog.
package adapters

import (
	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/catalog"
)

// openModel opens FaceFusion's model name from cfg.ModelsDir, checked against its catalog entry.
func openModel(name string, cfg infer.SessionConfig) (*infer.Session, error) {
	m, err := catalog.Lookup(name)
	if err != nil {
		return nil, err
	}
	return infer.OpenSession(m.Spec(), cfg)
}
