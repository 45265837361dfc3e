package swap

import (
	"image"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// place maps the mean shape by scale, rotation (degrees) and translation.
func place(scale, deg, tx, ty float64) face.Landmarks68 {
	return transform(MeanShape(), similarity(scale, deg, tx, ty))
}

func similarity(scale, deg, tx, ty float64) geom.Affine {
	s, c := math.Sincos(deg * math.Pi / 180)
	return geom.Affine{A: scale * c, B: -scale * s, C: tx, D: scale * s, E: scale * c, F: ty}
}

func transform(l face.Landmarks68, m geom.Affine) face.Landmarks68 {
	for i := range l {
		l[i] = m.Apply(l[i])
	}
	return l
}

// pattern is a busy, bluish source texture, unlike the flat skin tone of the target frames.
func pattern(w, h int) *raster.Image {
	m := raster.New(w, h)
	for y := range h {
		for x := range w {
			m.Set(x, y, uint8(60+40*math.Sin(float64(x)/5)), uint8(90+50*math.Cos(float64(y)/4)), uint8(200-float64((x+y)%40)))
		}
	}
	return m
}

// skin is a frame of a warm, slightly noisy skin tone.
func skin(w, h int, seed uint64) *raster.Image {
	rng := rand.New(rand.NewPCG(seed, 1))
	m := raster.New(w, h)
	for y := range h {
		for x := range w {
			n := uint8(rng.IntN(12))
			m.Set(x, y, 200+n, 150+n, 130+n)
		}
	}
	return m
}

func newSource(t testing.TB) *Source {
	t.Helper()
	lm := place(80, 0, 150, 140)
	src, err := NewSource(pattern(300, 300), &lm)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// faceBox is the pixel box of the landmarks and the forehead points above the brows (the
// identity-keeping swap reaches over the brows) widened by the 2–3 px the swapper may touch.
func faceBox(l *face.Landmarks68) image.Rectangle {
	var e [extPoints]geom.Pt
	extend(l, &e)
	b := geom.Bounds(e[:])
	return image.Rect(int(math.Floor(b.X0))-2, int(math.Floor(b.Y0))-2, int(math.Ceil(b.X1))+3, int(math.Ceil(b.Y1))+3)
}

// unchangedOutside fails the test if any pixel outside r differs between a and b.
func unchangedOutside(t *testing.T, a, b *raster.Image, r image.Rectangle) {
	t.Helper()
	for y := range a.H {
		for x := range a.W {
			if (image.Point{x, y}).In(r) {
				continue
			}
			i := y*a.Stride + 3*x
			if a.Pix[i] != b.Pix[i] || a.Pix[i+1] != b.Pix[i+1] || a.Pix[i+2] != b.Pix[i+2] {
				t.Fatalf("pixel (%d,%d) outside %v changed", x, y, r)
			}
		}
	}
}

// meanDiff is the mean absolute difference per channel of a and b over the pixels within
// radius of p.
func meanDiff(a, b *raster.Image, p geom.Pt, radius float64) float64 {
	var s, n float64
	for y := int(p.Y - radius); y <= int(p.Y+radius); y++ {
		for x := int(p.X - radius); x <= int(p.X+radius); x++ {
			if x < 0 || y < 0 || x >= a.W || y >= a.H || math.Hypot(float64(x)-p.X, float64(y)-p.Y) > radius {
				continue
			}
			for c := range 3 {
				i := y*a.Stride + 3*x + c
				s += math.Abs(float64(a.Pix[i]) - float64(b.Pix[i]))
				n++
			}
		}
	}
	return s / n
}

func changedFraction(a, b *raster.Image, p geom.Pt, radius int) float64 {
	var n, c float64
	for y := int(p.Y) - radius; y <= int(p.Y)+radius; y++ {
		for x := int(p.X) - radius; x <= int(p.X)+radius; x++ {
			if x < 0 || y < 0 || x >= a.W || y >= a.H {
				continue
			}
			r1, g1, b1 := a.At(x, y)
			r0, g0, b0 := b.At(x, y)
			if r1 != r0 || g1 != g0 || b1 != b0 {
				c++
			}
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return c / n
}

func TestApplyChangesOnlyTheFace(t *testing.T) {
	for _, ct := range []bool{false, true} {
		frame := skin(640, 480, 1)
		orig := frame.Clone()
		target := place(100, 15, 320, 230)
		opts := DefaultOptions()
		opts.ColourTransfer, opts.Seamless = ct, ct // both match the face's colour to the skin
		s := NewSwapper(newSource(t), opts)
		s.Apply(frame, &target)

		box := faceBox(&target)
		if !s.Rect().In(box) || s.Rect().Empty() {
			t.Fatalf("changed rectangle %v is not inside the face box %v", s.Rect(), box)
		}
		unchangedOutside(t, frame, orig, s.Rect())
		unchangedOutside(t, frame, orig, box)
		// The middle of the face now shows the source's pattern, not the flat skin (with
		// colour transfer the pattern's contrast is scaled down to the skin's, but it is there).
		nose := target[30]
		if f := changedFraction(frame, orig, nose, 30); f < 0.9 {
			t.Fatalf("colour transfer %v: only %.0f%% of the face centre changed", ct, 100*f)
		}
		// Colour transfer brings the face's mean colour to the target's skin; without it the
		// bluish source stays far off.
		var mean [3]float64
		var n float64
		for y := int(nose.Y) - 30; y <= int(nose.Y)+30; y++ {
			for x := int(nose.X) - 30; x <= int(nose.X)+30; x++ {
				r, g, b := frame.At(x, y)
				mean[0], mean[1], mean[2] = mean[0]+float64(r), mean[1]+float64(g), mean[2]+float64(b)
				n++
			}
		}
		off := math.Abs(mean[0]/n-205) + math.Abs(mean[1]/n-155) + math.Abs(mean[2]/n-135)
		if ct && off > 20 {
			t.Fatalf("with colour transfer the face's mean colour is %.0f levels off the skin tone", off)
		}
		if !ct && off < 100 {
			t.Fatalf("without colour transfer the face's mean colour is only %.0f levels off the skin tone", off)
		}
	}
}

// Dots painted on the source landmarks must land on the target landmarks.
func TestApplyMovesSourceLandmarksOntoTarget(t *testing.T) {
	src := raster.New(300, 300)
	for i := range src.Pix {
		src.Pix[i] = 128
	}
	lm := place(80, 0, 150, 140)
	for i := range lm { // whole pixels, so a 3×3 dot is centred exactly on its landmark
		lm[i] = geom.Pt{X: math.Round(lm[i].X), Y: math.Round(lm[i].Y)}
	}
	interior := []int{27, 28, 29, 30, 31, 32, 33, 34, 35}
	for i := 36; i < 68; i++ {
		if i != 60 && i != 64 { // the inner mouth corners sit too close to the outer ones
			interior = append(interior, i)
		}
	}
	for _, i := range interior {
		for dy := -1; dy <= 1; dy++ {
			for dx := -1; dx <= 1; dx++ {
				src.Set(int(lm[i].X)+dx, int(lm[i].Y)+dy, 255, 0, 0)
			}
		}
	}
	source, err := NewSource(src, &lm)
	if err != nil {
		t.Fatal(err)
	}
	target := transform(lm, similarity(1.25, -12, 120, -30))
	frame := skin(640, 480, 2)
	s := NewSwapper(source, Options{Erode: 0, Feather: 0.004})
	s.Apply(frame, &target)
	for _, i := range interior {
		p := target[i]
		// Centroid of "redness" within 4 px of where the landmark should be.
		var sx, sy, sw float64
		for y := int(p.Y) - 5; y <= int(p.Y)+5; y++ {
			for x := int(p.X) - 5; x <= int(p.X)+5; x++ {
				if math.Hypot(float64(x)-p.X, float64(y)-p.Y) > 4 {
					continue
				}
				r, g, b := frame.At(x, y)
				if w := float64(r) - (float64(g)+float64(b))/2; w > 0 {
					w = math.Max(0, w-80) // ignore the skin's own redness
					sx, sy, sw = sx+w*float64(x), sy+w*float64(y), sw+w
				}
			}
		}
		if sw < 200 {
			t.Fatalf("landmark %d: no red dot near the target point %v", i, p)
		}
		if d := math.Hypot(sx/sw-p.X, sy/sw-p.Y); d > 0.5 {
			t.Fatalf("landmark %d: dot at (%.2f, %.2f), target point %v (%.2f px off)", i, sx/sw, sy/sw, p, d)
		}
	}
}

func TestApplyHandlesFacesAtAndBeyondTheFrameEdge(t *testing.T) {
	src := newSource(t)
	s := NewSwapper(src, DefaultOptions())
	partial := map[string]face.Landmarks68{
		"left":          place(100, 0, 20, 240),
		"top-right":     place(100, 30, 630, 10),
		"bottom":        place(120, -20, 320, 470),
		"bigger than":   place(700, 0, 320, 200),
		"corner sliver": place(100, 0, -95, -95),
	}
	for name, target := range partial {
		frame := skin(640, 480, 3)
		orig := frame.Clone()
		s.Apply(frame, &target)
		if !s.Rect().In(frame.Bounds()) {
			t.Fatalf("%s: changed rectangle %v leaves the frame", name, s.Rect())
		}
		unchangedOutside(t, frame, orig, s.Rect())
		// Changed pixels, not a colour distance: the swapped face takes the flat skin's
		// colour statistics, so it differs from it by its scaled-down texture only. Looked
		// at in the middle of the face's visible part (its nose may lie off the frame).
		vis := geom.Bounds(target[:]).Intersect(geom.Rect{X1: 640, Y1: 480}).Center()
		if name != "corner sliver" && changedFraction(frame, orig, vis, 10) < 0.5 {
			t.Fatalf("%s: the visible part of the face did not change", name)
		}
	}
	nan := place(100, 0, 320, 240)
	nan[40].X = math.NaN()
	var line face.Landmarks68
	for i := range line {
		line[i] = geom.Pt{X: 100 + 3*float64(i), Y: 50 + 2*float64(i)}
	}
	untouched := map[string]face.Landmarks68{
		"outside":   place(100, 0, -500, 240),
		"far away":  place(100, 0, 1e9, -1e9),
		"tiny":      place(3, 0, 320, 240),
		"collinear": line,
		"one point": transform(MeanShape(), geom.Affine{C: 200, F: 200}),
		"NaN":       nan,
		"absurd":    place(1e12, 0, 0, 0),
	}
	for name, target := range untouched {
		frame := skin(640, 480, 4)
		orig := frame.Clone()
		s.Apply(frame, &target)
		if !s.Rect().Empty() {
			t.Fatalf("%s: reported changing %v", name, s.Rect())
		}
		unchangedOutside(t, frame, orig, image.Rectangle{})
	}
	// A 1×1 frame must not trip anything either.
	one := raster.New(1, 1)
	t1 := place(100, 0, 0, 0)
	s.Apply(one, &t1)
}

func TestNewSourceRejectsUnusableFaces(t *testing.T) {
	img := pattern(100, 100)
	good := place(30, 0, 50, 50)
	if _, err := NewSource(img, &good); err != nil {
		t.Fatalf("a valid face was rejected: %v", err)
	}
	nan := good
	nan[3].Y = math.Inf(1)
	tiny := place(2, 0, 50, 50)
	outside := place(30, 0, 500, 50)
	for name, lm := range map[string]face.Landmarks68{"NaN": nan, "tiny": tiny, "outside": outside} {
		if _, err := NewSource(img, &lm); err == nil {
			t.Fatalf("%s: NewSource accepted it", name)
		}
	}
	if _, err := NewSource(raster.New(0, 0), &good); err == nil {
		t.Fatal("an empty image was accepted")
	}
}

func TestApplyDoesNotAllocate(t *testing.T) {
	s := NewSwapper(newSource(t), DefaultOptions())
	frame := skin(1280, 720, 5)
	a, b := place(100, 10, 640, 330), place(90, -5, 600, 360)
	orig := frame.Clone()
	s.Apply(frame, &a) // warm-up: buffers grow to this face's size
	// Each run swaps the same frame: Apply in place would otherwise swap its own output
	// again, a new face each time, whose occluder finds may need more room than any before.
	allocs := testing.AllocsPerRun(10, func() {
		copy(frame.Pix, orig.Pix)
		s.Apply(frame, &a)
		s.Apply(frame, &b)
	})
	if allocs != 0 {
		t.Fatalf("Apply allocated %v times per call after warm-up", allocs)
	}
}

// Both triangulations (the 68 points', and the one extended over the forehead) cover the
// hull of their points exactly once, as a triangulation of n points with h on the hull has
// 2n−h−2 triangles.
func TestTrianglesCoverTheHullOnce(t *testing.T) {
	for _, lm := range []face.Landmarks68{place(100, 0, 150, 150), place(73.3, 37, 140.2, 151.7)} {
		var ext [extPoints]geom.Pt
		extend(&lm, &ext)
		for _, mesh := range []struct {
			pts  []geom.Pt
			tris [][3]int
		}{{lm[:], triangles}, {ext[:], extTriangles}} {
			n := len(mesh.pts)
			_, hull := convexHull(mesh.pts, nil, nil)
			if want := 2*n - len(hull) - 2; len(mesh.tris) != want {
				t.Fatalf("%d triangles, want %d for %d points with %d on the hull", len(mesh.tris), want, n, len(hull))
			}
			r := image.Rect(0, 0, 300, 300)
			var hullMask, cov raster.Mask
			hullMask.Reset(r)
			raster.FillConvex(&hullMask, hull, 1)
			count := make([]float32, r.Dx()*r.Dy())
			var dst raster.FloatImage
			src := raster.New(4, 4)
			for _, tr := range mesh.tris {
				dst.Reset(r)
				cov.Reset(r)
				raster.WarpTriangles(&dst, &cov, src, mesh.pts, mesh.pts, [][3]int{tr})
				for i, v := range cov.Pix {
					count[i] += v
				}
			}
			for i, c := range count {
				if c != hullMask.Pix[i] {
					t.Fatalf("%d points, pixel (%d,%d): covered %v times, hull mask %v", n, i%r.Dx(), i/r.Dx(), c, hullMask.Pix[i])
				}
			}
		}
	}
}

// A real swap between two photos, with the real landmarker's points on each face (see
// photos). Colour matching (transfer and membrane) must bring the swapped face's colour
// closer to the target's skin than a swap without it.
func TestApplyOnPhotos(t *testing.T) {
	p := photos(t)
	grace, srcLm, dstLm := p.dst, p.srcLm, p.dstLm
	source, err := NewSource(p.src, &srcLm)
	if err != nil {
		t.Fatal(err)
	}
	var dist [2]float64
	for i, ct := range []bool{false, true} {
		opts := DefaultOptions()
		opts.ColourTransfer, opts.Seamless = ct, ct
		frame := grace.Clone()
		s := NewSwapper(source, opts)
		s.Apply(frame, &dstLm)
		unchangedOutside(t, frame, grace, s.Rect())
		if meanDiff(frame, grace, dstLm[30], 40) < 5 {
			t.Fatal("the photo's face did not change")
		}
		// Distance of the swapped face's mean colour from the target's own there, weighted
		// by the blend mask (what was swapped; the target's glasses kept as occluders are not).
		var a, b [3]float64
		p := dstLm[30]
		for y := int(p.Y) - 40; y <= int(p.Y)+40; y++ {
			for x := int(p.X) - 40; x <= int(p.X)+40; x++ {
				w := float64(s.mask.At(x, y))
				r1, g1, b1 := frame.At(x, y)
				r0, g0, b0 := grace.At(x, y)
				a[0], a[1], a[2] = a[0]+w*float64(r1), a[1]+w*float64(g1), a[2]+w*float64(b1)
				b[0], b[1], b[2] = b[0]+w*float64(r0), b[1]+w*float64(g0), b[2]+w*float64(b0)
			}
		}
		dist[i] = math.Abs(a[0]-b[0]) + math.Abs(a[1]-b[1]) + math.Abs(a[2]-b[2])
		if dir := os.Getenv("FACEFUSION_TEST_OUT"); dir != "" { // for eyeballing
			if err := frame.SavePNG(filepath.Join(dir, map[bool]string{false: "swap_plain.png", true: "swap_colour.png"}[ct])); err != nil {
				t.Fatal(err)
			}
		}
	}
	if dist[1] >= dist[0] {
		t.Fatalf("colour transfer moved the face's mean colour away from the target (%.0f vs %.0f without)", dist[1], dist[0])
	}
}

// BenchmarkApply is one swap of a ~200 px face in a 1280×720 frame.
func BenchmarkApply(b *testing.B) {
	s := NewSwapper(newSource(b), DefaultOptions())
	frame := skin(1280, 720, 6)
	target := place(100, 8, 640, 330) // 200 px across
	b.ReportAllocs()
	for b.Loop() {
		s.Apply(frame, &target)
	}
}

// BenchmarkApplyGrace is one swap of the astronaut into grace_hopper's photo (a ~200 px face
// with grain, shading and glasses, where the occluder rules do their real work).
func BenchmarkApplyGrace(b *testing.B) {
	p := photos(b)
	benchApplyPhoto(b, p.src, &p.srcLm, p.dst, &p.dstLm)
}

// BenchmarkApplyAstronaut is one swap of grace_hopper into the astronaut's photo (a 92 px
// face: the cost of a small face).
func BenchmarkApplyAstronaut(b *testing.B) {
	p := photos(b)
	benchApplyPhoto(b, p.dst, &p.dstLm, p.src, &p.srcLm)
}

// benchApplyPhoto swaps src (landmarks srcLm) into a fresh copy of tgt (tgtLm) each op.
func benchApplyPhoto(b *testing.B, src *raster.Image, srcLm *face.Landmarks68, tgt *raster.Image, tgtLm *face.Landmarks68) {
	source, err := NewSource(src, srcLm)
	if err != nil {
		b.Fatal(err)
	}
	s := NewSwapper(source, DefaultOptions())
	frame := tgt.Clone()
	b.ReportAllocs()
	for b.Loop() {
		copy(frame.Pix, tgt.Pix)
		s.Apply(frame, tgtLm)
	}
}
