package landmark

import (
	"bytes"
	"io"
	"math"
	"os"
	"runtime"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// FuzzRead feeds the shape predictor loader any bytes as the model file (the user names it with
// --landmark-model, or a colleague's models folder holds it): it gives a predictor or an error,
// never a panic, and never sizes its arrays beyond what the bytes can hold (a count near 2^62,
// or one that multiplies to gigabytes, is refused before anything is allocated). A predictor
// that loads predicts without a panic. The seeds are the real model's first 4 KiB (its header,
// mean shape and first tree) and small whole models written in dlib's format (dlibModel).
func FuzzRead(f *testing.F) {
	real, err := os.Open(testenv.Model(f, modelName))
	if err != nil {
		f.Fatal(err)
	}
	head := make([]byte, 4096)
	if _, err := io.ReadFull(real, head); err != nil {
		f.Fatal(err)
	}
	real.Close()
	f.Add(head)
	f.Add(dlibModel(1, 1, 1, 2))
	f.Add(dlibModel(2, 2, 3, 3))
	// A header that declares 100 cascades of 100000 trees of 4095 splits, and one within the
	// limits but far beyond its few bytes.
	f.Add(dlibHeader(100, 100000, 4095))
	f.Add(dlibHeader(15, 1000, 1023))
	img := raster.New(8, 8)
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 37)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Read("fuzz.dat", bytes.NewReader(b))
		if err != nil {
			return
		}
		// Every float holds at least 4 bytes of the file, every split 8, every anchor 2.
		if 4*(len(p.leaves)+len(p.deltas))+8*len(p.splits)+2*len(p.anchor) > len(b) {
			t.Fatalf("%d leaf values, %d deltas, %d splits, %d anchors from %d bytes", len(p.leaves), len(p.deltas), len(p.splits), len(p.anchor), len(b))
		}
		var out face.Landmarks68
		p.Predict(img, geom.Rect{X0: 1, Y0: 1, X1: 7, Y1: 7}, &out)
	})
}

// TestReadRefusesWhatTheFileCannotHold: a model whose counts are within the limits but whose
// arrays its bytes cannot fill is refused as truncated, before the arrays are made.
func TestReadRefusesWhatTheFileCannotHold(t *testing.T) {
	b := dlibHeader(15, 1000, 15) // 15·1000·16 leaves of 136 values: 130 MB as float32
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Read("big.dat", bytes.NewReader(b))
	runtime.ReadMemStats(&after)
	testenv.CheckError(t, "a model of a few bytes declaring 130 MB of leaves", err, "big.dat", "truncated")
	if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
		t.Errorf("reading %d bytes allocated %d", len(b), n)
	}
}

// dlibHeader is the start of a model (version, mean shape, cascade and tree counts, the first
// tree's split count) declaring cascades of trees of splits, with nothing after it.
func dlibHeader(cascades, trees, splits int) []byte {
	var e dlibEncoder
	e.int(1)
	e.matrix(make([]float32, 2*numParts))
	e.int(int64(cascades))
	e.int(int64(trees))
	e.int(int64(splits))
	return e.b
}

// dlibModel is a whole model in dlib's format: cascades of trees of the given depth over
// features feature pixels, its values made up but each in range.
func dlibModel(cascades, trees, depth, features int) []byte {
	var e dlibEncoder
	e.int(1)
	mean := make([]float32, 2*numParts)
	for i := range mean {
		mean[i] = float32(i%17) / 17
	}
	e.matrix(mean)
	e.int(int64(cascades))
	splits := 1<<depth - 1
	for c := 0; c < cascades; c++ {
		e.int(int64(trees))
		for tr := 0; tr < trees; tr++ {
			e.int(int64(splits))
			for s := 0; s < splits; s++ {
				e.int(int64(s % features))
				e.int(int64((s + 1) % features))
				e.float(float32(s) / 8)
			}
			e.int(int64(splits + 1))
			for l := 0; l <= splits; l++ {
				leaf := make([]float32, 2*numParts)
				for i := range leaf {
					leaf[i] = float32(l-i%5) / 100
				}
				e.matrix(leaf)
			}
		}
	}
	e.int(int64(cascades))
	for c := 0; c < cascades; c++ {
		e.int(int64(features))
		for i := 0; i < features; i++ {
			e.int(int64((i * 7) % numParts))
		}
	}
	e.int(int64(cascades))
	for c := 0; c < cascades; c++ {
		e.int(int64(features))
		for i := 0; i < 2*features; i++ {
			e.float(float32(i%3) / 10)
		}
	}
	return e.b
}

// dlibEncoder writes dlib's serialization: the inverse of decoder.
type dlibEncoder struct{ b []byte }

// int writes a packed integer: a control byte (byte count, 0x80 for a negative), then the
// magnitude's bytes, least significant first.
func (e *dlibEncoder) int(v int64) {
	ctl, mag := byte(0), uint64(v)
	if v < 0 {
		ctl, mag = 0x80, uint64(-v)
	}
	var digits []byte
	for ; mag > 0 || len(digits) == 0; mag >>= 8 {
		digits = append(digits, byte(mag))
	}
	e.b = append(append(e.b, ctl|byte(len(digits))), digits...)
}

// float writes v as dlib's float_details: mantissa·2^exponent with 24 bits of fraction.
func (e *dlibEncoder) float(v float32) {
	e.int(int64(math.Round(float64(v) * (1 << 24))))
	e.int(-24)
}

// matrix writes a column matrix in dlib's newer format (negated sizes).
func (e *dlibEncoder) matrix(v []float32) {
	e.int(-int64(len(v)))
	e.int(-1)
	for _, x := range v {
		e.float(x)
	}
}
