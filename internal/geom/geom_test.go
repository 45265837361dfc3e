package geom

import (
	"math"
	"math/rand"
	"testing"
)

func near(a, b Pt) bool { return a.Dist(b) < 1e-6 }

func TestTriangleMapsVertices(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 1000; i++ {
		var s, d [3]Pt
		for k := range s {
			s[k] = Pt{rng.Float64() * 100, rng.Float64() * 100}
			d[k] = Pt{rng.Float64() * 100, rng.Float64() * 100}
		}
		m, ok := Triangle(s, d)
		if !ok {
			continue
		}
		for k := range s {
			if !near(m.Apply(s[k]), d[k]) {
				t.Fatalf("vertex %d maps to %v, want %v", k, m.Apply(s[k]), d[k])
			}
		}
		inv, ok := m.Invert()
		if ok && !near(inv.Apply(d[1]), s[1]) {
			t.Fatal("inverse does not undo the map")
		}
		if !near(m.Then(inv).Apply(Pt{3, 4}), Pt{3, 4}) {
			t.Fatal("m then its inverse is not the identity")
		}
	}
	if _, ok := Triangle([3]Pt{{0, 0}, {1, 1}, {2, 2}}, [3]Pt{}); ok {
		t.Error("a collinear triangle was accepted")
	}
}

func TestSimilarityRecoversAKnownMap(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 200; i++ {
		s, th := 0.2+rng.Float64()*5, rng.Float64()*2*math.Pi
		want := Affine{A: s * math.Cos(th), B: -s * math.Sin(th), C: rng.Float64() * 50, D: s * math.Sin(th), E: s * math.Cos(th), F: rng.Float64() * 50}
		src := make([]Pt, 10)
		dst := make([]Pt, 10)
		for k := range src {
			src[k] = Pt{rng.Float64() * 100, rng.Float64() * 100}
			dst[k] = want.Apply(src[k])
		}
		got := Similarity(src, dst)
		for k := range src {
			if !near(got.Apply(src[k]), dst[k]) {
				t.Fatalf("case %d: %v maps to %v, want %v", i, src[k], got.Apply(src[k]), dst[k])
			}
		}
	}
}

func TestRectIoU(t *testing.T) {
	a, b := Rect{0, 0, 10, 10}, Rect{5, 0, 15, 10}
	if got := a.IoU(b); math.Abs(got-1.0/3) > 1e-12 {
		t.Errorf("IoU %v, want 1/3", got)
	}
	if (Rect{0, 0, 1, 1}).IoU(Rect{2, 2, 3, 3}) != 0 {
		t.Error("disjoint rectangles overlap")
	}
}
