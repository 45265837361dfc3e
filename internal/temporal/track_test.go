package temporal

import (
	"math"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// video is faces by frame number; a frame beyond it has none.
type video map[int][]face.Face

func (v video) at(s int) []face.Face { return v[s] }

// TestTrackRefillsAGap: a face missing from frame t is the track's faces either side averaged
// by distance (factor 1/3 from frame t−1 to t+2), with the nearer face's score and embedding.
func TestTrackRefillsAGap(t *testing.T) {
	a, b := shape(geom.Pt{X: 100, Y: 100}, 80), shape(geom.Pt{X: 106, Y: 97}, 84)
	a.Score, b.Score = 0.7, 0.9
	a.Embedding.Raw[0], b.Embedding.Raw[0] = 1, 2
	v := video{9: {a}, 12: {b}}
	tr := Tracker{Amount: 2, Score: 0.3}
	got := tr.Track(nil, 10, 0, 100, v.at)
	if len(got) != 1 {
		t.Fatalf("frame 10: %d faces, want the refilled one", len(got))
	}
	want := geom.Pt{X: 100 + 6.0/3, Y: 100 - 3.0/3}
	if c := got[0].Box.Center(); math.Abs(c.X-want.X) > 1e-9 || math.Abs(c.Y-want.Y) > 1e-9 {
		t.Errorf("refilled box centre %v, want %v", c, want)
	}
	if w := got[0].Box.W(); math.Abs(w-(80+4.0/3)) > 1e-9 {
		t.Errorf("refilled box width %v, want %v", w, 80+4.0/3)
	}
	for k := range got[0].Landmarks {
		wk := a.Landmarks[k].Scale(2.0 / 3).Add(b.Landmarks[k].Scale(1.0 / 3))
		if got[0].Landmarks[k].Dist(wk) > 1e-9 {
			t.Fatalf("landmark %d %v, want %v", k, got[0].Landmarks[k], wk)
		}
	}
	if !got[0].Refill {
		t.Error("the refilled face is not marked Refill")
	}
	if own := tr.Track(nil, 9, 0, 100, v.at); len(own) != 1 || own[0].Refill {
		t.Errorf("frame 9's own face: %d faces, marked Refill %v", len(own), len(own) == 1 && own[0].Refill)
	}
	if got[0].Score != 0.7 || got[0].Embedding.Raw[0] != 1 {
		t.Errorf("score %v, embedding %v: want frame 9's (the nearer)", got[0].Score, got[0].Embedding.Raw[0])
	}
	// Two frames after frame 9, one before 12: frame 11 takes frame 12's identity.
	got = tr.Track(nil, 11, 0, 100, v.at)
	if len(got) != 1 || got[0].Score != 0.9 {
		t.Errorf("frame 11: %d faces, score %v; want one, frame 12's score", len(got), got)
	}
}

// TestAverageFaceAngle: the refill interpolates the '68/5' points and estimates its angle
// from them, as average_face_geometry does, rather than keeping the nearer face's.
func TestAverageFaceAngle(t *testing.T) {
	a, b := shape(geom.Pt{X: 100, Y: 100}, 80), shape(geom.Pt{X: 100, Y: 100}, 80)
	for k := range a.Landmarks68From5 {
		a.Landmarks68From5[k] = geom.Pt{X: float64(k), Y: 1}
		b.Landmarks68From5[k] = geom.Pt{X: 2, Y: float64(k)}
	}
	a.Landmarks68From5[16], b.Landmarks68From5[16] = geom.Pt{X: 10, Y: 7}, geom.Pt{X: -2, Y: 11}
	a.Angle, b.Angle = a.Landmarks68From5.Angle(), b.Landmarks68From5.Angle()
	got := Average(&a, &b, 0.4)
	for k := range got.Landmarks68From5 {
		want := a.Landmarks68From5[k].Scale(0.6).Add(b.Landmarks68From5[k].Scale(0.4))
		if got.Landmarks68From5[k].Dist(want) > 1e-9 {
			t.Fatalf("68/5 point %d %v, want %v", k, got.Landmarks68From5[k], want)
		}
	}
	// Jaw (10, 6) at 0°, (−4, 11) at 90°; at 0.4 (4.4, 8): 61°, so 90 though a is nearer.
	if a.Angle != 0 || b.Angle != 90 || got.Angle != 90 {
		t.Errorf("angles a %d, b %d, refill %d; want 0, 90, 90", a.Angle, b.Angle, got.Angle)
	}
}

// TestTrackLeavesWhatItCannotReach: a track must have faces on both sides of frame t (or in
// it) within the window; a face beyond the window, or outside [lo, hi], does not count.
func TestTrackLeavesWhatItCannotReach(t *testing.T) {
	a := shape(geom.Pt{X: 100, Y: 100}, 80)
	v := video{8: {a}, 9: {a}, 13: {a}}
	tr := Tracker{Amount: 2, Score: 0.3}
	if got := tr.Track(nil, 10, 0, 100, v.at); len(got) != 0 {
		t.Errorf("frame 10 with faces at 8, 9 and 13 (window 8..12): %d faces, want none", len(got))
	}
	tr.Amount = 3
	if got := tr.Track(nil, 10, 0, 100, v.at); len(got) != 1 {
		t.Errorf("window 7..13: %d faces, want the refilled one", len(got))
	}
	if got := tr.Track(nil, 10, 0, 12, v.at); len(got) != 0 {
		t.Errorf("window clipped at 12: %d faces, want none", len(got))
	}
}

// TestTrackOneFaceAFrame: faces that match one track in the same frame leave the last of them
// (FaceFusion's track is a dict by frame); a face that matches no track starts one, and the
// result lists tracks in the order they started.
func TestTrackOneFaceAFrame(t *testing.T) {
	a, b := shape(geom.Pt{X: 100, Y: 100}, 80), shape(geom.Pt{X: 102, Y: 100}, 80)
	c := shape(geom.Pt{X: 400, Y: 100}, 80)
	a.Score, b.Score, c.Score = 0.5, 0.6, 0.8
	v := video{4: {c}, 5: {a, b, c}}
	tr := Tracker{Amount: 1, Score: 0.3}
	got := tr.Track(nil, 5, 0, 100, v.at)
	if len(got) != 2 || got[0].Score != 0.8 || got[1].Score != 0.6 {
		var s []float64
		for _, f := range got {
			s = append(s, f.Score)
		}
		t.Errorf("scores %v, want [0.8 0.6]: c's track first, b replacing a", s)
	}
	tr.Score = 0.99 // a and b overlap less: each its own track
	if got := tr.Track(nil, 5, 0, 100, v.at); len(got) != 3 {
		t.Errorf("score 0.99: %d faces, want 3", len(got))
	}
}

func TestOverlap(t *testing.T) {
	a := geom.Rect{X0: 0, Y0: 0, X1: 10, Y1: 10}
	b := geom.Rect{X0: 5, Y0: 0, X1: 15, Y1: 10}
	if got := Overlap(a, b); math.Abs(got-1.0/3) > 1e-12 {
		t.Errorf("overlap %v, want 1/3", got)
	}
	if got := Overlap(geom.Rect{}, geom.Rect{}); got != 0 {
		t.Errorf("empty boxes: %v, want 0", got)
	}
}
