package landmark

import (
	"math"
	"math/rand"
	"testing"
)

// TestAddLeavesMatchesGo holds the vector sums (SSE on amd64) to the scalar loops bit for bit:
// random leaves of every magnitude, subnormals and signed zeros among them, summed in a random
// order of offsets, repeats included. A reordered or fused addition, a lane out of place or a
// block of the 136 floats skipped changes some sum.
func TestAddLeavesMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	const nleaves = 300
	leaves := make([]float32, nleaves*leafLen)
	for i := range leaves {
		switch rng.Intn(8) {
		case 0:
			leaves[i] = math.Float32frombits(rng.Uint32() & 0x807fffff) // subnormal or ±0
		case 1:
			leaves[i] = float32(rng.NormFloat64() * 1e6)
		default:
			leaves[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.Intn(8)-6)))
		}
	}
	for _, n := range []int{0, 1, 2, 15, 16, 17, 33, 500} {
		offs, minus := make([]int32, n), make([]int32, n)
		for i := range offs {
			offs[i] = int32(rng.Intn(nleaves) * leafLen)
			minus[i] = int32(rng.Intn(nleaves) * leafLen)
		}
		var start [leafLen]float32
		for k := range start {
			start[k] = float32(rng.NormFloat64())
		}
		want, got := start, start
		addLeavesGo(&want, leaves, offs)
		addLeaves(&got, leaves, offs)
		sameBits(t, "addLeaves", n, &got, &want)
		want, got = start, start
		addDiffsGo(&want, leaves, offs, minus)
		addDiffs(&got, leaves, offs, minus)
		sameBits(t, "addDiffs", n, &got, &want)
	}
}

func sameBits(t *testing.T, what string, n int, got, want *[leafLen]float32) {
	t.Helper()
	for k := range got {
		if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
			t.Errorf("%s over %d leaves: float %d is %g, the scalar loop's %g", what, n, k, got[k], want[k])
			return
		}
	}
}

// TestSplitCutIsTheThreshold checks the integer walk's premise: for every difference of two
// grey levels, d > cut exactly when float32(d) > thresh, for thresholds on, beside and between
// whole numbers, far out of range, infinite and NaN.
func TestSplitCutIsTheThreshold(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	ths := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -0.5, 254.99, 255, -255, -255.01, 1e9, -1e9,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		math.Nextafter32(3, 4), math.Nextafter32(3, 2), math.Nextafter32(-3, -4), math.Nextafter32(-3, -2)}
	for range 2000 {
		ths = append(ths, float32(rng.NormFloat64()*60))
	}
	for _, th := range ths {
		cut := splitCut(th)
		for d := int32(-255); d <= 255; d++ {
			if (d > cut) != (float32(d) > th) {
				t.Fatalf("threshold %g: cut %d sends difference %d the other way", th, cut, d)
			}
		}
	}
}
