package facemodel

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// TestCategorize is face_classifier's categorize_*: ids to FaceFusion's words and ranges.
func TestCategorize(t *testing.T) {
	for _, c := range []struct {
		race, gender, age int64
		want              face.Class
	}{
		{0, 0, 3, face.Class{Gender: "male", Race: "white", Age: [2]int{20, 29}}},
		{1, 1, 0, face.Class{Gender: "female", Race: "black", Age: [2]int{0, 2}}},
		{4, 1, 8, face.Class{Gender: "female", Race: "asian", Age: [2]int{70, 100}}},
		{3, 0, 1, face.Class{Gender: "male", Race: "asian", Age: [2]int{3, 9}}},
		{6, 0, 7, face.Class{Gender: "male", Race: "arabic", Age: [2]int{60, 69}}},
		{5, 0, 2, face.Class{Gender: "male", Race: "indian", Age: [2]int{10, 19}}},
		{2, 0, 6, face.Class{Gender: "male", Race: "latino", Age: [2]int{50, 59}}},
	} {
		if got := Categorize(c.race, c.gender, c.age); got != c.want {
			t.Errorf("Categorize(%d, %d, %d) = %+v, want %+v", c.race, c.gender, c.age, got, c.want)
		}
	}
}

// TestSelectorFilters is sort_and_filter_faces: order, then gender, race (auto: the source
// face's) and age (a shared year with range(start, end)); one takes the first kept face, and
// the reference is picked among the kept.
func TestSelectorFilters(t *testing.T) {
	mk := func(x float64, g, r string, a0, a1 int) face.Face {
		var f face.Face
		f.Box = geom.Rect{X0: x, Y0: 0, X1: x + 10, Y1: 10}
		f.Class = face.Class{Gender: g, Race: r, Age: [2]int{a0, a1}}
		return f
	}
	faces := func() []face.Face {
		return []face.Face{mk(30, "male", "white", 20, 29), mk(10, "female", "asian", 30, 39), mk(20, "female", "white", 3, 9), mk(0, "male", "black", 70, 100)}
	}
	lefts := func(fs []face.Face, idx []int) (out []float64) {
		for _, i := range idx {
			out = append(out, fs[i].Box.X0)
		}
		return out
	}
	src := face.Class{Gender: "female", Race: "white"}
	for _, c := range []struct {
		name string
		s    Selector
		want []float64
	}{
		{"none", Selector{Mode: SelectMany, Order: LeftRight}, []float64{0, 10, 20, 30}},
		{"female", Selector{Mode: SelectMany, Order: LeftRight, Gender: "female"}, []float64{10, 20}},
		{"white", Selector{Mode: SelectMany, Order: RightLeft, Race: "white"}, []float64{30, 20}},
		{"auto without source", Selector{Mode: SelectMany, Order: LeftRight, Gender: "auto", Race: "auto"}, []float64{0, 10, 20, 30}},
		{"auto with source", Selector{Mode: SelectMany, Order: LeftRight, Gender: "auto", Race: "auto", Source: &src}, []float64{20}},
		{"age 25..35", Selector{Mode: SelectMany, Order: LeftRight, AgeStart: 25, AgeEnd: 35}, []float64{10, 30}},
		{"age 9..10 (a gap)", Selector{Mode: SelectMany, Order: LeftRight, AgeStart: 9, AgeEnd: 10}, nil},
		{"age 0..3 stops before 3", Selector{Mode: SelectMany, Order: LeftRight, AgeStart: 0, AgeEnd: 3}, nil},
		{"one male", Selector{Mode: SelectOne, Order: RightLeft, Gender: "male"}, []float64{30}},
	} {
		fs := faces()
		got := lefts(fs, c.s.Select(nil, fs, nil))
		if len(got) != len(c.want) || (len(got) > 0 && !equalFloats(got, c.want)) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	fs := faces()
	ref, ok := Selector{Order: LeftRight, Gender: "female", ReferencePosition: 5}.Reference(fs)
	if !ok || ref.Box.X0 != 20 {
		t.Errorf("reference among the women, position 5 clamped: %+v %v, want the one at 20", ref, ok)
	}
	if _, ok := (Selector{Order: LeftRight, Race: "latino"}).Reference(faces()); ok {
		t.Error("reference with no face kept: found one")
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
