package landmark

// The shape predictor spends most of its time adding leaves: each of a cascade's 500 trees adds
// its leaf's 136 floats to the shape, and the 65 MB of leaves do not fit any cache. So a cascade
// first walks all its trees (the walks read only the cascade's features, not the shape), then
// adds the leaves it reached in one call that vector-adds them and asks for the leaves a few
// trees ahead while it adds. Every sum is still the same float32 additions in the same tree
// order, element by element, so the result is bit for bit the scalar loop's (addLeavesGo).

// leafLen is the number of floats in a leaf: a (dx, dy) offset for each part.
const leafLen = 2 * numParts

// addLeavesGo adds, in order, the leaves starting at each of offs to acc: the portable version
// of addLeaves, and the reference it is tested against.
func addLeavesGo(acc *[leafLen]float32, leaves []float32, offs []int32) {
	for _, o := range offs {
		leaf := (*[leafLen]float32)(leaves[o : int(o)+leafLen])
		for k := range acc {
			acc[k] += leaf[k]
		}
	}
}

// addDiffsGo adds, in order, the difference between the leaf at offs[i] and the one at
// minus[i] to acc (the difference rounded to float32 first): the portable version of addDiffs.
func addDiffsGo(acc *[leafLen]float32, leaves []float32, offs, minus []int32) {
	for i, o := range offs {
		a := (*[leafLen]float32)(leaves[o : int(o)+leafLen])
		b := (*[leafLen]float32)(leaves[minus[i] : int(minus[i])+leafLen])
		for k := range acc {
			acc[k] += a[k] - b[k]
		}
	}
}
