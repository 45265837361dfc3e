package pipeline

import (
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/swap"
)

// passWorker leaves frames untouched (processors = none).
type passWorker struct{}

func (passWorker) Process(*raster.Image) error { return nil }

// swapWorker finds the selected faces of a frame and swaps the source face onto each.
type swapWorker struct {
	an   *Analyzer
	sw   *swap.Swapper
	mode string
}

func (w *swapWorker) Process(img *raster.Image) error {
	faces, err := w.an.Faces(img)
	if err != nil {
		return err
	}
	for i := range Select(faces, w.mode) {
		w.sw.Apply(img, &faces[i].Landmarks)
	}
	return nil
}
