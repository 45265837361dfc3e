package adapters

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
)

func TestBlazeAnchorsLayout(t *testing.T) {
	a := blazeAnchors(128, []int{8, 16, 16, 16})
	if len(a) != 896 {
		t.Fatalf("front anchors: got %d, want 896", len(a))
	}
	want := map[int]geom.Pt{
		0:   {X: 0.5 / 16, Y: 0.5 / 16},
		1:   {X: 0.5 / 16, Y: 0.5 / 16}, // two anchors per 16×16 cell
		2:   {X: 1.5 / 16, Y: 0.5 / 16}, // row-major: x moves first
		32:  {X: 0.5 / 16, Y: 1.5 / 16},
		511: {X: 15.5 / 16, Y: 15.5 / 16},
		512: {X: 0.5 / 8, Y: 0.5 / 8},
		517: {X: 0.5 / 8, Y: 0.5 / 8}, // six anchors per 8×8 cell
		518: {X: 1.5 / 8, Y: 0.5 / 8},
		895: {X: 7.5 / 8, Y: 7.5 / 8},
	}
	for i, p := range want {
		if a[i].Dist(p) > 1e-12 {
			t.Errorf("anchor %d: got %v, want %v", i, a[i], p)
		}
	}
	// The back model's grid is the same in normalised units: strides double with the input.
	b := blazeAnchors(256, []int{16, 32, 32, 32})
	if len(b) != len(a) {
		t.Fatalf("back anchors: got %d, want %d", len(b), len(a))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("back anchor %d: got %v, want %v", i, b[i], a[i])
		}
	}
}

func logit(p float64) float32 { return float32(math.Log(p / (1 - p))) }

func TestDecodeBlaze(t *testing.T) {
	anchors := blazeAnchors(128, []int{8, 16, 16, 16})[:512]
	scores := make([]float32, 512)
	boxes := make([]float32, 512*blazeCoords)
	for i := range scores {
		scores[i] = -10
	}
	scores[37] = logit(0.8)
	scores[100] = 1000 // clipped, not Inf/NaN
	scores[200] = float32(math.NaN())
	scores[300] = logit(0.49)
	r := boxes[37*blazeCoords:]
	r[0], r[1], r[2], r[3] = 6.4, -12.8, 32, 16
	for k := 0; k < 6; k++ {
		r[4+2*k], r[5+2*k] = float32(k), float32(-k)
	}

	got := decodeBlaze(nil, anchors, scores, boxes, 128, 0.5)
	if len(got) != 2 {
		t.Fatalf("got %d detections, want 2 (anchors 37 and 100): %+v", len(got), got)
	}
	d := got[0]
	a := anchors[37]
	cx, cy := a.X+6.4/128, a.Y-12.8/128
	wantBox := geom.Rect{X0: cx - 0.125, Y0: cy - 0.0625, X1: cx + 0.125, Y1: cy + 0.0625}
	if math.Abs(d.Score-0.8) > 1e-6 {
		t.Errorf("score: got %v, want 0.8", d.Score)
	}
	for _, e := range [][2]float64{{d.Box.X0, wantBox.X0}, {d.Box.Y0, wantBox.Y0}, {d.Box.X1, wantBox.X1}, {d.Box.Y1, wantBox.Y1}} {
		if math.Abs(e[0]-e[1]) > 1e-6 {
			t.Errorf("box: got %+v, want %+v", d.Box, wantBox)
			break
		}
	}
	for k, p := range d.Keypoints {
		want := geom.Pt{X: a.X + float64(k)/128, Y: a.Y - float64(k)/128}
		if p.Dist(want) > 1e-6 {
			t.Errorf("keypoint %d: got %v, want %v", k, p, want)
		}
	}
	if got[1].Score != 1 {
		t.Errorf("clipped logit: score %v, want 1", got[1].Score)
	}

	if n := len(decodeBlaze(nil, anchors, scores, boxes, 128, 0.85)); n != 1 {
		t.Errorf("minScore 0.85: got %d detections, want 1", n)
	}
	if n := len(decodeBlaze(nil, anchors, scores, boxes, 128, 0.45)); n != 3 {
		t.Errorf("minScore 0.45: got %d detections, want 3", n)
	}
}

func det(x0, y0, x1, y1, score float64) face.Detection {
	d := face.Detection{Box: geom.Rect{X0: x0, Y0: y0, X1: x1, Y1: y1}, Score: score}
	for k := range d.Keypoints {
		d.Keypoints[k] = geom.Pt{X: x0 + float64(k), Y: y1 - float64(k)}
	}
	return d
}

func TestWeightedNMS(t *testing.T) {
	a := det(0, 0, 10, 10, 0.6)
	b := det(1, 1, 11, 11, 0.9) // IoU with a: 81/119 ≈ 0.68
	c := det(20, 20, 30, 30, 0.7)
	e := det(1, 6, 11, 16, 0.5) // IoU with b: 50/150 ≈ 0.33; with a: 36/164 ≈ 0.22
	got := weightedNMS(nil, []face.Detection{a, b, c}, 0.3)
	if len(got) != 2 {
		t.Fatalf("got %d detections, want 2: %+v", len(got), got)
	}
	// a and b merge, weighted by score, keeping b's score; c stays alone.
	w := 0.6 + 0.9
	want := geom.Rect{X0: (0.6*0 + 0.9*1) / w, Y0: (0.6*0 + 0.9*1) / w, X1: (0.6*10 + 0.9*11) / w, Y1: (0.6*10 + 0.9*11) / w}
	if got[0].Score != 0.9 || math.Abs(got[0].Box.X0-want.X0) > 1e-12 || math.Abs(got[0].Box.Y1-want.Y1) > 1e-12 {
		t.Errorf("merged: got %+v score %v, want %+v score 0.9", got[0].Box, got[0].Score, want)
	}
	if kp := got[0].Keypoints[2]; math.Abs(kp.X-(want.X0+2)) > 1e-12 || math.Abs(kp.Y-(want.Y1-2)) > 1e-12 {
		t.Errorf("merged keypoint 2: got %v, want (%v, %v)", kp, want.X0+2, want.Y1-2)
	}
	if got[1] != c {
		t.Errorf("separate: got %+v, want %+v", got[1], c)
	}

	got = weightedNMS(nil, []face.Detection{a, e}, 0.3)
	if len(got) != 2 {
		t.Errorf("IoU 0.22 must not merge: got %d detections", len(got))
	}
	got = weightedNMS(nil, []face.Detection{b, e}, 0.3)
	if len(got) != 1 {
		t.Errorf("IoU 0.33 must merge: got %d detections", len(got))
	}

	// A degenerate box neither merges nor loops forever.
	got = weightedNMS(nil, []face.Detection{det(5, 5, 5, 5, 0.99), a}, 0.3)
	if len(got) != 2 {
		t.Errorf("empty box: got %d detections, want 2", len(got))
	}
}

// nmsReference is the textbook weighted NMS: repeatedly take the best unused candidate and
// average it with every unused candidate overlapping it.
func nmsReference(cands []face.Detection, iou float64) []face.Detection {
	used := make([]bool, len(cands))
	var out []face.Detection
	for {
		best := -1
		for i, c := range cands {
			if !used[i] && (best < 0 || c.Score > cands[best].Score) {
				best = i
			}
		}
		if best < 0 {
			return out
		}
		top := cands[best]
		var sum, x0, y0, x1, y1 float64
		var kps [6]geom.Pt
		for i, c := range cands {
			if used[i] || top.Box.IoU(c.Box) <= iou {
				continue
			}
			used[i] = true
			sum += c.Score
			x0, y0, x1, y1 = x0+c.Score*c.Box.X0, y0+c.Score*c.Box.Y0, x1+c.Score*c.Box.X1, y1+c.Score*c.Box.Y1
			for k := range kps {
				kps[k] = kps[k].Add(c.Keypoints[k].Scale(c.Score))
			}
		}
		used[best] = true
		merged := top
		if sum > 0 {
			merged.Box = geom.Rect{X0: x0 / sum, Y0: y0 / sum, X1: x1 / sum, Y1: y1 / sum}
			for k := range kps {
				merged.Keypoints[k] = kps[k].Scale(1 / sum)
			}
		}
		out = append(out, merged)
	}
}

func TestWeightedNMSMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 500; trial++ {
		n := rng.IntN(40)
		cands := make([]face.Detection, n)
		for i := range cands {
			x, y, s := rng.Float64()*50, rng.Float64()*50, 2+rng.Float64()*20
			// Distinct scores: ties would make the order, and so the clusters, ambiguous.
			cands[i] = det(x, y, x+s, y+s*(0.8+0.4*rng.Float64()), 0.5+0.5*float64(i)/float64(n)+1e-9*rng.Float64())
		}
		rng.Shuffle(n, func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
		want := nmsReference(cands, 0.3)
		got := weightedNMS(nil, append([]face.Detection(nil), cands...), 0.3)
		if len(got) != len(want) {
			t.Fatalf("trial %d: got %d detections, want %d", trial, len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.Score != w.Score || math.Abs(g.Box.X0-w.Box.X0) > 1e-9 || math.Abs(g.Box.Y1-w.Box.Y1) > 1e-9 ||
				g.Keypoints[5].Dist(w.Keypoints[5]) > 1e-9 {
				t.Fatalf("trial %d detection %d: got %+v, want %+v", trial, i, g, w)
			}
		}
	}
}

func TestWeightedNMSAllocatesNothing(t *testing.T) {
	cands := []face.Detection{det(0, 0, 10, 10, 0.6), det(1, 1, 11, 11, 0.9), det(20, 20, 30, 30, 0.7)}
	work := make([]face.Detection, len(cands))
	dst := make([]face.Detection, 0, len(cands))
	allocs := testing.AllocsPerRun(100, func() {
		copy(work, cands)
		dst = weightedNMS(dst[:0], work, 0.3)
	})
	if allocs != 0 || len(dst) != 2 {
		t.Errorf("weightedNMS: %v allocations, %d detections; want 0 and 2", allocs, len(dst))
	}
}
