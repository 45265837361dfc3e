package composite

import (
	"errors"
	"slices"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// at is the map that puts a crop's origin at (x, y) of the frame: its paste area is the
// size-square there.
func at(x, y float64) geom.Affine { return geom.Affine{A: 1, C: -x, E: 1, F: -y} }

type testFace struct {
	frame *raster.Image
	x, y  float64
}

// roundsOf runs faces through r and gives each round's faces as [lo, hi) pairs.
func roundsOf(t *testing.T, r *Rounds, faces []testFace) [][2]int {
	t.Helper()
	var got [][2]int
	face := func(i int) (*raster.Image, geom.Affine) { return faces[i].frame, at(faces[i].x, faces[i].y) }
	err := r.Each(len(faces), face, func(lo, hi int, maps []geom.Affine) error {
		if len(maps) != hi-lo {
			t.Errorf("round %d..%d: %d maps", lo, hi, len(maps))
		}
		for j, m := range maps {
			if want := at(faces[lo+j].x, faces[lo+j].y); m != want {
				t.Errorf("face %d: map %v, want %v", lo+j, m, want)
			}
		}
		got = append(got, [2]int{lo, hi})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestRounds(t *testing.T) {
	a, b := raster.New(400, 400), raster.New(400, 400)
	for _, tc := range []struct {
		name  string
		limit int
		faces []testFace
		want  [][2]int
	}{
		{"none", 4, nil, nil},
		{"apart", 4, []testFace{{a, 0, 0}, {a, 200, 200}, {a, 0, 200}}, [][2]int{{0, 3}}},
		{"limit", 2, []testFace{{a, 0, 0}, {a, 200, 200}, {a, 0, 200}}, [][2]int{{0, 2}, {2, 3}}},
		{"overlap starts a round", 4, []testFace{{a, 0, 0}, {a, 50, 50}, {a, 200, 200}}, [][2]int{{0, 1}, {1, 3}}},
		{"other frames never clash", 4, []testFace{{a, 0, 0}, {b, 0, 0}, {a, 200, 200}, {b, 50, 50}}, [][2]int{{0, 3}, {3, 4}}},
		// the paste area is grown by 2 px: crops 1 px apart still run one after the other
		{"near", 4, []testFace{{a, 0, 0}, {a, 101, 0}}, [][2]int{{0, 1}, {1, 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := roundsOf(t, NewRounds(100, tc.limit), tc.faces); !slices.Equal(got, tc.want) {
				t.Errorf("rounds %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRoundsStopsAtAnError(t *testing.T) {
	a := raster.New(100, 100)
	stop := errors.New("stop")
	calls := 0
	face := func(int) (*raster.Image, geom.Affine) { return a, at(0, 0) }
	err := NewRounds(50, 1).Each(3, face, func(lo, hi int, maps []geom.Affine) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("got %v after %d rounds, want stop after 1", err, calls)
	}
}

func BenchmarkRounds(b *testing.B) {
	frame := raster.New(1920, 1080)
	r := NewRounds(256, 8)
	face := func(i int) (*raster.Image, geom.Affine) { return frame, at(float64(i%8)*230, float64(i/8)*300) }
	run := func(lo, hi int, maps []geom.Affine) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Each(24, face, run); err != nil {
			b.Fatal(err)
		}
	}
}
