package main

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/landmark"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// analyzer finds faces in the test process with the same models the binary uses.
func analyzer(t *testing.T) (*pipeline.Analyzer, *landmark.Predictor) {
	t.Helper()
	if err := infer.Init(testenv.ORTLibrary(t)); err != nil {
		t.Fatal(err)
	}
	det, err := adapters.NewBlazeFace(testenv.Model(t, "blazeface_front_128.onnx"), infer.SessionConfig{})
	if err != nil {
		t.Fatal(err)
	}
	lm, err := landmark.Load(testenv.Model(t, "shape_predictor_68_face_landmarks.dat"))
	if err != nil {
		t.Fatal(err)
	}
	an := pipeline.NewAnalyzer(det, lm, 0.5)
	t.Cleanup(func() { an.Close() })
	return an, lm
}

// decodeAll returns every frame of a video.
func decodeAll(t *testing.T, path string) []*raster.Image {
	t.Helper()
	info := clitest.Probe(t, path)
	dec, err := video.OpenDecoder(context.Background(), info, 0, info.Frames)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	var frames []*raster.Image
	for i := 0; i < info.Frames; i++ {
		img := raster.New(info.Width, info.Height)
		if err := dec.Next(img.Bytes()); err != nil {
			t.Fatalf("%s frame %d: %v", path, i, err)
		}
		frames = append(frames, img)
	}
	return frames
}

const alignSize = 128

// aligned samples the face with landmarks lm into a 128×128 grey crop in which the
// landmarker's mean shape fills the unit square: every face lands in the same place.
func aligned(img *raster.Image, lm *face.Landmarks68, mean *face.Landmarks68) []float64 {
	dst := make([]geom.Pt, 68)
	for i, p := range mean {
		dst[i] = p.Scale(alignSize * 0.8).Add(geom.Pt{X: alignSize * 0.1, Y: alignSize * 0.05})
	}
	inv, _ := geom.Similarity(lm[:], dst).Invert()
	out := make([]float64, alignSize*alignSize)
	for y := 0; y < alignSize; y++ {
		for x := 0; x < alignSize; x++ {
			p := inv.Apply(geom.Pt{X: float64(x), Y: float64(y)})
			out[y*alignSize+x] = grey(img, p.X, p.Y)
		}
	}
	return out
}

func grey(img *raster.Image, fx, fy float64) float64 {
	x0, y0 := int(math.Floor(fx)), int(math.Floor(fy))
	ax, ay := fx-float64(x0), fy-float64(y0)
	at := func(x, y int) float64 {
		x, y = min(max(x, 0), img.W-1), min(max(y, 0), img.H-1)
		r, g, b := img.At(x, y)
		return 0.299*float64(r) + 0.587*float64(g) + 0.114*float64(b)
	}
	return (1-ay)*((1-ax)*at(x0, y0)+ax*at(x0+1, y0)) + ay*((1-ax)*at(x0, y0+1)+ax*at(x0+1, y0+1))
}

// structureDistance is 1 − the normalised correlation of two aligned crops over the inner
// face (brows to mouth): 0 for the same face structure, whatever the brightness and contrast.
func structureDistance(a, b []float64) float64 {
	var sa, sb, n float64
	in := func(x, y int) bool { return x >= 32 && x < 96 && y >= 32 && y < 112 }
	for y := 0; y < alignSize; y++ {
		for x := 0; x < alignSize; x++ {
			if in(x, y) {
				sa += a[y*alignSize+x]
				sb += b[y*alignSize+x]
				n++
			}
		}
	}
	ma, mb := sa/n, sb/n
	var cab, caa, cbb float64
	for y := 0; y < alignSize; y++ {
		for x := 0; x < alignSize; x++ {
			if in(x, y) {
				da, db := a[y*alignSize+x]-ma, b[y*alignSize+x]-mb
				cab += da * db
				caa += da * da
				cbb += db * db
			}
		}
	}
	return 1 - cab/math.Sqrt(caa*cbb)
}

// The swap on a lossless run: pixels away from the face are bit-identical to the input, the
// face changed, and the output face, aligned, is closer to the source face than the original
// target face was.
func TestSwapLossless(t *testing.T) {
	dir := t.TempDir()
	clip := filepath.Join(dir, "clip.mp4")
	clitest.FaceClip(t, clip, 320, 240, 12, "25")
	out := filepath.Join(dir, "out.mkv")
	srcPath := testenv.Sample(t, "grace_hopper.png")
	r := clitest.Run(t, "run", "-s", srcPath, "-t", clip, "-o", out, "--output-video-encoder", "ffv1")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	an, lm := analyzer(t)
	mean := lm.MeanShape()
	srcImg, err := raster.Load(srcPath)
	if err != nil {
		t.Fatal(err)
	}
	sf, err := an.Faces(srcImg)
	if err != nil || len(sf) == 0 {
		t.Fatalf("no face in the source: %v", err)
	}
	srcAligned := aligned(srcImg, &sf[0].Landmarks, &mean)

	ins, outs := decodeAll(t, clip), decodeAll(t, out)
	if len(ins) != len(outs) {
		t.Fatalf("%d frames in, %d out", len(ins), len(outs))
	}
	var before, after float64
	for i := range ins {
		faces, err := an.Faces(ins[i])
		if err != nil || len(faces) != 1 {
			t.Fatalf("frame %d: want one face in the target, got %d (%v)", i, len(faces), err)
		}
		l := faces[0].Landmarks
		box := geom.Bounds(l[:])
		m := 0.25 * max(box.W(), box.H())
		near := geom.Rect{X0: box.X0 - m, Y0: box.Y0 - m, X1: box.X1 + m, Y1: box.Y1 + m}
		inner := geom.Bounds(l[17:68])
		changedFar, changedInner, innerPx := 0, 0, 0
		for y := 0; y < ins[i].H; y++ {
			for x := 0; x < ins[i].W; x++ {
				r1, g1, b1 := ins[i].At(x, y)
				r2, g2, b2 := outs[i].At(x, y)
				diff := r1 != r2 || g1 != g2 || b1 != b2
				p := geom.Pt{X: float64(x), Y: float64(y)}
				if diff && !inside(near, p) {
					changedFar++
				}
				if inside(inner, p) {
					innerPx++
					if diff {
						changedInner++
					}
				}
			}
		}
		if changedFar != 0 {
			t.Errorf("frame %d: %d pixels away from the face changed", i, changedFar)
		}
		if changedInner < innerPx*6/10 {
			t.Errorf("frame %d: only %d of %d inner-face pixels changed", i, changedInner, innerPx)
		}
		before += structureDistance(aligned(ins[i], &l, &mean), srcAligned)
		after += structureDistance(aligned(outs[i], &l, &mean), srcAligned)
	}
	before /= float64(len(ins))
	after /= float64(len(ins))
	t.Logf("structure distance to the source face: target %.3f, output %.3f", before, after)
	if after > 0.8*before {
		t.Errorf("the output face (distance %.3f) is not clearly closer to the source than the target face was (%.3f)", after, before)
	}
}

func inside(r geom.Rect, p geom.Pt) bool {
	return p.X >= r.X0 && p.X < r.X1 && p.Y >= r.Y0 && p.Y < r.Y1
}
