package landmark

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

const modelName = "shape_predictor_68_face_landmarks.dat"

var (
	modelOnce sync.Once
	model     *Predictor
	modelErr  error
)

// loadModel loads the real 100 MB model once per test binary (about a second).
func loadModel(t testing.TB) *Predictor {
	t.Helper()
	path := testenv.Model(t, modelName)
	modelOnce.Do(func() { model, modelErr = Load(path) })
	if modelErr != nil {
		t.Fatal(modelErr)
	}
	return model
}

func loadSample(t testing.TB, name string) *raster.Image {
	t.Helper()
	img, err := raster.Load(testenv.Sample(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// warp resamples src bilinearly into a w×h image; toSrc maps output pixels to src pixels.
// Outside src is black.
func warp(src *raster.Image, toSrc geom.Affine, w, h int) *raster.Image {
	dst := raster.New(w, h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			p := toSrc.Apply(geom.Pt{X: float64(x), Y: float64(y)})
			x0, y0 := math.Floor(p.X), math.Floor(p.Y)
			fx, fy := p.X-x0, p.Y-y0
			var acc [3]float64
			for _, c := range [4]struct {
				dx, dy int
				w      float64
			}{{0, 0, (1 - fx) * (1 - fy)}, {1, 0, fx * (1 - fy)}, {0, 1, (1 - fx) * fy}, {1, 1, fx * fy}} {
				sx, sy := int(x0)+c.dx, int(y0)+c.dy
				if sx < 0 || sy < 0 || sx >= src.W || sy >= src.H {
					continue
				}
				r, g, b := src.At(sx, sy)
				acc[0] += c.w * float64(r)
				acc[1] += c.w * float64(g)
				acc[2] += c.w * float64(b)
			}
			dst.Set(x, y, uint8(acc[0]+0.5), uint8(acc[1]+0.5), uint8(acc[2]+0.5))
		}
	}
	return dst
}

// about is the map scaling by s and rotating by deg degrees about centre c, then translating
// by (tx, ty).
func about(c geom.Pt, s, deg, tx, ty float64) geom.Affine {
	sin, cos := math.Sincos(deg * math.Pi / 180)
	a, b := s*cos, -s*sin
	d, e := s*sin, s*cos
	return geom.Affine{A: a, B: b, C: c.X - (a*c.X + b*c.Y) + tx, D: d, E: e, F: c.Y - (d*c.X + e*c.Y) + ty}
}

// moveBox maps a box's centre by m and scales its size by s, rounding to dlib's integer corners.
func moveBox(box geom.Rect, m geom.Affine, s float64) (l, t, r, b int) {
	c := m.Apply(box.Center())
	hw, hh := box.W()*s/2, box.H()*s/2
	return int(math.Round(c.X - hw)), int(math.Round(c.Y - hh)), int(math.Round(c.X + hw)), int(math.Round(c.Y + hh))
}

// TestMatchesDlib compares Predict with dlib's own C++ shape_predictor on the sample faces and
// on scaled, rotated and edge-cut copies of them. dlib rounds its points to whole pixels, so
// every one of our points must lie within half a pixel of dlib's.
func TestMatchesDlib(t *testing.T) {
	testenv.Full(t, "compiles and runs dlib's C++ shape_predictor as the oracle")
	p := loadModel(t)
	dir := t.TempDir()
	type input struct {
		name string
		img  *raster.Image
		c    oracleCase
	}
	var inputs []input
	add := func(name string, img *raster.Image, l, tp, r, b int) {
		path := filepath.Join(dir, name+".png")
		// Both sides read this PNG: it is lossless, so they see the same pixels.
		if err := img.SavePNG(path); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{name, img, oracleCase{path, l, tp, r, b}})
	}

	astro := loadSample(t, "astronaut.png")
	grace := loadSample(t, "grace_hopper.png")
	astroBox := geom.Rect{X0: 175, Y0: 85, X1: 275, Y1: 190}
	graceBox := geom.Rect{X0: 165, Y0: 160, X1: 365, Y1: 360}
	add("astronaut", astro, 175, 85, 275, 190)
	add("grace_hopper", grace, 165, 160, 365, 360)

	// Each variant: a similarity m from the sample into a new image of size w×h.
	variants := []struct {
		name  string
		src   *raster.Image
		box   geom.Rect
		s     float64
		deg   float64
		tx    float64
		ty    float64
		w, h  int
		about geom.Pt
	}{
		{"astronaut_small", astro, astroBox, 0.55, 0, -100, -100, 300, 300, geom.Pt{}},
		{"grace_rotated", grace, graceBox, 1, 20, 0, 0, 512, 600, graceBox.Center()},
		{"grace_big_cut", grace, graceBox, 1.6, 0, -240, -280, 400, 400, graceBox.Center()},
		{"astronaut_tilted", astro, astroBox, 1.3, -12, 0, 0, 512, 512, astroBox.Center()},
		{"astronaut_top_cut", astro, astroBox, 1, 7, -100, -115, 300, 200, astroBox.Center()},
	}
	for _, v := range variants {
		m := about(v.about, v.s, v.deg, v.tx, v.ty)
		inv, ok := m.Invert()
		if !ok {
			t.Fatalf("%s: singular map", v.name)
		}
		l, tp, r, b := moveBox(v.box, m, v.s)
		add(v.name, warp(v.src, inv, v.w, v.h), l, tp, r, b)
	}

	cases := make([]oracleCase, len(inputs))
	for i, in := range inputs {
		cases[i] = in.c
	}
	want := runOracle(t, testenv.Model(t, modelName), cases)

	exact := 0
	for i, in := range inputs {
		var got face.Landmarks68
		p.Predict(in.img, in.c.box(), &got)
		worst, rounded := 0.0, 0
		for k := range got {
			d := math.Max(math.Abs(got[k].X-want[i][k].X), math.Abs(got[k].Y-want[i][k].Y))
			worst = math.Max(worst, d)
			if math.Floor(got[k].X+0.5) == want[i][k].X && math.Floor(got[k].Y+0.5) == want[i][k].Y {
				rounded++
			}
			if d > 0.5+1e-9 {
				t.Errorf("%s (box %v): point %d is %.3f, dlib says %v", in.name, in.c.box(), k, got[k], want[i][k])
			}
		}
		t.Logf("%s: worst distance to dlib %.3f px; %d/68 points round to dlib's exactly", in.name, worst, rounded)
		exact += rounded
	}
	// Predict repeats dlib's arithmetic in the same precisions, so rounding our points as dlib
	// does should give dlib's pixels; a compiler that fuses multiply-adds differently may move
	// a rare point across a half-pixel boundary, hence the small allowance.
	if total := len(inputs) * numParts; exact < total*98/100 {
		t.Errorf("only %d of %d points round to dlib's pixels, want at least 98%%", exact, total)
	}
}

// TestLandmarksLookLikeAFace guards the meaning of the output independently of dlib: on the
// astronaut the eyes sit above the nose tip, which sits above the mouth, and the jaw spans the
// box from left to right.
func TestLandmarksLookLikeAFace(t *testing.T) {
	p := loadModel(t)
	img := loadSample(t, "astronaut.png")
	var l face.Landmarks68
	box := geom.Rect{X0: 175, Y0: 85, X1: 275, Y1: 190}
	p.Predict(img, box, &l)
	five := l.Five()
	if !(five[0].X < five[1].X && five[0].Y < five[2].Y && five[1].Y < five[2].Y &&
		five[2].Y < five[3].Y && five[3].X < five[4].X) {
		t.Errorf("five points are not in face order: %v", five)
	}
	if l[0].X > box.X0+0.2*box.W() || l[16].X < box.X1-0.2*box.W() {
		t.Errorf("jaw ends %v and %v do not span the box %v", l[0], l[16], box)
	}
	mean := p.MeanShape()
	for i, q := range mean {
		if q.X < -0.2 || q.X > 1.2 || q.Y < -0.2 || q.Y > 1.2 {
			t.Errorf("mean shape point %d at %v is outside the unit box", i, q)
		}
	}
	if mean[36].X > mean[45].X || mean[8].Y < mean[30].Y {
		t.Errorf("mean shape is not a face: eyes %v %v, chin %v, nose %v", mean[36], mean[45], mean[8], mean[30])
	}
}

// TestPredictMatchesReference runs the fast Predict and the literal reference over many random
// images and boxes, including boxes hanging off the image, and wants identical output.
func TestPredictMatchesReference(t *testing.T) {
	p := loadModel(t)
	rng := rand.New(rand.NewSource(1))
	astro := loadSample(t, "astronaut.png")
	for n := 0; n < 150; n++ {
		var img *raster.Image
		var box geom.Rect
		if n%3 == 0 {
			// Noise, any size, any box: the shape wanders and features leave the image.
			img = raster.New(20+rng.Intn(200), 20+rng.Intn(200))
			rng.Read(img.Pix)
			x, y := rng.Float64()*float64(img.W)*1.2-20, rng.Float64()*float64(img.H)*1.2-20
			box = geom.Rect{X0: x, Y0: y, X1: x + 5 + rng.Float64()*150, Y1: y + 5 + rng.Float64()*150}
		} else {
			// The real face with a jittered, sometimes fractional box.
			img = astro
			j := func(v float64) float64 { return v + rng.NormFloat64()*15 }
			box = geom.Rect{X0: j(175), Y0: j(85), X1: j(275), Y1: j(190)}
			if n%2 == 0 {
				box = geom.Rect{X0: math.Round(box.X0), Y0: math.Round(box.Y0), X1: math.Round(box.X1), Y1: math.Round(box.Y1)}
			}
		}
		var fast, ref face.Landmarks68
		p.Predict(img, box, &fast)
		p.predictReference(img, box, &ref)
		if fast != ref {
			for k := range fast {
				if fast[k] != ref[k] {
					t.Fatalf("case %d (%dx%d, box %v): point %d fast %v, reference %v", n, img.W, img.H, box, k, fast[k], ref[k])
				}
			}
		}
	}
}

// TestPredictMeanIsTheMean holds PredictMean (the boxes' shapes kept as differences from the
// first's) to the plain mean of Predict over the same boxes, for one to MaxBoxes boxes of
// unequal sizes, on the real face. The two are equal in exact arithmetic; their float32 sums
// in another order now and then move a feature pixel across a rounding edge, and a tree's
// choice with it, so most cases agree to a thousandth of a pixel and a few by less than a pixel
// (measured: 31 of 40, the worst 1.16 px). It wants no allocation once warm.
func TestPredictMeanIsTheMean(t *testing.T) {
	p := loadModel(t)
	rng := rand.New(rand.NewSource(2))
	astro := loadSample(t, "astronaut.png")
	const cases = 40
	exact, worst := 0, 0.0
	for n := 0; n < cases; n++ {
		boxes := make([]geom.Rect, 1+n%MaxBoxes)
		var want face.Landmarks68
		for i := range boxes {
			half := 50 + rng.Float64()*8
			x, y := 225+rng.NormFloat64()*2, 137+rng.NormFloat64()*2
			boxes[i] = geom.Rect{X0: x - half, Y0: y - half, X1: x + half, Y1: y + half}
			var one face.Landmarks68
			p.Predict(astro, boxes[i], &one)
			for k := range want {
				want[k].X += one[k].X / float64(len(boxes))
				want[k].Y += one[k].Y / float64(len(boxes))
			}
		}
		var got face.Landmarks68
		p.PredictMean(astro, boxes, &got)
		off := 0.0
		for k := range got {
			off = max(off, math.Hypot(got[k].X-want[k].X, got[k].Y-want[k].Y))
		}
		if off <= 1e-3 {
			exact++
		}
		worst = max(worst, off)
	}
	t.Logf("%d of %d cases within 0.001 px of the mean of Predict; the worst %.3f px", exact, cases, worst)
	if exact < cases*3/4 || worst > 1.5 {
		t.Errorf("PredictMean: %d of %d cases within 0.001 px of the mean of Predict (want ≥ %d), the worst %.3f px (want ≤ 1.5)", exact, cases, cases*3/4, worst)
	}
	boxes := []geom.Rect{{X0: 174, Y0: 84, X1: 274, Y1: 189}, {X0: 176, Y0: 86, X1: 276, Y1: 191}}
	var out face.Landmarks68
	p.PredictMean(astro, boxes, &out)
	if a := testing.AllocsPerRun(10, func() { p.PredictMean(astro, boxes, &out) }); a != 0 {
		t.Errorf("PredictMean allocates %.1f times per call, want 0", a)
	}
}

func TestPredictDoesNotAllocate(t *testing.T) {
	p := loadModel(t)
	img := loadSample(t, "astronaut.png")
	box := geom.Rect{X0: 175, Y0: 85, X1: 275, Y1: 190}
	var out face.Landmarks68
	p.Predict(img, box, &out)
	if n := testing.AllocsPerRun(20, func() { p.Predict(img, box, &out) }); n != 0 {
		t.Errorf("Predict allocates %.1f times per call, want 0", n)
	}
}

// TestPredictConcurrent runs Predict from several goroutines at once and wants the same
// answers as one at a time (run with -race to check the pooled scratch too).
func TestPredictConcurrent(t *testing.T) {
	p := loadModel(t)
	img := loadSample(t, "grace_hopper.png")
	boxes := make([]geom.Rect, 16)
	want := make([]face.Landmarks68, len(boxes))
	for i := range boxes {
		d := float64(i)
		boxes[i] = geom.Rect{X0: 160 + d, Y0: 150 + d/2, X1: 360 + d, Y1: 350 - d}
		p.Predict(img, boxes[i], &want[i])
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4*len(boxes))
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			var got face.Landmarks68
			for k := range boxes {
				i := (k + g*5) % len(boxes)
				p.Predict(img, boxes[i], &got)
				if got != want[i] {
					errs <- fmt.Sprintf("goroutine %d, box %d: concurrent result differs from serial", g, i)
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// wantLoadError checks that Load fails with an error naming path and containing every hint.
func wantLoadError(t *testing.T, path string, hints ...string) {
	t.Helper()
	p, err := Load(path)
	if err == nil {
		t.Fatalf("Load(%s) succeeded (%d cascades), want an error", path, p.cascades)
	}
	msg := err.Error()
	if !strings.Contains(msg, path) || strings.Contains(msg, "\n") {
		t.Errorf("error does not name %s on one line: %q", path, msg)
	}
	for _, h := range hints {
		if !strings.Contains(msg, h) {
			t.Errorf("error %q does not say %q", msg, h)
		}
	}
}

func TestLoadMissing(t *testing.T) {
	wantLoadError(t, filepath.Join(t.TempDir(), "nope.dat"), "does not exist")
}

// TestLoadTruncated also holds the trailing-bytes case (once in TestLoadJunk): the model is
// copied once (in the kernel), with two bytes more, and then cut shorter and shorter in place,
// so the 100 MB are written once rather than once a case.
func TestLoadTruncated(t *testing.T) {
	testenv.Full(t, "copies the 99 MB model once per cut")
	src, err := os.Open(testenv.Model(t, modelName))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "trailing.dat")
	dst, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	size, err := io.Copy(dst, src)
	if err == nil {
		_, err = dst.Write([]byte{0x01, 0x01})
	}
	if err := errors.Join(err, dst.Close()); err != nil {
		t.Fatal(err)
	}
	// Trailing bytes after a complete model mean the file is not what we think it is.
	wantLoadError(t, path, "unexpected data after the model")

	// Cut inside the header, the mean shape, the first tree, the middle of the forests, the
	// anchors and the last byte of the deltas.
	n := int(size)
	for _, cut := range []int{n - 1, n - 20000, n / 2, 5000, 200, 3, 1} {
		next := filepath.Join(dir, fmt.Sprintf("cut%d.dat", cut))
		if err := os.Rename(path, next); err != nil {
			t.Fatal(err)
		}
		path = next
		if err := os.Truncate(path, int64(cut)); err != nil {
			t.Fatal(err)
		}
		wantLoadError(t, path, "truncated")
	}
}

func TestLoadJunk(t *testing.T) {
	dir := t.TempDir()
	noise := make([]byte, 1<<16)
	rand.New(rand.NewSource(2)).Read(noise)
	png, err := os.ReadFile(testenv.Sample(t, "astronaut.png"))
	if err != nil {
		t.Fatal(err)
	}
	// A valid version 1 followed by a mean shape of the wrong size.
	wrongShape := []byte{0x01, 0x01, 0x81, 0x0a, 0x81, 0x01}
	for name, data := range map[string][]byte{
		"noise.dat": noise, "image.dat": png, "text.dat": []byte("hello, this is not a model\n"),
		"wrong_shape.dat": wrongShape, "version2.dat": {0x01, 0x02},
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		wantLoadError(t, path, "not a dlib 68-point shape predictor")
	}

}

// go test -bench . -run '^$' ./internal/landmark
func BenchmarkPredict(b *testing.B) {
	p := loadModel(b)
	img := loadSample(b, "astronaut.png")
	box := geom.Rect{X0: 175, Y0: 85, X1: 275, Y1: 190}
	var out face.Landmarks68
	b.ReportAllocs()
	for b.Loop() {
		p.Predict(img, box, &out)
	}
	b.ReportMetric(float64(b.Elapsed())/1e6/float64(b.N), "ms/face")
}

// BenchmarkPredictMean is one of the analysis' passes: four boxes 1.5 px either way
// (pipeline.BoxShift; how many trees reach another leaf for another box depends on it).
func BenchmarkPredictMean(b *testing.B) {
	p := loadModel(b)
	img := loadSample(b, "astronaut.png")
	var boxes []geom.Rect
	for _, d := range [][2]float64{{-1.5, -1.5}, {-1.5, 1.5}, {1.5, -1.5}, {1.5, 1.5}} {
		boxes = append(boxes, geom.Rect{X0: 175 + d[0], Y0: 85 + d[1], X1: 275 + d[0], Y1: 190 + d[1]})
	}
	var out face.Landmarks68
	b.ReportAllocs()
	for b.Loop() {
		p.PredictMean(img, boxes, &out)
	}
	b.ReportMetric(float64(b.Elapsed())/1e6/float64(b.N), "ms/face")
}

func BenchmarkPredictReference(b *testing.B) {
	p := loadModel(b)
	img := loadSample(b, "astronaut.png")
	box := geom.Rect{X0: 175, Y0: 85, X1: 275, Y1: 190}
	var out face.Landmarks68
	for b.Loop() {
		p.predictReference(img, box, &out)
	}
}

// BenchmarkLoad is a process's first load: the memory of the one before goes back to the system
// between loads (untimed), so each faults its 65 MB of leaves in afresh, as a rank's does.
func BenchmarkLoad(b *testing.B) {
	path := testenv.Model(b, modelName)
	for b.Loop() {
		b.StopTimer()
		debug.FreeOSMemory()
		b.StartTimer()
		if _, err := Load(path); err != nil {
			b.Fatal(err)
		}
	}
}
