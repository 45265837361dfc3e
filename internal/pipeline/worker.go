package pipeline

import "github.com/facefusion-hpc/facefusion/internal/raster"

// passWorker leaves frames untouched (processors = none).
type passWorker struct{}

func (passWorker) Process(*raster.Image) error { return nil }
