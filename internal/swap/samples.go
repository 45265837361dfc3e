package swap

import (
	"math"
	"slices"
)

// A cover over one of the skin sample discs (a microphone at the mouth's corner, a hand on a
// cheek) puts its colour among the skin's: the median holds, but the spread widens and the
// skin's axis (see skinAxis) turns towards the cover's hue, so that the cover, and anything
// of its hue, counts as more of the skin's colour. A disc whose own median colour lies far
// from the other discs' is left out, as long as most discs remain.

const (
	// occDiscChroma and occDiscBright are how far (log-chromaticity distance, log-brightness)
	// a disc's median may lie from the median of the discs' medians and still be skin: the
	// skin's tone varies little over the face, its light more.
	occDiscChroma = 0.2
	occDiscBright = 0.6
)

// dropCoveredSamples removes from s.feat the samples of each disc (disc d holds samples
// starts[d]..starts[d+1]−1) whose median colour is far from the rest's, keeping at least half
// of the discs.
func (s *Swapper) dropCoveredSamples(starts []int) {
	n := len(starts) - 1
	var med [3][8]float32
	if n > len(med[0]) {
		return
	}
	for d := range n {
		for k := range 3 {
			if starts[d+1] == starts[d] {
				med[k][d] = float32(math.NaN())
				continue
			}
			s.dev = append(s.dev[:0], s.feat[k][starts[d]:starts[d+1]]...)
			slices.Sort(s.dev)
			med[k][d] = s.dev[len(s.dev)/2]
		}
	}
	var ref [3]float32
	for k := range 3 {
		s.dev = s.dev[:0]
		for _, v := range med[k][:n] {
			if !math.IsNaN(float64(v)) {
				s.dev = append(s.dev, v)
			}
		}
		if len(s.dev) == 0 {
			return
		}
		slices.Sort(s.dev)
		ref[k] = s.dev[len(s.dev)/2]
	}
	var odd [8]bool
	bad := 0
	for d := range n {
		da, db := float64(med[1][d]-ref[1]), float64(med[2][d]-ref[2])
		if math.Hypot(da, db) > occDiscChroma || math.Abs(float64(med[0][d]-ref[0])) > occDiscBright {
			odd[d] = true
			bad++
		}
	}
	if bad == 0 || 2*bad > n {
		return
	}
	j := 0
	for d := range n {
		if odd[d] {
			continue
		}
		for i := starts[d]; i < starts[d+1]; i++ {
			for k := range 3 {
				s.feat[k][j] = s.feat[k][i]
			}
			j++
		}
	}
	for k := range 3 {
		s.feat[k] = s.feat[k][:j]
	}
}
