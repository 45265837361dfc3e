package expressionrestorer_test

import (
	"image"
	"math"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	_ "github.com/facefusion-hpc/facefusion/internal/processors/expressionrestorer" // registers expression_restorer
	_ "github.com/facefusion-hpc/facefusion/internal/processors/faceswapper"        // registers face_swapper
	"github.com/facefusion-hpc/facefusion/internal/processors/processortest"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// The processor as a worker runs it (processors.Open, processors.Run) on LivePortrait's
// stand-ins (their arithmetic is checked crop by crop in internal/models/adapters): here, that
// it reads the original expression from Batch.Originals, pastes where the face is and
// nothing outside, counts its faces, and runs after face_swapper on the frame the swapper
// left, with the frame from before the swap as the original.

const swapModel = "hyperswap_1a_256"

var parts = []string{"live_portrait_feature_extractor", "live_portrait_motion_extractor", "live_portrait_generator"}

func open(t *testing.T, procs []string, factor int, st processors.Stats) *processors.Chain {
	t.Helper()
	cfg := job.Default()
	cfg.Processors = procs
	cfg.FaceSwapperModel = swapModel
	cfg.ExpressionRestorerFactor = factor
	raw := make([]float32, face.EmbeddingLen)
	for j := range raw {
		raw[j] = float32(math.Sin(float64(j)*0.37)) * 0.3
	}
	emb, err := facemodel.NewEmbedding(raw)
	if err != nil {
		t.Fatal(err)
	}
	dir := fixtures.Dir(t, append([]string{swapModel}, parts...)...)
	return processortest.OpenDir(t, cfg, dir, 1, processors.Source{WithSource: true, Embedding: &emb}, st)
}

// scene is a noise frame with a face patch of two colours (so the crops' features differ
// from a swapped face's), its five points and paste area.
func scene() (*raster.Image, [5]geom.Pt, image.Rectangle) {
	tmpl := align.ArcFace128
	five := processortest.FiveAt(tmpl, 90, 70, 230)
	area := align.PasteArea(420, 400, 512, 512, align.Estimate(five, tmpl, 512))
	frame := processortest.Noise(3, 420, 400, [3]uint8{180, 120, 90}, area)
	for y := 200; y < 300; y++ {
		for x := 150; x < 260; x++ {
			frame.Set(x, y, 60, 150, 200)
		}
	}
	return frame, five, area
}

func run(t *testing.T, ch *processors.Chain, b *processors.Batch) {
	t.Helper()
	for _, p := range ch.Steps() {
		if err := processors.Run(p, b); err != nil {
			t.Fatal(err)
		}
	}
}

// The restorer reads the original expression from Batch.Originals: an original other than
// the frame gives another face at factor 100, the same face at factor 0 (the original's
// expression weighs nothing); nothing outside the paste area changes; one face is counted.
func TestRestoresFromTheOriginal(t *testing.T) {
	orig, five, area := scene()
	swapped := processortest.Clone(orig)
	for y := 150; y < 320; y++ {
		for x := 130; x < 300; x++ {
			r, g, b := swapped.At(x, y)
			swapped.Set(x, y, 255-r, g/2, b)
		}
	}
	restore := func(factor int, original *raster.Image) *raster.Image {
		st := processortest.Count{}
		ch := open(t, []string{job.ProcessorExpression}, factor, st)
		frame := processortest.Clone(swapped)
		f := processors.Face{Frame: frame, Face: &face.Face{Detection: face.Detection{Five: five}}}
		run(t, ch, &processors.Batch{Frames: []*raster.Image{frame}, Indices: []int{0}, Faces: []processors.Face{f}, Originals: []*raster.Image{original}})
		processortest.OutsideUntouched(t, frame, swapped, area)
		if st[processors.StageExpression] != 1 {
			t.Errorf("faces counted %v, want 1 restored", st)
		}
		return frame
	}
	fromOrig, fromSelf := restore(100, orig), restore(100, swapped)
	if processortest.Same(fromOrig, fromSelf) {
		t.Error("factor 100: the original's expression changed nothing")
	}
	if !processortest.Same(restore(0, orig), restore(0, swapped)) {
		t.Error("factor 0: the original's expression changed the face")
	}
	ch := open(t, []string{job.ProcessorExpression}, 80, processortest.Count{})
	frame := processortest.Clone(swapped)
	b := &processors.Batch{Frames: []*raster.Image{frame}, Indices: []int{0}, Faces: []processors.Face{{Frame: frame, Face: &face.Face{Detection: face.Detection{Five: five}}}}}
	if err := processors.Run(ch.Steps()[0], b); err == nil || !strings.Contains(err.Error(), "no original") {
		t.Errorf("a batch without originals: %v, want an error saying so", err)
	}
}

// After face_swapper, in one chain, the restorer's original is the frame from before the
// swap: the chain's frame is that of the swapper alone, then the restorer with the unswapped
// frame as original, bit for bit; with the swapped frame as original it differs.
func TestAfterFaceSwapper(t *testing.T) {
	orig, five, _ := scene()
	faceIn := func(frame *raster.Image) processors.Face {
		return processors.Face{Frame: frame, Face: &face.Face{Detection: face.Detection{Five: five}}}
	}
	st := processortest.Count{}
	chained := processortest.Clone(orig)
	processortest.Run(t, open(t, []string{job.ProcessorSwap, job.ProcessorExpression}, 100, st), []*raster.Image{chained}, faceIn(chained))
	if st[processors.StageSwap] != 1 || st[processors.StageExpression] != 1 {
		t.Errorf("faces counted %v, want 1 swapped and 1 restored", st)
	}
	swapped := processortest.Clone(orig)
	processortest.Run(t, open(t, []string{job.ProcessorSwap}, 100, processortest.Count{}), []*raster.Image{swapped}, faceIn(swapped))
	restore := open(t, []string{job.ProcessorExpression}, 100, processortest.Count{})
	for _, c := range []struct {
		original *raster.Image
		same     bool
	}{{orig, true}, {swapped, false}} {
		frame := processortest.Clone(swapped)
		run(t, restore, &processors.Batch{Frames: []*raster.Image{frame}, Indices: []int{0}, Faces: []processors.Face{faceIn(frame)}, Originals: []*raster.Image{c.original}})
		if processortest.Same(frame, chained) != c.same {
			t.Errorf("the chain's frame equals the restorer's from the %s frame: %v, want %v", map[bool]string{true: "unswapped", false: "swapped"}[c.same], !c.same, c.same)
		}
	}
}
