package faceswapper_test

import (
	"image"
	"math"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	_ "github.com/facefusion-hpc/facefusion/internal/processors/faceswapper" // registers face_swapper
	"github.com/facefusion-hpc/facefusion/internal/processors/processortest"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// The processor run as a worker runs it (processors.Open, processors.Run) on the swapper
// stand-in (fixtures.SwapperMix: a non-symmetric colour mix plus a ramp over the crop), so a
// paste at the wrong place, a wrong colour order or normalisation moves the pixels checked.

const model = "hyperswap_1a_256" // takes a unit embedding; de-normalised by its mean and std

// open opens face_swapper with model's stand-in at batch maxBatch, the box mask, the source
// identity emb.
func open(t *testing.T, maxBatch int, emb *face.Embedding, st processors.Stats) *processors.Chain {
	t.Helper()
	cfg := job.Default()
	cfg.Processors = []string{job.ProcessorSwap}
	cfg.FaceSwapperModel = model
	return processortest.Open(t, cfg, model, maxBatch, processors.Source{WithSource: true, Embedding: emb}, st)
}

func embedding(t *testing.T) face.Embedding {
	raw := make([]float32, face.EmbeddingLen)
	for j := range raw {
		raw[j] = float32(math.Sin(float64(j)*0.37)) * 0.3
	}
	e, err := facemodel.NewEmbedding(raw)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// standIn is the stand-in's swapped pixel at frame point p of a face of colour rgb whose
// frame-to-crop map is m: the target normalised in RGB order, mixed, the ramp at p's place in
// the crop, the source term, the gain, de-normalised, clipped and truncated to 8 bits.
func standIn(mdl facemodel.Swapper, m geom.Affine, p geom.Pt, rgb [3]uint8, src [3]float64) [3]float64 {
	at := m.Apply(p)
	gain, offset := fixtures.SwapperGain(mdl.Name)
	var want [3]float64
	for c := range 3 {
		var v float64
		for d := range 3 {
			v += float64(fixtures.SwapperMix[c][d]) * (float64(rgb[d])/255 - mdl.Mean[d]) / mdl.Std[d]
		}
		rx, ry := float64(fixtures.SwapperRamp(c, 1, 0, 1)), float64(fixtures.SwapperRamp(c, 0, 1, 1))
		v += (rx*at.X + ry*at.Y) / float64(mdl.Size)
		v = ((v+src[c])*float64(gain)+float64(offset))*mdl.Std[c] + mdl.Mean[c]
		want[c] = math.Floor(math.Min(1, math.Max(0, v)) * 255)
	}
	return want
}

// sourceTerm is the stand-in's source term for the unit embedding the model takes.
func sourceTerm(emb face.Embedding) (s [3]float64) {
	for c := range 3 {
		var v float64
		for j := range face.EmbeddingLen {
			v += float64(fixtures.SwapperPick(j, c)) * float64(emb.Norm[j])
		}
		s[c] = fixtures.SourceGain * math.Tanh(v)
	}
	return s
}

// The swapped face lands where the face is: at its centre and five points the frame holds the
// stand-in's output for the crop position they map to, and every pixel outside the paste area
// is the frame's own.
func TestSwapPastesTheModelsCropAtTheFace(t *testing.T) {
	mdl, err := facemodel.LookupSwapper(model)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := align.Templates[string(mdl.Template)]
	emb := embedding(t)
	st := processortest.Count{}
	ch := open(t, 1, &emb, st)
	rgb := [3]uint8{100, 140, 70} // not grey: a swapped colour order shows
	const w, h = 640, 600
	five := processortest.FiveAt(tmpl, 150, 110, 300)
	m := align.Estimate(five, tmpl, mdl.Size)
	area := align.PasteArea(w, h, mdl.Size, mdl.Size, m)
	frame := processortest.Noise(1, w, h, rgb, area)
	orig := processortest.Clone(frame)
	processortest.Run(t, ch, []*raster.Image{frame}, processors.Face{Frame: frame, Face: &face.Face{Detection: face.Detection{Five: five}}})

	src := sourceTerm(emb)
	for _, p := range append(five[:], geom.Mean(five[:])) {
		px, py := math.Floor(p.X), math.Floor(p.Y)
		want := standIn(mdl, m, geom.Pt{X: px, Y: py}, rgb, src)
		r, g, b := frame.At(int(px), int(py))
		for c, got := range [3]uint8{r, g, b} {
			if math.Abs(float64(got)-want[c]) > 1 {
				t.Errorf("(%v, %v) channel %d = %d, want %v", px, py, c, got, want[c])
			}
		}
	}
	processortest.OutsideUntouched(t, frame, orig, area)
	if st[processors.StageSwap] != 1 {
		t.Errorf("faces counted %v, want 1 swapped", st)
	}
}

// Two faces of one frame whose paste areas overlap are swapped in turn, as FaceFusion's loop
// over the faces does: the second face's crop is cut from the frame with the first pasted. In
// one batch (the model takes both at once) the frame is bit for bit the frame of two batches of
// one face each, in the faces' order; a face of another frame in the batch changes nothing.
func TestSwapOverlappingFacesInTurn(t *testing.T) {
	mdl, _ := facemodel.LookupSwapper(model)
	tmpl := align.Templates[string(mdl.Template)]
	emb := embedding(t)
	const w, h = 560, 480
	a, b := processortest.FiveAt(tmpl, 90, 80, 260), processortest.FiveAt(tmpl, 200, 130, 240)
	areaOf := func(five [5]geom.Pt) image.Rectangle {
		return align.PasteArea(w, h, mdl.Size, mdl.Size, align.Estimate(five, tmpl, mdl.Size))
	}
	if !areaOf(a).Overlaps(areaOf(b)) {
		t.Fatal("the faces' paste areas do not overlap: the test shows nothing")
	}
	faceOf := func(frame *raster.Image, at int, five [5]geom.Pt) processors.Face {
		return processors.Face{Frame: frame, At: at, Face: &face.Face{Detection: face.Detection{Five: five}}}
	}
	base := processortest.Noise(2, w, h, [3]uint8{180, 120, 90}, areaOf(a), areaOf(b))
	other := processortest.Noise(3, w, h, [3]uint8{60, 150, 200}, areaOf(a))

	batched, otherBatched := processortest.Clone(base), processortest.Clone(other)
	processortest.Run(t, open(t, 4, &emb, processortest.Count{}), []*raster.Image{batched, otherBatched},
		faceOf(batched, 0, a), faceOf(batched, 0, b), faceOf(otherBatched, 1, a))

	one := open(t, 1, &emb, processortest.Count{})
	inTurn, otherAlone := processortest.Clone(base), processortest.Clone(other)
	processortest.Run(t, one, []*raster.Image{inTurn}, faceOf(inTurn, 0, a))
	processortest.Run(t, one, []*raster.Image{inTurn}, faceOf(inTurn, 0, b))
	processortest.Run(t, one, []*raster.Image{otherAlone}, faceOf(otherAlone, 0, a))
	if !processortest.Same(batched, inTurn) {
		t.Error("two overlapping faces in one batch differ from the two swapped in turn")
	}
	if !processortest.Same(otherBatched, otherAlone) {
		t.Error("the other frame's face differs from the same face swapped alone")
	}
	// The order matters where they overlap: the check above can tell a wrong one.
	reversed := processortest.Clone(base)
	processortest.Run(t, one, []*raster.Image{reversed}, faceOf(reversed, 0, b))
	processortest.Run(t, one, []*raster.Image{reversed}, faceOf(reversed, 0, a))
	if processortest.Same(reversed, inTurn) {
		t.Error("the faces swapped in either order give one frame: the test shows nothing")
	}
}
