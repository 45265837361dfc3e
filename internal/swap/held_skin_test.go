package swap

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// keepHeld (a find under occMinArea kept where it continues off the face) and skin of the
// face's own hue beyond the outline below the eyes (a bare neck and shoulders, an ear, a
// skin-toned wall): it continues any skin-hued find at the cheek or the jaw, so the lossy
// clip's blemish finds that dropSmall threw away came back as "held" things.

// jpegOf is img through a JPEG encoder at quality q (a lossy clip's frame).
func jpegOf(img *raster.Image, q int) *raster.Image {
	rgba := image.NewRGBA(image.Rect(0, 0, img.W, img.H))
	for y := range img.H {
		for x := range img.W {
			r, g, b := img.At(x, y)
			rgba.Set(x, y, color.RGBA{r, g, b, 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, rgba, &jpeg.Options{Quality: q}); err != nil {
		panic(err)
	}
	dec, err := jpeg.Decode(&buf)
	if err != nil {
		panic(err)
	}
	out := img.Clone()
	for y := range img.H {
		for x := range img.W {
			r, g, b, _ := dec.At(x, y).RGBA()
			out.Set(x, y, uint8(r>>8), uint8(g>>8), uint8(b>>8))
		}
	}
	return out
}

// jawInside reports whether (x, y) lies inside the jaw's outline closed over the brows.
func jawInside(l *face.Landmarks68, x, y float64) bool {
	poly := append([]geom.Pt(nil), l[0:17]...)
	for i := 26; i >= 17; i-- {
		poly = append(poly, l[i])
	}
	return inPoly(poly, x, y)
}

// paintSkinAround paints the skin's colour scaled by k (σ 4 levels) beyond the face's hull
// below the eyes, within 0.9 face sizes of the chin's column.
func paintSkinAround(img *raster.Image, l *face.Landmarks68, k float64) {
	eyes := geom.Mean(l[36:48]).Y
	b := geom.Bounds(l[:])
	s := math.Max(b.W(), b.H())
	hull := faceHull(l)
	col := scaledSkin(k)(skinColour(img, l))
	rng := rand.New(rand.NewPCG(3, 3))
	for y := range img.H {
		for x := range img.W {
			fx, fy := float64(x), float64(y)
			if fy > eyes && !inPoly(hull, fx, fy) && !jawInside(l, fx, fy) && math.Abs(fx-l[8].X) < 0.9*s {
				c := shade(col, 4*rng.NormFloat64())
				img.Set(x, y, c.R, c.G, c.B)
			}
		}
	}
}

// takenBackOnFace is takenBack's px, counting only those inside bare's hull (the face's own
// pixels, not background the landmarks took in).
func takenBackOnFace(s *Swapper, frame *raster.Image, lm, bare *face.Landmarks68) float64 {
	b := geom.Bounds(lm[:])
	s.Apply(frame.Clone(), lm)
	s.occluders(frame, lm, &s.mask, math.Max(b.W(), b.H()), s.last)
	fr := s.last
	hull := faceHull(bare)
	var sum float64
	for i, v := range s.occ.Pix {
		x, y := fr.Min.X+i%fr.Dx(), fr.Min.Y+i/fr.Dx()
		if inPoly(hull, float64(x), float64(y)) {
			sum += float64(s.mask.At(x, y) * (1 - v))
		}
	}
	return sum
}

// The astronaut's bare face, JPEG'd, and Grace Hopper's, with skin of her own hue (or a
// lighter shade) around it below the eyes. Before keepHeld the occluders took back the base
// figures below (lossy finds already); keepHeld may add no more than 0.2 % of the face size
// squared to them: a find at the cheek's outline of the skin's hue must not flood into the
// skin beyond it and take back bare cheek.
func TestHeldIgnoresSkinAroundTheFace(t *testing.T) {
	t.Parallel()
	p := photos(t)
	ways := map[bool]struct {
		src, tgt *raster.Image
		srcLm    *face.Landmarks68
		box      geom.Rect
		name     string
	}{
		false: {p.dst, p.src, &p.dstLm, geom.Rect{X0: 177, Y0: 81, X1: 272, Y1: 175}, "the astronaut"},
		true:  {p.src, p.dst, &p.srcLm, geom.Rect{X0: 168, Y0: 145, X1: 364, Y1: 342}, "Grace Hopper"},
	}
	for _, c := range []struct {
		grace bool
		q     int // JPEG quality, 0 for none
		k     float64
		base  float64 // px taken back on the face before keepHeld
	}{{false, 30, 1, 115}, {false, 30, 1.15, 131}, {false, 50, 1, 291}, {false, 50, 1.15, 392}, {true, 0, 1.15, 0}} {
		w := ways[c.grace]
		src, err := NewSource(w.src, w.srcLm)
		if err != nil {
			t.Fatal(err)
		}
		opts := DefaultOptions()
		opts.Occluders = false
		s := NewSwapper(src, opts)
		img := w.tgt.Clone()
		if c.q > 0 {
			img = jpegOf(w.tgt, c.q)
		}
		bare := landmarksIn(t, img, w.box)
		paintSkinAround(img, &bare, c.k)
		lm := landmarksIn(t, img, w.box)
		px := takenBackOnFace(s, img, &lm, &bare)
		b := geom.Bounds(lm[:])
		allowed := c.base + 0.002*math.Pow(max(b.W(), b.H()), 2)
		t.Logf("%s, jpeg q%d, skin ×%.2f around: %.0f px of the bare face taken back (before keepHeld: %.0f)", w.name, c.q, c.k, px, c.base)
		if px > allowed {
			t.Errorf("%s, jpeg q%d, skin ×%.2f around below the eyes: the occluders take back %.0f px of the bare face, want ≤ %.0f (%.0f before keepHeld + 0.2 %% of size²)", w.name, c.q, c.k, px, allowed, c.base)
		}
	}
}

// Apply allocates nothing after warm-up on a frame where keepHeld keeps a find (a flat navy
// thumb over Grace Hopper's jaw; keepHeld keeps it on every call). TestApplyDoesNotAllocate's
// synthetic skin has no finds and never reaches it.
func TestHeldDoesNotAllocate(t *testing.T) {
	ways := photoWays(t)
	w := ways[false]
	sh := heldShapes[2] // the thumb over the jaw: keepHeld keeps and grows its find
	b := geom.Bounds(w.lm[:])
	size := math.Max(b.W(), b.H())
	frame := w.tgt.Clone()
	rng := rand.New(rand.NewPCG(7, 7))
	for y := range frame.H {
		for x := range frame.W {
			if sh.inside(&w.lm, size, float64(x), float64(y)) {
				c := occTextures[0].colour(raster.RGB{R: 30, G: 35, B: 70}, x, y, rng)
				frame.Set(x, y, c.R, c.G, c.B)
			}
		}
	}
	lm := landmarksIn(t, frame, w.box)
	s := NewSwapper(w.src, DefaultOptions())
	work := frame.Clone()
	s.Apply(work, &lm)
	allocs := testing.AllocsPerRun(5, func() {
		copy(work.Pix, frame.Pix)
		s.Apply(work, &lm)
	})
	if allocs != 0 {
		t.Fatalf("Apply allocated %v times per call after warm-up on a navy thumb over the jaw", allocs)
	}
}
