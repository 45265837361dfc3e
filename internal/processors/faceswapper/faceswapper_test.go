package faceswapper_test

import (
	"image"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	_ "github.com/facefusion-hpc/facefusion/internal/processors/faceswapper" // registers face_swapper
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// The processor run as a worker runs it (processors.Open, processors.Run) on the swapper
// stand-in (fixtures.SwapperMix: a non-symmetric colour mix plus a ramp over the crop), so a
// paste at the wrong place, a wrong colour order or normalisation moves the pixels checked.

const model = "hyperswap_1a_256" // takes a unit embedding; de-normalised by its mean and std

// count is the processors' Stats: the faces done per stage.
type count map[processors.Stage]int

func (c count) Done(stage processors.Stage, _ time.Time, faces int) { c[stage] += faces }

// open opens face_swapper with model's stand-in at batch maxBatch, the box mask, the source
// identity emb.
func open(t *testing.T, maxBatch int, emb *face.Embedding, st processors.Stats) *processors.Chain {
	t.Helper()
	dir := fixtures.Dir(t, model)
	lib := testenv.ORTLibrary(t)
	cfg := job.Default()
	cfg.Processors = []string{job.ProcessorSwap}
	cfg.FaceSwapperModel = model
	ch, err := processors.Open(&processors.Context{
		Config: cfg,
		Session: func(string) infer.SessionConfig {
			return infer.SessionConfig{ModelsDir: dir, Library: lib, MaxBatch: maxBatch, Logf: func(string, ...any) {}}
		},
		Mask:   adapters.DefaultMaskOptions(),
		Source: processors.Source{WithSource: true, Embedding: emb},
		Stats:  st,
	}, cfg.Processors)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	return ch
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

// fiveAt are the five points of a face of side size px at (x, y) on tmpl.
func fiveAt(tmpl align.Template, x, y, size float64) [5]geom.Pt {
	var five [5]geom.Pt
	for i, q := range tmpl {
		five[i] = geom.Pt{X: x + q.X*size, Y: y + q.Y*size}
	}
	return five
}

// noise is a w×h frame of random pixels with a patch of colour rgb under each of the areas.
func noise(seed uint64, w, h int, rgb [3]uint8, areas ...image.Rectangle) *raster.Image {
	r := rand.New(rand.NewPCG(seed, seed))
	img := raster.New(w, h)
	for i := range img.Pix {
		img.Pix[i] = uint8(r.IntN(256))
	}
	for _, a := range areas {
		a = a.Inset(-3).Intersect(img.Bounds())
		for y := a.Min.Y; y < a.Max.Y; y++ {
			for x := a.Min.X; x < a.Max.X; x++ {
				img.Set(x, y, rgb[0], rgb[1], rgb[2])
			}
		}
	}
	return img
}

func clone(img *raster.Image) *raster.Image {
	c := raster.New(img.W, img.H)
	copy(c.Pix, img.Pix)
	return c
}

// run runs chain's one step on a batch of frames and their faces.
func run(t *testing.T, ch *processors.Chain, frames []*raster.Image, faces ...processors.Face) {
	t.Helper()
	b := &processors.Batch{Frames: frames, Indices: make([]int, len(frames)), Faces: faces}
	for _, p := range ch.Steps() {
		if err := processors.Run(p, b); err != nil {
			t.Fatal(err)
		}
	}
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
	st := count{}
	ch := open(t, 1, &emb, st)
	rgb := [3]uint8{100, 140, 70} // not grey: a swapped colour order shows
	const w, h = 640, 600
	five := fiveAt(tmpl, 150, 110, 300)
	m := align.Estimate(five, tmpl, mdl.Size)
	area := align.PasteArea(w, h, mdl.Size, mdl.Size, m)
	frame := noise(1, w, h, rgb, area)
	orig := clone(frame)
	run(t, ch, []*raster.Image{frame}, processors.Face{Frame: frame, Face: &face.Face{Detection: face.Detection{Five: five}}})

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
	outsideUntouched(t, frame, orig, area)
	if st[processors.StageSwap] != 1 {
		t.Errorf("faces counted %v, want 1 swapped", st)
	}
}

// outsideUntouched fails unless every pixel of frame outside area is orig's.
func outsideUntouched(t *testing.T, frame, orig *raster.Image, area image.Rectangle) {
	t.Helper()
	changed := 0
	for y := range frame.H {
		for x := range frame.W {
			if image.Pt(x, y).In(area) {
				continue
			}
			i := y*frame.Stride + 3*x
			if frame.Pix[i] != orig.Pix[i] || frame.Pix[i+1] != orig.Pix[i+1] || frame.Pix[i+2] != orig.Pix[i+2] {
				changed++
			}
		}
	}
	if changed > 0 {
		t.Errorf("%d pixel(s) outside the paste area %v changed", changed, area)
	}
	if unchanged(frame, orig) {
		t.Error("nothing pasted")
	}
}

func unchanged(a, b *raster.Image) bool {
	for i := range a.Pix {
		if a.Pix[i] != b.Pix[i] {
			return false
		}
	}
	return true
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
	a, b := fiveAt(tmpl, 90, 80, 260), fiveAt(tmpl, 200, 130, 240)
	areaOf := func(five [5]geom.Pt) image.Rectangle {
		return align.PasteArea(w, h, mdl.Size, mdl.Size, align.Estimate(five, tmpl, mdl.Size))
	}
	if !areaOf(a).Overlaps(areaOf(b)) {
		t.Fatal("the faces' paste areas do not overlap: the test shows nothing")
	}
	faceOf := func(frame *raster.Image, at int, five [5]geom.Pt) processors.Face {
		return processors.Face{Frame: frame, At: at, Face: &face.Face{Detection: face.Detection{Five: five}}}
	}
	base := noise(2, w, h, [3]uint8{180, 120, 90}, areaOf(a), areaOf(b))
	other := noise(3, w, h, [3]uint8{60, 150, 200}, areaOf(a))

	batched, otherBatched := clone(base), clone(other)
	run(t, open(t, 4, &emb, count{}), []*raster.Image{batched, otherBatched},
		faceOf(batched, 0, a), faceOf(batched, 0, b), faceOf(otherBatched, 1, a))

	one := open(t, 1, &emb, count{})
	inTurn, otherAlone := clone(base), clone(other)
	run(t, one, []*raster.Image{inTurn}, faceOf(inTurn, 0, a))
	run(t, one, []*raster.Image{inTurn}, faceOf(inTurn, 0, b))
	run(t, one, []*raster.Image{otherAlone}, faceOf(otherAlone, 0, a))
	if !unchanged(batched, inTurn) {
		t.Error("two overlapping faces in one batch differ from the two swapped in turn")
	}
	if !unchanged(otherBatched, otherAlone) {
		t.Error("the other frame's face differs from the same face swapped alone")
	}
	// The order matters where they overlap: the check above can tell a wrong one.
	reversed := clone(base)
	run(t, one, []*raster.Image{reversed}, faceOf(reversed, 0, b))
	run(t, one, []*raster.Image{reversed}, faceOf(reversed, 0, a))
	if unchanged(reversed, inTurn) {
		t.Error("the faces swapped in either order give one frame: the test shows nothing")
	}
}
