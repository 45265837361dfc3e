package adapters

import (
	"encoding/binary"
	"fmt"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Classifier is FaceFusion's face classifier, fairface, on an engine: a face's gender, age
// range and race from its five points ('5/68'), one face per run as FaceFusion runs it.
type Classifier struct {
	eng  *infer.Engine
	crop *raster.Image
}

// NewClassifier opens fairface.onnx from cfg.ModelsDir.
func NewClassifier(cfg infer.SessionConfig) (*Classifier, error) {
	cfg.MaxBatch = 1
	e, err := openModel(facemodel.FairFace.Name, cfg)
	if err != nil {
		return nil, err
	}
	return &Classifier{eng: e, crop: raster.New(facemodel.FairFace.Size, facemodel.FairFace.Size)}, nil
}

// Classify is FaceFusion's classify_face for the face at it.
func (c *Classifier) Classify(it FaceRef) (face.Class, error) {
	if c.eng == nil {
		return face.Class{}, fmt.Errorf("model fairface: Classify after Close")
	}
	l, err := c.eng.Claim(1)
	if err != nil {
		return face.Class{}, err
	}
	defer l.Release()
	facemodel.PrepareFairFace(l.In(0, 0).Float32(), c.crop, it.Frame, it.Five)
	if err := l.Run(); err != nil {
		return face.Class{}, err
	}
	var ids [3]int64 // FaceFusion unpacks the outputs as race, gender, age and reads each at [0]
	for k := range ids {
		b := l.Output(k, 0).Bytes()
		if len(b) < 8 {
			return face.Class{}, fmt.Errorf("model fairface %s: output %d holds %d bytes, want an int64 id", c.eng.Path(), k, len(b))
		}
		ids[k] = int64(binary.LittleEndian.Uint64(b))
	}
	return facemodel.Categorize(ids[0], ids[1], ids[2]), nil
}

// Close lets the engine go (closing it when it is the classifier's own).
func (c *Classifier) Close() error {
	if c.eng == nil {
		return nil
	}
	err := c.eng.Close()
	c.eng = nil
	return err
}
