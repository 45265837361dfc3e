package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
)

// cmdFaces is `facefusion faces -t IMAGE [run flags]`: the faces the job's detector, landmarker
// and recognizer find in IMAGE, in face_selector_order, and the ones its selector picks, as JSON
// in the shape of the FaceFusion oracle's faces.py (what the conformance suite compares). It
// takes run's flags and job file; -s and -o are not needed.
func cmdFaces(args []string, w io.Writer) error {
	cfg, err := job.ParseLoose(args)
	if err != nil {
		if errors.Is(err, job.ErrHelp) {
			return err
		}
		return fault.AsUsage(err)
	}
	if cfg.TargetPath == "" {
		return fault.AsUsage(fmt.Errorf("faces: -t IMAGE is required (facefusion faces -t IMAGE [run flags])"))
	}
	d, err := pipeline.FindFaces(cfg, useLog(cfg))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(d)
}
