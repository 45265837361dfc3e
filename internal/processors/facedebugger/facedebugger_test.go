package facedebugger_test

import (
	"image"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	_ "github.com/facefusion-hpc/facefusion/internal/processors/facedebugger" // registers face_debugger
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// FaceFusion's debugger colours, RGB.
var (
	red      = [3]uint8{255, 0, 0}
	lightRed = [3]uint8{255, 100, 100}
	green    = [3]uint8{0, 255, 0}
	grey     = [3]uint8{128, 128, 128}
)

// open opens face_debugger with items (no mask model: the box mask alone).
func open(t *testing.T, items ...string) *processors.Chain {
	t.Helper()
	cfg := job.Default()
	cfg.Processors = []string{job.ProcessorDebug}
	cfg.FaceDebuggerItems = items
	cfg.FaceMaskTypes = []string{"box"}
	ch, err := processors.Open(&processors.Context{Config: cfg}, cfg.Processors)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	if ch.Measured() != 0 {
		t.Errorf("face_debugger counts as changing the faces (Measured %d): the identity would be measured on its drawing", ch.Measured())
	}
	return ch
}

// aFace is a face in the box (x0, y0)-(x1, y1): its five points inside it, the detector's
// five elsewhere (the landmarker did not fall back), its 68 points on a row below the five.
func aFace(x0, y0, x1, y1 float64) *face.Face {
	f := &face.Face{Detection: face.Detection{Box: geom.Rect{X0: x0, Y0: y0, X1: x1, Y1: y1}}}
	w, h := x1-x0, y1-y0
	for i, q := range [5][2]float64{{0.3, 0.35}, {0.7, 0.35}, {0.5, 0.55}, {0.35, 0.75}, {0.65, 0.75}} {
		f.Five[i] = geom.Pt{X: x0 + q[0]*w, Y: y0 + q[1]*h}
		f.DetectorFive[i] = geom.Pt{X: f.Five[i].X + 3, Y: f.Five[i].Y + 3}
	}
	for k := range f.Landmarks {
		f.Landmarks[k] = geom.Pt{X: x0 + 0.1*w + float64(k%17)*0.05*w, Y: y0 + 0.85*h + float64(k/17)*2}
	}
	return f
}

func greyFrame(w, h int) *raster.Image {
	img := raster.New(w, h)
	for i := range img.Pix {
		img.Pix[i] = 128
	}
	return img
}

func at(img *raster.Image, x, y int) [3]uint8 {
	r, g, b := img.At(x, y)
	return [3]uint8{r, g, b}
}

// drawOn runs chain on one frame with faces.
func drawOn(t *testing.T, ch *processors.Chain, frame *raster.Image, faces ...*face.Face) {
	t.Helper()
	b := &processors.Batch{Frames: []*raster.Image{frame}, Indices: []int{0}}
	for _, f := range faces {
		b.Faces = append(b.Faces, processors.Face{Frame: frame, Face: f})
	}
	for _, p := range ch.Steps() {
		if err := processors.Run(p, b); err != nil {
			t.Fatal(err)
		}
	}
}

// onlyWithin fails where a pixel outside every one of areas is no longer grey.
func onlyWithin(t *testing.T, img *raster.Image, areas ...image.Rectangle) {
	t.Helper()
	for y := range img.H {
		for x := range img.W {
			inside := false
			for _, a := range areas {
				inside = inside || image.Pt(x, y).In(a)
			}
			if !inside && at(img, x, y) != grey {
				t.Fatalf("(%d, %d) is %v outside the faces' drawing %v", x, y, at(img, x, y), areas)
			}
		}
	}
}

// bounding-box and face-landmark-5/68 on two faces of a frame 270 high (strokes and points of
// 1 px): each face's box in red with its top edge light red, its five points in green (the
// landmarker's: not fallen back), nothing of the items not asked for (the 68 points), nothing
// outside the boxes, the face inside its box between the points left as it was.
func TestDebuggerDrawsItsItems(t *testing.T) {
	ch := open(t, "bounding-box", "face-landmark-5/68")
	frame := greyFrame(360, 270)
	faces := []*face.Face{aFace(40, 50, 160, 210), aFace(200, 60, 320, 230)}
	drawOn(t, ch, frame, faces...)
	var boxes []image.Rectangle
	for i, f := range faces {
		x0, y0, x1, y1 := int(f.Box.X0), int(f.Box.Y0), int(f.Box.X1), int(f.Box.Y1)
		boxes = append(boxes, image.Rect(x0, y0, x1, y1).Inset(-3))
		midX, midY := (x0+x1)/2, (y0+y1)/2
		for _, c := range []struct {
			what string
			x, y int
			want [3]uint8
		}{
			{"left edge", x0, midY, red},
			{"right edge", x1, midY, red},
			{"bottom edge", midX, y1, red},
			{"top edge", midX, y0, lightRed},
			{"inside the box, between the points", x0 + 8, midY, grey},
			{"a 68 point (not asked for)", int(f.Landmarks[20].X), int(f.Landmarks[20].Y), grey},
		} {
			if got := at(frame, c.x, c.y); got != c.want {
				t.Errorf("face %d, %s (%d, %d): %v, want %v", i, c.what, c.x, c.y, got, c.want)
			}
		}
		for k, p := range f.Five {
			if got := at(frame, int(p.X), int(p.Y)); got != green {
				t.Errorf("face %d, point %d (%v): %v, want green", i, k, p, got)
			}
			if got := at(frame, int(f.DetectorFive[k].X)+2, int(f.DetectorFive[k].Y)+2); got != grey {
				t.Errorf("face %d, the detector's point %d drawn (face-landmark-5 not asked for): %v", i, k, got)
			}
		}
	}
	onlyWithin(t, frame, boxes...)
}

// face-landmark-68 alone draws the 68 points, in green, and no box.
func TestDebuggerDrawsOnlyTheItemsAsked(t *testing.T) {
	ch := open(t, "face-landmark-68")
	frame := greyFrame(360, 270)
	f := aFace(40, 50, 160, 210)
	drawOn(t, ch, frame, f)
	for k, p := range f.Landmarks {
		if got := at(frame, int(p.X), int(p.Y)); got != green {
			t.Errorf("point %d (%v): %v, want green", k, p, got)
		}
	}
	if got := at(frame, int(f.Box.X0), int(f.Box.Y1+f.Box.Y0)/2); got != grey {
		t.Errorf("the box drawn (not asked for): %v", got)
	}
	if got := at(frame, int(f.Five[2].X), int(f.Five[2].Y)); got != grey {
		t.Errorf("a five point drawn (not asked for): %v", got)
	}
	var lo, hi geom.Pt = f.Landmarks[0], f.Landmarks[0]
	for _, p := range f.Landmarks {
		lo.X, lo.Y, hi.X, hi.Y = min(lo.X, p.X), min(lo.Y, p.Y), max(hi.X, p.X), max(hi.Y, p.Y)
	}
	onlyWithin(t, frame, image.Rect(int(lo.X), int(lo.Y), int(hi.X), int(hi.Y)).Inset(-3))
}

// An item FaceFusion does not have is refused when the processor opens, as the user's error.
func TestDebuggerRefusesAnUnknownItem(t *testing.T) {
	cfg := job.Default()
	cfg.FaceDebuggerItems = []string{"face-landmark-99"}
	_, err := processors.Open(&processors.Context{Config: cfg}, []string{job.ProcessorDebug})
	if err == nil || fault.KindOf(err) != fault.Usage || !strings.Contains(err.Error(), "face-landmark-99") {
		t.Fatalf("face-landmark-99: %v, want the user's error naming it", err)
	}
}
