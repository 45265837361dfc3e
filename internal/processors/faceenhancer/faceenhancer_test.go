package faceenhancer_test

import (
	"image"
	"math"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	_ "github.com/facefusion-hpc/facefusion/internal/processors/faceenhancer" // registers face_enhancer
	"github.com/facefusion-hpc/facefusion/internal/processors/processortest"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// The processor run as a worker runs it (processors.Open, processors.Run) on the enhancer
// stand-in (fixtures.EnhancerOut: a non-symmetric colour mix plus ramps over the crop), so a
// paste at the wrong place, a wrong colour order, normalisation or blend moves the pixels
// checked.

const model = "gpen_bfr_256"

// open opens face_enhancer with model's stand-in at blend and batch maxBatch, the box mask.
func open(t *testing.T, blend, maxBatch int, st processors.Stats) *processors.Chain {
	t.Helper()
	cfg := job.Default()
	cfg.Processors = []string{job.ProcessorEnhance}
	cfg.FaceEnhancerModel, cfg.FaceEnhancerBlend = model, blend
	return processortest.Open(t, cfg, model, maxBatch, processors.Source{}, st)
}

// scene is a noise frame with a face of one colour: its five points, frame-to-crop map and
// paste area.
type scene struct {
	frame, orig *raster.Image
	five        [5]geom.Pt
	toCrop      geom.Affine
	area        image.Rectangle
}

func newScene(seed uint64, w, h int, x, y, side float64, rgb [3]uint8) scene {
	m := catalog.Must(model)
	tmpl := align.Templates[m.Template]
	var s scene
	s.five = processortest.FiveAt(tmpl, x, y, side)
	s.toCrop = align.Estimate(s.five, tmpl, m.Size)
	s.area = align.PasteArea(w, h, m.Size, m.Size, s.toCrop)
	s.frame = processortest.Noise(seed, w, h, rgb, s.area)
	s.orig = processortest.Clone(s.frame)
	return s
}

func (s scene) face() processors.Face {
	return processors.Face{Frame: s.frame, Face: &face.Face{Detection: face.Detection{Five: s.five}}}
}

// At blend 100 the face's centre and five points hold the stand-in's output for the crop
// position they map to (RGB in [−1, 1] in, back to 8 bits); at 60 FaceFusion's mix of frame
// and enhanced face, round(f·0.4 + e·0.6); at 0 the frame is unchanged, bit for bit. Outside
// the paste area nothing changes.
func TestEnhanceBlendsTheModelsCropAtTheFace(t *testing.T) {
	rgb := [3]uint8{170, 90, 40} // not grey: a swapped colour order shows
	size := catalog.Must(model).Size
	for _, blend := range []int{100, 60, 0} {
		st := processortest.Count{}
		ch := open(t, blend, 1, st)
		s := newScene(5, 420, 400, 80, 70, 256, rgb)
		processortest.Run(t, ch, []*raster.Image{s.frame}, s.face())
		if blend == 0 {
			if !processortest.Same(s.frame, s.orig) {
				t.Error("blend 0 changed the frame")
			}
			continue
		}
		var x [3]float64
		for k, v := range rgb {
			x[k] = (float64(v)/255 - 0.5) / 0.5
		}
		b := float64(blend) / 100
		for _, p := range append(s.five[:], geom.Mean(s.five[:])) {
			px, py := int(p.X), int(p.Y)
			at := s.toCrop.Apply(geom.Pt{X: float64(px), Y: float64(py)})
			r, g, bl := s.frame.At(px, py)
			for k, got := range [3]uint8{r, g, bl} {
				out := fixtures.EnhancerOut(k, int(math.Round(at.X)), int(math.Round(at.Y)), size, x, 0, false)
				enhanced := math.RoundToEven((math.Min(1, math.Max(-1, out)) + 1) / 2 * 255)
				want := math.RoundToEven(float64(rgb[k])*(1-b) + enhanced*b)
				if math.Abs(float64(got)-want) > 1 {
					t.Errorf("blend %d: (%d, %d) channel %d = %d, want %v", blend, px, py, k, got, want)
				}
			}
		}
		processortest.OutsideUntouched(t, s.frame, s.orig, s.area)
		if st[processors.StageEnhance] != 1 {
			t.Errorf("blend %d: faces counted %v, want 1 enhanced", blend, st)
		}
	}
}

// Two overlapping faces of one frame are enhanced in turn, as FaceFusion's loop does: in one
// batch the frame is bit for bit that of one face after the other; the other order gives
// another frame, so the check can tell.
func TestEnhanceOverlappingFacesInTurn(t *testing.T) {
	rgb := [3]uint8{150, 110, 200}
	a := newScene(7, 520, 460, 60, 50, 250, rgb)
	b := newScene(7, 520, 460, 170, 120, 230, rgb)
	if !a.area.Overlaps(b.area) {
		t.Fatal("the faces' paste areas do not overlap: the test shows nothing")
	}
	// One frame, both faces' patches.
	base := processortest.Noise(7, 520, 460, rgb, a.area, b.area)
	faceIn := func(frame *raster.Image, s scene) processors.Face {
		return processors.Face{Frame: frame, Face: &face.Face{Detection: face.Detection{Five: s.five}}}
	}
	batched := processortest.Clone(base)
	processortest.Run(t, open(t, 100, 4, processortest.Count{}), []*raster.Image{batched}, faceIn(batched, a), faceIn(batched, b))
	one := open(t, 100, 1, processortest.Count{})
	inTurn, reversed := processortest.Clone(base), processortest.Clone(base)
	processortest.Run(t, one, []*raster.Image{inTurn}, faceIn(inTurn, a))
	processortest.Run(t, one, []*raster.Image{inTurn}, faceIn(inTurn, b))
	processortest.Run(t, one, []*raster.Image{reversed}, faceIn(reversed, b))
	processortest.Run(t, one, []*raster.Image{reversed}, faceIn(reversed, a))
	if !processortest.Same(batched, inTurn) {
		t.Error("two overlapping faces in one batch differ from the two enhanced in turn")
	}
	if processortest.Same(reversed, inTurn) {
		t.Error("the faces enhanced in either order give one frame: the test shows nothing")
	}
}
