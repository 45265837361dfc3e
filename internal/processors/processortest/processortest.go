// Package processortest runs a processor as a worker runs it (processors.Open, processors.Run)
// on a model's stand-in (infer/fixtures), on synthetic frames whose faces sit where the test
// puts them: what the tests of the processors that paste a model's crop share.
package processortest

import (
	"image"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// Count is the processors' Stats: the faces done per stage.
type Count map[processors.Stage]int

// Done counts faces at stage.
func (c Count) Done(stage processors.Stage, _ time.Time, faces int) { c[stage] += faces }

// Open opens cfg's processors on the stand-in of model at batch maxBatch, with the box mask and
// src as the source, counting into st; the chain closes with the test.
func Open(t testing.TB, cfg job.Config, model string, maxBatch int, src processors.Source, st processors.Stats) *processors.Chain {
	t.Helper()
	return OpenDir(t, cfg, fixtures.Dir(t, model), maxBatch, src, st)
}

// OpenDir is Open on the models in dir (a chain of several files: fixtures.Dir of them all).
func OpenDir(t testing.TB, cfg job.Config, dir string, maxBatch int, src processors.Source, st processors.Stats) *processors.Chain {
	t.Helper()
	lib := testenv.ORTLibrary(t)
	ch, err := processors.Open(&processors.Context{
		Config: cfg,
		Session: func(string) infer.SessionConfig {
			return infer.SessionConfig{ModelsDir: dir, Library: lib, MaxBatch: maxBatch, Logf: func(string, ...any) {}}
		},
		Mask:   adapters.DefaultMaskOptions(),
		Source: src,
		Stats:  st,
	}, cfg.Processors)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	return ch
}

// Run runs every step of ch on a batch of frames and their faces.
func Run(t testing.TB, ch *processors.Chain, frames []*raster.Image, faces ...processors.Face) {
	t.Helper()
	b := &processors.Batch{Frames: frames, Indices: make([]int, len(frames)), Faces: faces}
	if ch.ReadsOriginals() { // as the worker keeps them: the frames before the first step
		for _, f := range frames {
			b.Originals = append(b.Originals, Clone(f))
		}
	}
	for _, p := range ch.Steps() {
		if err := processors.Run(p, b); err != nil {
			t.Fatal(err)
		}
	}
}

// FiveAt are the five points of a face of side px at (x, y) on tmpl.
func FiveAt(tmpl align.Template, x, y, side float64) [5]geom.Pt {
	var five [5]geom.Pt
	for i, q := range tmpl {
		five[i] = geom.Pt{X: x + q.X*side, Y: y + q.Y*side}
	}
	return five
}

// Noise is a w×h frame of random pixels (seeded) with a patch of colour rgb under each of the
// areas, a little wider than each.
func Noise(seed uint64, w, h int, rgb [3]uint8, areas ...image.Rectangle) *raster.Image {
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

// Clone is a copy of img.
func Clone(img *raster.Image) *raster.Image {
	c := raster.New(img.W, img.H)
	copy(c.Pix, img.Pix)
	return c
}

// Same reports whether a and b are the same frame, bit for bit.
func Same(a, b *raster.Image) bool {
	for i := range a.Pix {
		if a.Pix[i] != b.Pix[i] {
			return false
		}
	}
	return true
}

// OutsideUntouched fails the test unless every pixel of frame outside area is orig's, and
// something inside changed.
func OutsideUntouched(t testing.TB, frame, orig *raster.Image, area image.Rectangle) {
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
	if Same(frame, orig) {
		t.Error("nothing pasted")
	}
}
