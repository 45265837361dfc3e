// Package composite splits a batch's faces into rounds of one model call each, so that pasting
// each round's crops back into the frames gives what FaceFusion's face-by-face loop gives.
package composite

import (
	"image"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Rounds plans the rounds of a processor whose crops are Size pixels square and whose model
// call takes up to Limit faces. A face whose paste area overlaps that of an earlier face of the
// same frame in the round starts the next round: pasted after it, it sees its result, as in
// FaceFusion's sequential loop. One Rounds serves one processor, reused batch after batch.
type Rounds struct {
	size   int
	maps   []geom.Affine
	frames []*raster.Image
	areas  []image.Rectangle
}

// NewRounds makes the planner for crops of side size and model calls of up to limit faces.
func NewRounds(size, limit int) *Rounds {
	limit = max(1, limit)
	return &Rounds{
		size:   size,
		maps:   make([]geom.Affine, limit),
		frames: make([]*raster.Image, limit),
		areas:  make([]image.Rectangle, limit),
	}
}

// Each runs n faces round by round: face(i) is face i's frame and frame-to-crop map, and
// run(lo, hi, maps) processes faces lo..hi (maps[j] is face lo+j's map) and pastes them back
// before the next round is planned.
func (r *Rounds) Each(n int, face func(i int) (*raster.Image, geom.Affine), run func(lo, hi int, maps []geom.Affine) error) error {
	for lo := 0; lo < n; {
		k := r.plan(lo, n, face)
		if err := run(lo, lo+k, r.maps[:k]); err != nil {
			return err
		}
		lo += k
	}
	return nil
}

// plan is how many faces from lo (at least one) the next round takes.
func (r *Rounds) plan(lo, n int, face func(i int) (*raster.Image, geom.Affine)) int {
	k := 0
	for lo+k < n && k < len(r.maps) {
		frame, m := face(lo + k)
		r.maps[k], r.frames[k] = m, frame
		r.areas[k] = align.PasteArea(frame.W, frame.H, r.size, r.size, m).Inset(-2)
		if r.clashes(k) {
			break
		}
		k++
	}
	return k
}

// clashes reports whether face k of the round overlaps an earlier face of its frame.
func (r *Rounds) clashes(k int) bool {
	for i := range k {
		if r.frames[i] == r.frames[k] && r.areas[i].Overlaps(r.areas[k]) {
			return true
		}
	}
	return false
}
