package swap

import (
	"image"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/landmark"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

var (
	predictorOnce sync.Once
	predictor     *landmark.Predictor
	predictorErr  error
)

// dlib loads the real 68-point predictor once per test binary.
func dlib(t testing.TB) *landmark.Predictor {
	t.Helper()
	path := testenv.Model(t, "shape_predictor_68_face_landmarks.dat")
	predictorOnce.Do(func() { predictor, predictorErr = landmark.Load(path) })
	if predictorErr != nil {
		t.Fatal(predictorErr)
	}
	return predictor
}

// fullTier runs a test of the full tier beside the package's other full-tier tests: each swaps
// hundreds of photos on one core, they share nothing they write, and in make test this package
// is the last long one, so run one by one they left the second core idle.
func fullTier(t *testing.T, why string) {
	t.Helper()
	testenv.Full(t, why)
	t.Parallel()
}

// landmarksIn places the 68 points in img starting from a face box (the BlazeFace boxes
// recorded in DESIGN.md), refitting the box to the predictor's mean shape as the pipeline's
// analyzer does.
func landmarksIn(t testing.TB, img *raster.Image, box geom.Rect) face.Landmarks68 {
	t.Helper()
	p := dlib(t)
	mean := p.MeanShape()
	var lm face.Landmarks68
	p.Predict(img, box, &lm)
	for range 2 {
		m := geom.Similarity(mean[:], lm[:])
		c := m.Apply(geom.Pt{X: 0.5, Y: 0.5})
		side := math.Hypot(m.A, m.D)
		p.Predict(img, geom.Rect{X0: c.X - side/2, Y0: c.Y - side/2, X1: c.X + side/2, Y1: c.Y + side/2}, &lm)
	}
	return lm
}

// photoPair is the astronaut's face (source) and Grace Hopper's (target) with their
// landmarks.
type photoPair struct {
	src, dst     *raster.Image
	srcLm, dstLm face.Landmarks68
}

var (
	pairOnce sync.Once
	pair     *photoPair
)

// photos loads the pair once per test binary: most of the package's tests start from it, and
// decoding both PNGs again for each cost seconds of the fast tier. The pair is shared: tests
// clone what they paint on.
func photos(t testing.TB) *photoPair {
	t.Helper()
	pairOnce.Do(func() {
		astro, err := raster.Load(testenv.Sample(t, "astronaut.png"))
		if err != nil {
			t.Fatal(err)
		}
		grace, err := raster.Load(testenv.Sample(t, "grace_hopper.png"))
		if err != nil {
			t.Fatal(err)
		}
		pair = &photoPair{src: astro, dst: grace,
			srcLm: landmarksIn(t, astro, geom.Rect{X0: 177, Y0: 81, X1: 272, Y1: 175}),
			dstLm: landmarksIn(t, grace, geom.Rect{X0: 168, Y0: 145, X1: 364, Y1: 342})}
	})
	if pair == nil {
		t.Fatal("the sample photos failed to load in an earlier test (see its error)")
	}
	return pair
}

// saveForEyes writes img under $FACEFUSION_TEST_OUT, for looking at.
func saveForEyes(t testing.TB, img *raster.Image, name string) {
	saveMadeForEyes(t, func() *raster.Image { return img }, name)
}

// saveMadeForEyes is saveForEyes of the image that img makes, made only when it is saved (a
// survey's picture of where a cover lies asks the cover about every pixel).
func saveMadeForEyes(t testing.TB, img func() *raster.Image, name string) {
	if dir := os.Getenv("FACEFUSION_TEST_OUT"); dir != "" {
		if err := img().SavePNG(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// oldOptions are the swapper before issue 11: a full piecewise warp onto the target's 68
// points, mean/σ colour transfer and a feathered hull mask, nothing else. The tests run it
// to show that they catch what it got wrong.
func oldOptions() Options { return Options{Erode: 0.03, Feather: 0.025, ColourTransfer: true} }

// pasteOptions are a plain paste: the old warp under a hard mask, no colour matching.
func pasteOptions() Options { return Options{Erode: 0.03} }

// swapPhoto swaps the astronaut into Grace Hopper's portrait (after paint has drawn on the
// portrait), checks that nothing outside the swapper's Rect changed and returns the result
// and the swapper.
func swapPhoto(t *testing.T, o Options, paint func(*raster.Image)) (before, after *raster.Image, s *Swapper) {
	t.Helper()
	p := photos(t)
	src, err := NewSource(p.src, &p.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	before = p.dst.Clone()
	if paint != nil {
		paint(before)
	}
	after = before.Clone()
	s = NewSwapper(src, o)
	s.Apply(after, &p.dstLm)
	if s.Rect().Empty() {
		t.Fatal("the swapper left the portrait alone")
	}
	unchangedOutside(t, after, before, s.Rect())
	return before, after, s
}

// edgeGradient is the mean gradient of img's luma (smoothed over 9×9 pixels, so that it
// measures steps and halos rather than skin texture) across the edge of the swapper's last
// mask, beyond ref's own there: per pixel max(0, |∂img/∂n| − |∂ref/∂n|), n the mask's
// normal. The band is where the mask, blurred by 1.5 % of the face size (which gives a hard
// mask a band too), lies between 0.1 and 0.9, less what the swapper kept as occluders
// (their edges are the target's own).
func edgeGradient(img, ref *raster.Image, s *Swapper, size float64) float64 {
	var band raster.Mask
	band.Reset(s.mask.Rect)
	copy(band.Pix, s.mask.Pix)
	var bl raster.Blur
	bl.Apply(&band, 0.015*size)
	// Box sums of luma from a summed-area table of each image.
	table := func(img *raster.Image) func(x, y int) float64 {
		w := img.W + 1
		sat := make([]float64, w*(img.H+1))
		for y := range img.H {
			for x := range img.W {
				r, g, b := img.At(x, y)
				sat[(y+1)*w+x+1] = 0.299*float64(r) + 0.587*float64(g) + 0.114*float64(b) + sat[y*w+x+1] + sat[(y+1)*w+x] - sat[y*w+x]
			}
		}
		return func(x, y int) float64 { // mean over the 9×9 pixels around (x, y)
			x0, y0, x1, y1 := x-4, y-4, x+5, y+5
			return (sat[y1*w+x1] - sat[y0*w+x1] - sat[y1*w+x0] + sat[y0*w+x0]) / 81
		}
	}
	lumaImg, lumaRef := table(img), table(ref)
	var sum, n float64
	r := band.Rect.Intersect(img.Bounds().Inset(6))
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			v := band.At(x, y)
			if v <= 0.1 || v >= 0.9 {
				continue
			}
			if s.opts.Occluders && s.occ.At(x, y) < 0.99 {
				continue
			}
			nx, ny := float64(band.At(x+1, y)-band.At(x-1, y)), float64(band.At(x, y+1)-band.At(x, y-1))
			l := math.Hypot(nx, ny)
			if l == 0 {
				continue
			}
			nx, ny = nx/l, ny/l
			grad := func(luma func(x, y int) float64) float64 {
				gx := (luma(x+1, y) - luma(x-1, y)) / 2
				gy := (luma(x, y+1) - luma(x, y-1)) / 2
				return math.Abs(gx*nx + gy*ny)
			}
			sum += max(0, grad(lumaImg)-grad(lumaRef))
			n++
		}
	}
	return sum / n
}

// The swapped face shows no step or halo where the mask fades out: across the mask's edge
// band the swap adds (almost) no gradient beyond the target's own, with the portrait as it
// is and lit from one side (a shading that no mean colour can match). The new swapper must
// stay within the margin (part of what it adds is the source's own features near the edge,
// less with the whole membrane inside the face, MembraneInner 1); the old one and a plain
// paste must fail it, or the measure no longer tells a seam.
func TestApplyLeavesNoSeam(t *testing.T) {
	fullTier(t, "swaps the sample photos at full size")
	const margin = 0.5 // levels per pixel of 9×9-smoothed luma
	p := photos(t)
	b := geom.Bounds(p.dstLm[:])
	size := math.Max(b.W(), b.H())
	for _, paint := range []func(*raster.Image){nil, sideLight} {
		for _, name := range []string{"old", "paste", "new"} {
			o := map[string]Options{"old": oldOptions(), "paste": pasteOptions(), "new": DefaultOptions()}[name]
			before, after, s := swapPhoto(t, o, paint)
			excess := edgeGradient(after, before, s, size)
			t.Logf("side light %v, %s swapper: %.3f levels/px beyond the target's own gradient", paint != nil, name, excess)
			if name == "new" && excess > margin {
				t.Errorf("side light %v: the edge band's gradient exceeds the target's own by %.3f levels/px on average (at most %.2f)", paint != nil, excess, margin)
			}
			if name != "new" && excess <= margin {
				t.Errorf("side light %v: the %s swapper passes the seam measure (%.3f): the measure no longer tells a seam", paint != nil, name, excess)
			}
		}
	}
}

// sideLight lights the portrait from its right: the left side falls to 45 % brightness, a
// shading that a mean colour cannot match.
func sideLight(img *raster.Image) {
	for y := range img.H {
		for x := range img.W {
			k := 0.45 + 0.55*float64(x)/float64(img.W-1)
			r, g, b := img.At(x, y)
			img.Set(x, y, uint8(k*float64(r)+0.5), uint8(k*float64(g)+0.5), uint8(k*float64(b)+0.5))
		}
	}
}

// shapeDistance is the RMS distance between the inner-face points (brows, eyes, nose,
// mouth: 17–67) of a and b after the least-squares similarity that best takes a onto b,
// relative to b's RMS radius: the difference of their proportions, whatever the pose.
func shapeDistance(a, b *face.Landmarks68, idx []int) float64 {
	var pa, pb []geom.Pt
	for _, i := range idx {
		pa, pb = append(pa, a[i]), append(pb, b[i])
	}
	m := geom.Similarity(pa, pb)
	c := geom.Mean(pb)
	var d, r float64
	for _, i := range idx {
		q := m.Apply(a[i])
		d += q.Sub(b[i]).X*q.Sub(b[i]).X + q.Sub(b[i]).Y*q.Sub(b[i]).Y
		r += b[i].Sub(c).X*b[i].Sub(c).X + b[i].Sub(c).Y*b[i].Sub(c).Y
	}
	return math.Sqrt(d / r)
}

// idPoints are the landmarks that carry identity and not expression: brows, nose, eye
// corners (the mouth's corners move with a smile).
var idPoints = func() []int {
	var idx []int
	for i := 17; i <= 35; i++ {
		idx = append(idx, i)
	}
	return append(idx, 36, 39, 42, 45)
}()

// The swapped face, as the real landmarker reads it, has the source's proportions rather
// than the target's: the second, recognizer-free identity measure of issue 11, on the
// points that carry identity and not expression (idPoints). The two photos' faces are
// alike on those points (0.05 apart, about the landmarker's own error on a swapped face),
// so the source is Grace Hopper's photo stretched to 1.3 times its width: a face with
// wide-set eyes and a broad nose, 0.1–0.2 from either, whose proportions a swap either
// keeps or loses.
func TestApplyKeepsSourceGeometry(t *testing.T) {
	p := photos(t)
	wide := raster.New(p.dst.W*13/10, p.dst.H)
	var z raster.Resizer
	z.Resize(wide, wide.Bounds(), p.dst)
	wideLm := landmarksIn(t, wide, geom.Rect{X0: 168 * 1.3, Y0: 145, X1: 364 * 1.3, Y1: 342})
	src, err := NewSource(wide, &wideLm)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("source to target: %.4f", shapeDistance(&wideLm, &p.srcLm, idPoints))
	for _, name := range []string{"old", "new"} {
		o := DefaultOptions()
		if name == "old" {
			o = oldOptions()
		}
		after := p.src.Clone()
		NewSwapper(src, o).Apply(after, &p.srcLm)
		saveForEyes(t, after, "wide_"+name+".png")
		got := landmarksIn(t, after, geom.Rect{X0: 177, Y0: 81, X1: 272, Y1: 175})
		toSrc, toDst := shapeDistance(&got, &wideLm, idPoints), shapeDistance(&got, &p.srcLm, idPoints)
		t.Logf("%s swapper: to source %.4f, to target %.4f", name, toSrc, toDst)
		if name == "new" && toSrc >= toDst {
			t.Errorf("the swapped face's proportions are closer to the target's (%.4f) than to the source's (%.4f)", toDst, toSrc)
		}
		if name == "old" && toSrc < toDst {
			t.Errorf("the old swapper passes the identity measure (%.4f to the source, %.4f to the target): the measure no longer tells identity", toSrc, toDst)
		}
	}
}

// An opaque bar across the target's face, over both cheeks and the nose, stays visible
// while the rest of the face is swapped: the default occluder handling keeps what is far
// from the target's skin colour.
func TestApplyKeepsOccluders(t *testing.T) {
	p := photos(t)
	l := &p.dstLm
	// From the left jaw to the right at the nose's lower half, a tenth of the face high.
	y0 := int((l[29].Y + l[30].Y) / 2)
	bar := image.Rect(int(l[1].X), y0, int(l[15].X)+1, y0+int(0.1*(l[8].Y-l[27].Y)))
	for _, c := range []raster.RGB{{R: 25, G: 25, B: 30}, {R: 40, G: 70, B: 200}} {
		paint := func(img *raster.Image) { img.FillRect(bar, c) }
		before, after, _ := swapPhoto(t, DefaultOptions(), paint)
		var kept, n float64
		for y := bar.Min.Y; y < bar.Max.Y; y++ {
			for x := bar.Min.X; x < bar.Max.X; x++ {
				r, g, b := after.At(x, y)
				if math.Abs(float64(r)-float64(c.R))+math.Abs(float64(g)-float64(c.G))+math.Abs(float64(b)-float64(c.B)) <= 12 {
					kept++
				}
				n++
			}
		}
		t.Logf("bar %v: %.1f%% of its pixels kept", c, 100*kept/n)
		_, old, _ := swapPhoto(t, oldOptions(), paint)
		if f := 1 - changedFraction(old, before, geom.Pt{X: float64(bar.Min.X+bar.Max.X) / 2, Y: float64(bar.Min.Y+bar.Max.Y) / 2}, bar.Dy()/2); f >= 0.8 {
			t.Errorf("bar %v: the old swapper keeps %.0f%% of the bar's middle: the test no longer tells", c, 100*f)
		}
		if kept < 0.8*n {
			t.Errorf("bar %v: only %.1f%% of its %v pixels stay visible (want ≥ 80%%)", c, 100*kept/n, n)
		}
		// The face around the bar was swapped: forehead-side cheek and chin changed.
		for _, q := range []geom.Pt{l[29].Sub(geom.Pt{Y: 0.12 * (l[8].Y - l[27].Y)}), l[57].Add(l[8]).Scale(0.5)} {
			if d := meanDiff(after, before, q, 6); d < 5 {
				t.Errorf("bar %v: the face at %v did not change (mean difference %.1f)", c, q, d)
			}
		}
		if c.B == 200 {
			saveForEyes(t, after, "bar.png")
		}
	}
}

// A swap's result depends on its frame and landmarks only, not on what the swapper did
// before (its buffers are reused): a worker that swapped other faces first gives the same
// bytes as a fresh one, which any rank count's bit-identical output relies on.
func TestApplyDependsOnlyOnItsInputs(t *testing.T) {
	p := photos(t)
	src, err := NewSource(p.src, &p.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	fresh := p.dst.Clone()
	NewSwapper(src, DefaultOptions()).Apply(fresh, &p.dstLm)
	used := NewSwapper(src, DefaultOptions())
	for _, other := range []face.Landmarks68{place(160, 10, 300, 300), place(40, -20, 100, 80)} {
		scratch := p.dst.Clone()
		scratch.FillRect(image.Rect(150, 200, 350, 260), raster.RGB{R: 20, G: 20, B: 20}) // occluders too
		used.Apply(scratch, &other)
	}
	again := p.dst.Clone()
	used.Apply(again, &p.dstLm)
	for i := range fresh.Pix {
		if fresh.Pix[i] != again.Pix[i] {
			t.Fatalf("byte %d: %d from a fresh swapper, %d from one that swapped other faces first", i, fresh.Pix[i], again.Pix[i])
		}
	}
}

// probeWays calls each for both ways between the sample photos (into the astronaut or not)
// with a probe swapper of the other photo's face (see probeSwapper), the target photo and its
// landmarks.
func probeWays(t testing.TB, each func(toAstro bool, s *Swapper, tgt *raster.Image, lm face.Landmarks68)) {
	t.Helper()
	p := photos(t)
	for _, toAstro := range []bool{false, true} {
		srcImg, srcLm, tgt, lm := p.src, p.srcLm, p.dst, p.dstLm
		if toAstro {
			srcImg, srcLm, tgt, lm = p.dst, p.dstLm, p.src, p.srcLm
		}
		each(toAstro, probeSwapper(t, srcImg, &srcLm), tgt, lm)
	}
}
