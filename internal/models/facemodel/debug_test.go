package facemodel

import (
	"image"
	"math"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// debugFace is a face at known places in a 640×480 frame: the detector's five points a few
// pixels off the landmarker's, 68 landmarks on an ellipse inside the box.
func debugFace() face.Face {
	f := face.Face{Detection: face.Detection{
		Box:   geom.Rect{X0: 200.7, Y0: 120.2, X1: 400.9, Y1: 360.5},
		Score: 0.8671,
		Five:  [5]geom.Pt{{X: 260.4, Y: 200.6}, {X: 340.2, Y: 198.9}, {X: 301.5, Y: 252.3}, {X: 268.8, Y: 301.1}, {X: 331.7, Y: 299.4}},
	}, LandmarkScore: 0.75}
	for i, p := range f.Five {
		f.DetectorFive[i] = geom.Pt{X: p.X + 4, Y: p.Y - 3}
	}
	for k := range f.Landmarks {
		a := 2 * math.Pi * float64(k) / 68
		f.Landmarks[k] = geom.Pt{X: 300 + 80*math.Cos(a), Y: 240 + 100*math.Sin(a)}
	}
	return f
}

// grey is the frame the test draws on: mid grey, which no debugger colour is.
func grey() *raster.Image {
	m := raster.New(640, 480)
	for i := range m.Pix {
		m.Pix[i] = 128
	}
	return m
}

// drawn draws items for f on a grey frame and returns the changed pixels with their colours.
func drawn(t *testing.T, items []string, padding [4]int, f face.Face) map[image.Point]raster.RGB {
	t.Helper()
	d, err := NewDebugger(items, padding)
	if err != nil {
		t.Fatal(err)
	}
	m := grey()
	d.Draw(m, &f)
	out := map[image.Point]raster.RGB{}
	for y := range m.H {
		for x := range m.W {
			if r, g, b := m.At(x, y); r != 128 || g != 128 || b != 128 {
				out[image.Pt(x, y)] = raster.RGB{R: r, G: g, B: b}
			}
		}
	}
	return out
}

func truncated(p geom.Pt) image.Point { return image.Pt(int(p.X), int(p.Y)) }

// segDist is the distance from q to the segment a–b.
func segDist(q, a, b geom.Pt) float64 {
	ab, aq := b.Sub(a), q.Sub(a)
	s := math.Max(0, math.Min(1, (aq.X*ab.X+aq.Y*ab.Y)/(ab.X*ab.X+ab.Y*ab.Y)))
	return q.Dist(geom.Pt{X: a.X + s*ab.X, Y: a.Y + s*ab.Y})
}

// drawnNear checks that every changed pixel has colour c (or one of cs) and lies within tol of one
// of the segments (a point is a segment from itself to itself), and that every segment has a
// changed pixel within tol of each end: the drawing is where it belongs, and nowhere else.
func drawnNear(t *testing.T, what string, px map[image.Point]raster.RGB, segs [][2]geom.Pt, tol float64, cs ...raster.RGB) {
	t.Helper()
	if len(px) == 0 {
		t.Fatalf("%s: nothing drawn", what)
	}
	far := 0
	for p, c := range px {
		q := geom.Pt{X: float64(p.X), Y: float64(p.Y)}
		d := math.Inf(1)
		for _, s := range segs {
			d = math.Min(d, segDist(q, s[0], s[1]))
		}
		ok := false
		for _, want := range cs {
			ok = ok || c == want
		}
		if (d > tol || !ok) && far < 5 {
			far++
			t.Errorf("%s: pixel %v is %v, %.1f px from what it draws (colours %v, at most %.1f px)", what, p, c, d, cs, tol)
		}
	}
	for _, s := range segs {
		for _, end := range s {
			hit := false
			for p := range px {
				hit = hit || end.Dist(geom.Pt{X: float64(p.X), Y: float64(p.Y)}) <= tol
			}
			if !hit {
				t.Errorf("%s: nothing drawn at %v", what, end)
			}
		}
	}
}

func points(ps ...geom.Pt) [][2]geom.Pt {
	var s [][2]geom.Pt
	for _, p := range ps {
		q := geom.Pt{X: float64(truncated(p).X), Y: float64(truncated(p).Y)}
		s = append(s, [2]geom.Pt{q, q})
	}
	return s
}

// TestDebuggerDrawsWhereTheFaceIs draws each item alone on a face at known places: every
// pixel it changes is on what the item shows (the box's edges, the points, the mask's edge)
// in FaceFusion's colour for it, and each of those places was drawn.
func TestDebuggerDrawsWhereTheFaceIs(t *testing.T) {
	f := debugFace()
	const s = 2 // DebugScale(480)
	if DebugScale(480) != s || DebugScale(270) != 1 || DebugScale(675) != 2 || DebugScale(4320) != 10 {
		t.Fatalf("DebugScale: 480→%d 270→%d 675→%d 4320→%d, want 2 1 2 10 (FaceFusion's round(h/270) in 1..10)",
			DebugScale(480), DebugScale(270), DebugScale(675), DebugScale(4320))
	}
	red, lightRed, green, cyan := raster.RGB{R: 255}, raster.RGB{R: 255, G: 100, B: 100}, raster.RGB{G: 255}, raster.RGB{G: 255, B: 255}

	b := [4]geom.Pt{{X: 200, Y: 120}, {X: 400, Y: 120}, {X: 400, Y: 360}, {X: 200, Y: 360}} // truncated corners
	px := drawn(t, []string{"bounding-box"}, [4]int{}, f)
	drawnNear(t, "bounding-box", px, [][2]geom.Pt{{b[0], b[1]}, {b[1], b[2]}, {b[2], b[3]}, {b[3], b[0]}}, s+1, red, lightRed)
	for x := 200; x <= 400; x++ {
		if px[image.Pt(x, 120)] != lightRed {
			t.Fatalf("bounding-box: top edge at (%d,120) is %v, want FaceFusion's light red (the face's upright side)", x, px[image.Pt(x, 120)])
		}
	}

	drawnNear(t, "face-landmark-5", drawn(t, []string{"face-landmark-5"}, [4]int{}, f), points(f.DetectorFive[:]...), s+0.5, red)
	drawnNear(t, "face-landmark-5/68", drawn(t, []string{"face-landmark-5/68"}, [4]int{}, f), points(f.Five[:]...), s+0.5, green)
	drawnNear(t, "face-landmark-68", drawn(t, []string{"face-landmark-68"}, [4]int{}, f), points(f.Landmarks[:]...), s+0.5, green)

	// The landmarker fell back to the detector's five: FaceFusion's cyan for the five and
	// the mask. BlazeFace has no five: its six keypoints are the detector's points.
	fb := f
	fb.DetectorFive = fb.Five
	drawnNear(t, "face-landmark-5/68 (fallback)", drawn(t, []string{"face-landmark-5/68"}, [4]int{}, fb), points(fb.Five[:]...), s+0.5, cyan)
	// A face the tracker refilled: FaceFusion's orange for every point item and the mask.
	rf := f
	rf.Refill = true
	orange := raster.RGB{R: 255, G: 165}
	drawnNear(t, "face-landmark-5 (refill)", drawn(t, []string{"face-landmark-5"}, [4]int{}, rf), points(rf.DetectorFive[:]...), s+0.5, orange)
	drawnNear(t, "face-landmark-5/68 (refill)", drawn(t, []string{"face-landmark-5/68"}, [4]int{}, rf), points(rf.Five[:]...), s+0.5, orange)
	drawnNear(t, "face-landmark-68 (refill)", drawn(t, []string{"face-landmark-68"}, [4]int{}, rf), points(rf.Landmarks[:]...), s+0.5, orange)
	// fan_68_5's points ('68/5'): cyan, orange on a refill, nothing where there are none; the
	// 68 landmarks in cyan too where they are fan_68_5's (no landmarker's points).
	ef := f
	for k := range ef.Landmarks68From5 {
		a := 2 * math.Pi * float64(k) / 68
		ef.Landmarks68From5[k] = geom.Pt{X: 290 + 60*math.Cos(a), Y: 250 + 90*math.Sin(a)}
	}
	drawnNear(t, "face-landmark-68/5", drawn(t, []string{"face-landmark-68/5"}, [4]int{}, ef), points(ef.Landmarks68From5[:]...), s+0.5, cyan)
	ef.Refill = true
	drawnNear(t, "face-landmark-68/5 (refill)", drawn(t, []string{"face-landmark-68/5"}, [4]int{}, ef), points(ef.Landmarks68From5[:]...), s+0.5, orange)
	ef.Refill = false
	if px := drawn(t, []string{"face-landmark-68/5"}, [4]int{}, f); len(px) != 0 {
		t.Errorf("face-landmark-68/5 without fan_68_5's points: %d pixels drawn, want none", len(px))
	}
	ef.Landmarks = ef.Landmarks68From5
	drawnNear(t, "face-landmark-68 (fan_68_5's)", drawn(t, []string{"face-landmark-68"}, [4]int{}, ef), points(ef.Landmarks[:]...), s+0.5, cyan)
	bf := f
	bf.DetectorFive = [5]geom.Pt{}
	bf.Keypoints = [6]geom.Pt{{X: 262, Y: 201}, {X: 338, Y: 200}, {X: 300, Y: 250}, {X: 300, Y: 300}, {X: 215, Y: 215}, {X: 385, Y: 214}}
	drawnNear(t, "face-landmark-5 (BlazeFace)", drawn(t, []string{"face-landmark-5"}, [4]int{}, bf), points(bf.Keypoints[:]...), s+0.5, red)

	// The mask: the box mask of the arcface_128 crop at 512 is the crop less a one-pixel
	// border, and less the padding (top, right, bottom, left percent); its edge, mapped back
	// to the frame, is a rotated rectangle.
	for _, pad := range [][4]int{{}, {10, 5, 20, 0}} {
		toFrame, _ := align.Estimate(f.Five, align.ArcFace128, 512).Invert()
		lo := geom.Pt{X: math.Max(1, float64(512*pad[3]/100)), Y: math.Max(1, float64(512*pad[0]/100))}
		hi := geom.Pt{X: 512 - math.Max(1, float64(512*pad[1]/100)), Y: 512 - math.Max(1, float64(512*pad[2]/100))}
		var q [4]geom.Pt
		for i, c := range [4]geom.Pt{lo, {X: hi.X, Y: lo.Y}, hi, {X: lo.X, Y: hi.Y}} {
			q[i] = toFrame.Apply(c)
		}
		drawnNear(t, "face-mask", drawn(t, []string{"face-mask"}, pad, f), [][2]geom.Pt{{q[0], q[1]}, {q[1], q[2]}, {q[2], q[3]}, {q[3], q[0]}}, s+1, green)
	}
}

// Items this program cannot draw, or FaceFusion does not have, are refused by name.
func TestDebuggerRefusesItems(t *testing.T) {
	for _, c := range []struct {
		items []string
		want  string
	}{
		{[]string{"bounding-box", "age"}, `"age" is not one of bounding-box, face-mask, face-landmark-5, face-landmark-5/68, face-landmark-68, face-landmark-68/5`},
		{[]string{"face-detector-score"}, `"face-detector-score" is not one of`},
		{[]string{"box"}, `"box" is not one of bounding-box`},
		{nil, "give at least one of"},
	} {
		if _, err := NewDebugger(c.items, [4]int{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error with %q", c.items, err, c.want)
		}
	}
}

// face-landmark-68/5 is refused only where the models give no fan_68_5 points (blazeface,
// dlib_68), naming the model and what can be drawn.
func TestDebuggerItemsNeedFan68From5(t *testing.T) {
	items := []string{"bounding-box", "face-landmark-68/5"}
	if err := CheckDebuggerItems(items, true); err != nil {
		t.Errorf("with FaceFusion's models: %v", err)
	}
	err := CheckDebuggerItems(items, false)
	if err == nil || !strings.Contains(err.Error(), "face-landmark-68/5 cannot be drawn") || !strings.Contains(err.Error(), "fan_68_5") ||
		!strings.Contains(err.Error(), "drawn with these: bounding-box, face-mask, face-landmark-5, face-landmark-5/68, face-landmark-68)") {
		t.Errorf("with blazeface or dlib_68: %v", err)
	}
	if err := CheckDebuggerItems([]string{"face-landmark-68"}, false); err != nil {
		t.Errorf("face-landmark-68 with dlib_68: %v", err)
	}
}
