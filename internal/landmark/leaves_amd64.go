package landmark

// addLeaves is addLeavesGo in SSE. Every offset must start a whole leaf inside leaves: the
// callers' offsets come from walking the trees Load checked.
//
//go:noescape
func addLeaves(acc *[leafLen]float32, leaves []float32, offs []int32)

// addDiffs is addDiffsGo in SSE, under addLeaves' condition for offs and minus alike, which are
// the same length.
//
//go:noescape
func addDiffs(acc *[leafLen]float32, leaves []float32, offs, minus []int32)
