// Package adapters runs FaceFusion's models and the embedded default's BlazeFace on ONNX Runtime
// (package infer): each adapter packs frames and crops straight into its items of an engine's
// batch buffers with internal/models/facemodel and internal/align, runs them and turns the outputs back
// into faces, points, embeddings and pixels. The models' facts come from internal/models/catalog.
//
// An adapter belongs to one worker (its crops and scratch are its own); its engines are the
// rank's, shared by every worker's adapters, when the SessionConfig carries an infer.EngineSet.
// An adapter never holds items of one engine while it waits for another's, so workers cannot
// deadlock on the shared batches.
package adapters

import (
	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
)

// openModel opens FaceFusion's model name from cfg.ModelsDir, checked against its catalog entry,
// as an engine: the rank's shared one when cfg.Engines is set (every worker's adapters then run
// on one session per model), else one of the adapter's own.
func openModel(name string, cfg infer.SessionConfig) (*infer.Engine, error) {
	m, err := catalog.Lookup(name)
	if err != nil {
		return nil, err
	}
	return infer.OpenEngine(m.Spec(), cfg)
}
