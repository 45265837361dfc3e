package adapters

import (
	"sync"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/processors/composite"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// The adapters hand back crops; these paste them as the face_swapper and face_enhancer
// processors do (internal/processors), so that the tests see the frames FaceFusion gives.

var (
	roundsMu sync.Mutex
	rounds   = map[any]*composite.Rounds{} // one planner per adapter, as a processor keeps one
)

func roundsOf(key any, size, group int) *composite.Rounds {
	roundsMu.Lock()
	defer roundsMu.Unlock()
	r, ok := rounds[key]
	if !ok {
		r = composite.NewRounds(size, group)
		rounds[key] = r
	}
	return r
}

// swapInto swaps the source identity into each item's face, in place on its frame.
func swapInto(s *FaceSwapper, items []FaceRef) error {
	if err := s.Ready(); err != nil {
		return err
	}
	face := func(i int) (*raster.Image, geom.Affine) { return items[i].Frame, s.Align(items[i].Five) }
	return roundsOf(s, s.CropSize(), s.Group()).Each(len(items), face, func(lo, hi int, maps []geom.Affine) error {
		outs, masks, err := s.SwapCrops(items[lo:hi], maps)
		if err != nil {
			return err
		}
		for i, out := range outs {
			align.PasteBackFloat(items[lo+i].Frame, out, masks[i], maps[i])
		}
		return nil
	})
}

// enhanceInto enhances each item's face in place on its frame.
func enhanceInto(e *FaceEnhancer, items []FaceRef) error {
	face := func(i int) (*raster.Image, geom.Affine) { return items[i].Frame, e.Align(items[i].Five) }
	return roundsOf(e, e.CropSize(), e.Group()).Each(len(items), face, func(lo, hi int, maps []geom.Affine) error {
		crops, masks, err := e.EnhanceCrops(items[lo:hi], maps)
		if err != nil {
			return err
		}
		for i, crop := range crops {
			align.PasteBackEnhanced(items[lo+i].Frame, crop, masks[i], maps[i], e.Blend())
		}
		return nil
	})
}
