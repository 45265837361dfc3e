package facemodel

import (
	"github.com/facefusion-hpc/facefusion/internal/face"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// unitEmbedding is an embedding whose raw vector is scale·(cos θ·e0 + sin θ·e1).
func unitEmbedding(t *testing.T, theta, scale float64) face.Embedding {
	raw := make([]float32, EmbeddingLen)
	raw[0], raw[1] = float32(scale*math.Cos(theta)), float32(scale*math.Sin(theta))
	e, err := NewEmbedding(raw)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestEmbeddingDistance(t *testing.T) {
	a := unitEmbedding(t, 0, 23)
	if n := norm(a.Norm[:]); !near(n, 1, 1e-6) {
		t.Errorf("normed embedding has length %v", n)
	}
	for _, c := range []struct{ theta, want float64 }{{0, 0}, {math.Pi / 2, 0.5}, {math.Pi, 1}, {math.Pi / 3, 0.25}} {
		b := unitEmbedding(t, c.theta, 7) // the raw length must not matter
		if got := Distance(&a, &b); !near(got, c.want, 1e-6) {
			t.Errorf("angle %v: distance %v, want %v", c.theta, got, c.want)
		}
	}
	if _, err := NewEmbedding(make([]float32, 128)); err == nil {
		t.Error("128 values accepted as an arcface embedding")
	}
}

func TestAverageEmbeddings(t *testing.T) {
	a, b := unitEmbedding(t, 0, 10), unitEmbedding(t, math.Pi/2, 30)
	avg := AverageEmbeddings([]face.Embedding{a, b})
	// Raw: the mean of (10, 0) and (0, 30); normed: the mean of (1, 0) and (0, 1), NOT rescaled.
	if avg.Raw[0] != 5 || avg.Raw[1] != 15 {
		t.Errorf("raw mean (%v, %v), want (5, 15)", avg.Raw[0], avg.Raw[1])
	}
	if avg.Norm[0] != 0.5 || avg.Norm[1] != 0.5 {
		t.Errorf("normed mean (%v, %v), want (0.5, 0.5)", avg.Norm[0], avg.Norm[1])
	}
	one := AverageEmbeddings([]face.Embedding{a})
	if one != a {
		t.Error("the average of one embedding is not that embedding")
	}
}

func faceAt(t *testing.T, x, y, w, h, score, theta float64) face.Face {
	return face.Face{Detection: face.Detection{Box: geom.Rect{X0: x, Y0: y, X1: x + w, Y1: y + h}, Score: score}, Embedding: unitEmbedding(t, theta, 1)}
}

func TestSortFaces(t *testing.T) {
	// Each face tagged by its score's hundredths; areas 100, 400, 100 (a tie), 900.
	base := []face.Face{
		faceAt(t, 30, 5, 10, 10, 0.61, 0),
		faceAt(t, 10, 40, 20, 20, 0.92, 0),
		faceAt(t, 50, 20, 10, 10, 0.73, 0),
		faceAt(t, 20, 0, 30, 30, 0.84, 0),
	}
	want := map[SelectorOrder][]int{
		LeftRight:  {92, 84, 61, 73},
		RightLeft:  {73, 61, 84, 92},
		TopBottom:  {84, 61, 73, 92},
		BottomTop:  {92, 73, 61, 84},
		SmallLarge: {61, 73, 92, 84}, // the tie keeps input order
		LargeSmall: {84, 92, 61, 73},
		BestWorst:  {92, 84, 73, 61},
		WorstBest:  {61, 73, 84, 92},
	}
	for _, o := range SelectorOrders {
		faces := slices.Clone(base)
		SortFaces(faces, o)
		var got []int
		for _, f := range faces {
			got = append(got, int(math.Round(f.Score*100)))
		}
		if !slices.Equal(got, want[o]) {
			t.Errorf("%s: %v, want %v", o, got, want[o])
		}
	}
	faces := slices.Clone(base)
	if n := testing.AllocsPerRun(10, func() { SortFaces(faces, LargeSmall) }); n != 0 {
		t.Errorf("SortFaces allocates %v times", n)
	}
}

func TestSelector(t *testing.T) {
	// Three targets: two of identity θ = 0 (one slightly off), one of θ = π/2.
	targets := []face.Face{
		faceAt(t, 100, 0, 50, 50, 0.9, math.Pi/2),
		faceAt(t, 0, 0, 80, 80, 0.8, 0.2), // distance (1 − cos 0.2)/2 ≈ 0.01 from θ = 0
		faceAt(t, 200, 0, 30, 30, 0.7, 0),
	}
	ref := unitEmbedding(t, 0, 3)
	s := DefaultSelector()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	// reference: the matches in the targets' own order, untouched by the order setting.
	if got := s.Select(nil, slices.Clone(targets), &ref); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("reference: %v, want [1 2]", got)
	}
	if got := s.Select(nil, slices.Clone(targets), nil); len(got) != 0 {
		t.Errorf("reference without a reference face: %v", got)
	}
	tight := s
	tight.ReferenceDistance = 0.005
	if got := tight.Select(nil, slices.Clone(targets), &ref); !slices.Equal(got, []int{2}) {
		t.Errorf("reference at 0.005: %v, want [2]", got)
	}
	// one: the largest face (large-small), many: all, sorted.
	one := Selector{Mode: SelectOne, Order: LargeSmall}
	ts := slices.Clone(targets)
	if got := one.Select(nil, ts, nil); len(got) != 1 || ts[got[0]].Box.W() != 80 {
		t.Errorf("one: %v", got)
	}
	many := Selector{Mode: SelectMany, Order: LeftRight}
	ts = slices.Clone(targets)
	got := many.Select(nil, ts, nil)
	if len(got) != 3 || ts[got[0]].Box.X0 != 0 || ts[got[2]].Box.X0 != 200 {
		t.Errorf("many left-right: %v over %v", got, ts)
	}
	if got := one.Select(nil, nil, nil); len(got) != 0 {
		t.Errorf("one of no faces: %v", got)
	}
	// The reference face: sorted by order, position clamped to the last.
	refSel := Selector{Mode: SelectReference, Order: LeftRight, ReferencePosition: 7}
	r, ok := refSel.Reference(slices.Clone(targets))
	if !ok || r.Box.X0 != 200 {
		t.Errorf("reference position 7 of 3 left-right: %+v", r)
	}
	if _, ok := refSel.Reference(nil); ok {
		t.Error("reference face found among none")
	}
	if err := (Selector{Mode: "all", Order: LeftRight}).Check(); err == nil {
		t.Error("mode 'all' accepted")
	}
	if err := (Selector{Mode: SelectOne, Order: "left-to-right"}).Check(); err == nil {
		t.Error("order 'left-to-right' accepted")
	}
}

func TestSourceIdentity(t *testing.T) {
	img1 := []face.Face{faceAt(t, 0, 0, 10, 10, 0.9, math.Pi/2), faceAt(t, 50, 0, 40, 40, 0.6, 0)} // largest: θ = 0
	img2 := []face.Face{faceAt(t, 0, 0, 20, 20, 0.9, math.Pi)}
	e, ok := SourceIdentity([][]face.Face{img1, nil, img2})
	if !ok {
		t.Fatal("no source identity")
	}
	// The normed mean of (1, 0) and (−1, 0) is the zero vector on those axes.
	if !near(float64(e.Norm[0]), 0, 1e-7) || !near(float64(e.Raw[0]), 0, 1e-7) {
		t.Errorf("average picked the wrong faces: norm[0] %v raw[0] %v", e.Norm[0], e.Raw[0])
	}
	if _, ok := SourceIdentity([][]face.Face{nil}); ok {
		t.Error("identity from no faces")
	}
}

// TestPrepareArcFace puts a frame's face points exactly on the 112 template so the crop is
// the frame itself: the tensor must be its RGB planes at v/127.5 − 1.
func TestPrepareArcFace(t *testing.T) {
	frame := randomFrame(rand.New(rand.NewPCG(13, 14)), 112, 112)
	five, _ := ArcFace112V2.Points(ArcFaceSize)
	dst := make([]float32, 3*112*112)
	PrepareArcFace(dst, raster.New(112, 112), frame, five)
	for y := range 112 {
		for x := range 112 {
			r, g, b := frame.At(x, y)
			for p, v := range [3]uint8{r, g, b} {
				if got, want := dst[p*112*112+y*112+x], float32(float64(v)/127.5-1); got != want {
					t.Fatalf("(%d,%d) plane %d = %v, want %v", x, y, p, got, want)
				}
			}
		}
	}
	// A frame twice as large with the points twice as far apart shrinks to the same crop.
	m := ArcFaceMatrix([5]geom.Pt{five[0].Scale(2), five[1].Scale(2), five[2].Scale(2), five[3].Scale(2), five[4].Scale(2)})
	if !near(m.A, 0.5, 1e-9) || !near(m.B, 0, 1e-9) || !near(m.C, 0, 1e-9) {
		t.Errorf("2× face: map %+v, want scale 0.5", m)
	}
}
