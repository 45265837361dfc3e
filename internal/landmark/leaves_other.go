//go:build !amd64

package landmark

func addLeaves(acc *[leafLen]float32, leaves []float32, offs []int32) {
	addLeavesGo(acc, leaves, offs)
}

func addDiffs(acc *[leafLen]float32, leaves []float32, offs, minus []int32) {
	addDiffsGo(acc, leaves, offs, minus)
}
