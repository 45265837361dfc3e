package swap

import (
	"math"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// A face's covers are voted over its window: a cover found in most of the frames is kept in
// each of them (in a frame where it was not found too), one found in fewer is swapped over,
// and a cover found where the face stood elsewhere is mapped by the face's motion onto the
// frame voted in. A vote of the frame's own cover alone swaps exactly as no vote does.
func TestVotesKeepWhatCoversMostOfTheFrames(t *testing.T) {
	p := photos(t)
	src, err := NewSource(p.src, &p.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	bare, lm := p.dst, p.dstLm
	b := geom.Bounds(lm[:])
	size := math.Max(b.W(), b.H())
	// A blue bar across the eyes, a tenth of the face high.
	eyes := geom.Mean(lm[36:48])
	bar := func(x, y int) bool {
		return math.Abs(float64(y)-eyes.Y) <= 0.05*size && float64(x) >= lm[0].X && float64(x) <= lm[16].X
	}
	paint := func(img *raster.Image, dx, dy int) *raster.Image {
		out := img.Clone()
		for y := range out.H {
			for x := range out.W {
				if bar(x-dx, y-dy) {
					out.Set(x, y, 40, 70, 200)
				}
			}
		}
		return out
	}
	painted := paint(bare, 0, 0)
	s := NewSwapper(src, DefaultOptions())
	own := s.FindCover(painted, &lm)
	if own == nil || s.FindCover(bare, &lm) != nil {
		t.Fatalf("FindCover: a cover on the painted face %v, none on the bare one %v: want both", own != nil, s.FindCover(bare, &lm) == nil)
	}
	// The face moved by (dx, dy) with the bar on it: its cover there.
	const dx, dy = 9, -5
	moved := lm
	for i := range moved {
		moved[i] = moved[i].Add(geom.Pt{X: dx, Y: dy})
	}
	shifted := s.FindCover(paint(translate(bare, dx, dy), dx, dy), &moved)
	if shifted == nil {
		t.Fatal("FindCover: no cover on the moved face")
	}
	swap := func(frame *raster.Image, covers []*face.Cover, frames int) *raster.Image {
		out := frame.Clone()
		if frames > 0 {
			s.Votes(covers, frames)
		}
		s.Apply(out, &lm)
		return out
	}
	// kept is the share of the bar's pixels that the swap left as frame had them.
	kept := func(frame, out *raster.Image) float64 {
		var k, n float64
		for y := range frame.H {
			for x := range frame.W {
				if !bar(x, y) || !inPoly(faceHull(&lm), float64(x), float64(y)) {
					continue
				}
				n++
				r0, g0, b0 := frame.At(x, y)
				r1, g1, b1 := out.At(x, y)
				if absDiff(r0, r1)+absDiff(g0, g1)+absDiff(b0, b1) <= 12 {
					k++
				}
			}
		}
		return k / n
	}
	alone := swap(painted, nil, 0)
	if got := swap(painted, []*face.Cover{own}, 1); string(got.Pix) != string(alone.Pix) {
		t.Error("a vote of the frame's own cover alone swapped otherwise than no vote")
	}
	uncovered := swap(painted, nil, 5) // nothing found in any frame: the bar is swapped over
	if got := swap(painted, []*face.Cover{own, own}, 5); string(got.Pix) != string(uncovered.Pix) {
		t.Error("a cover found in 2 of 5 frames: swapped otherwise than one found in none")
	}
	if k := kept(painted, uncovered); k > 0.2 {
		t.Errorf("a cover found in no frame: %.1f %% of the bar kept, want it swapped over (at most 20 %%)", 100*k)
	}
	for _, c := range []struct {
		name   string
		frame  *raster.Image
		covers []*face.Cover
		frames int
	}{
		{"no vote", painted, nil, 0},
		{"found in 3 of 5 frames", painted, []*face.Cover{own, own, own}, 5},
		{"found in 4 of 7 frames, not in this one", bare, []*face.Cover{own, own, own, own}, 7},
		{"found where the face stood elsewhere", painted, []*face.Cover{shifted, shifted}, 3},
	} {
		out := swap(c.frame, c.covers, c.frames)
		if k := kept(c.frame, out); k < 0.8 {
			t.Errorf("%s: %.1f %% of the bar kept, want at least 80 %%", c.name, 100*k)
		}
	}
	// Mapped by the motion, the moved face's cover is the frame's own, give or take a pixel's
	// rounding along the bar's edges.
	moves := swap(painted, []*face.Cover{shifted}, 1)
	diff := 0
	for i := range moves.Pix {
		if absDiff(moves.Pix[i], alone.Pix[i]) > 8 {
			diff++
		}
	}
	if diff > int(0.02*size*size) {
		t.Errorf("the moved face's cover mapped back: %d channel values differ from the frame's own cover's swap by more than 8, want at most %d", diff, int(0.02*size*size))
	}
}

// translate is img moved by (dx, dy), the uncovered edge black.
func translate(img *raster.Image, dx, dy int) *raster.Image {
	out := raster.New(img.W, img.H)
	for y := range img.H {
		for x := range img.W {
			if u, v := x-dx, y-dy; u >= 0 && v >= 0 && u < img.W && v < img.H {
				r, g, b := img.At(u, v)
				out.Set(x, y, r, g, b)
			}
		}
	}
	return out
}

// A shadow that some frames of the window took for a cover and others for a shadow is
// swapped (neither wins the vote alone) and darkened as the target is there: most frames
// found it dark. Three frames' covers, three frames' shadows and one frame with neither, over
// the face half in a ×0.5 shade.
func TestVotedShadowSplitBetweenCoverAndShadowIsDarkened(t *testing.T) {
	p := photos(t)
	src, err := NewSource(p.src, &p.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	lm := p.dstLm
	shade := shadowCases[0] // half, ×0.5
	target, share := shadowed(p.dst, &lm, shade)
	s := NewSwapper(src, DefaultOptions())
	found := s.FindCover(target, &lm)
	if found == nil || found.Shade == nil {
		t.Fatalf("FindCover: no shadow found on the half-shaded face (cover %v)", found != nil)
	}
	asCover := *found
	asCover.Pix, asCover.Shade = make([]uint8, len(found.Pix)), nil
	for i := range asCover.Pix {
		asCover.Pix[i] = found.Pix[i] | found.Shade[i]
	}
	asShadow := *found
	covers := []*face.Cover{&asCover, &asCover, &asCover, &asShadow, &asShadow, &asShadow}
	swap := func(frame *raster.Image, votes []*face.Cover) *raster.Image {
		out := frame.Clone()
		if votes != nil {
			s.Votes(votes, 2*CoverVote+1)
		}
		s.Apply(out, &lm)
		return out
	}
	out := swap(target, covers)
	bareOut := swap(p.dst, nil)
	// Over the shade's face pixels: how many the swap changed, and how dark the output is
	// against the bare face's swap.
	var changed, n, dark, light float64
	hull := faceHull(&lm)
	for y := range target.H {
		for x := range target.W {
			if share[y*target.W+x] < 1 || !inPoly(hull, float64(x), float64(y)) {
				continue
			}
			n++
			if pixDiff(target, out, x, y) > 12*shade.k[0] {
				changed++
			}
			dark += pixLuma(out, x, y)
			light += pixLuma(bareOut, x, y)
		}
	}
	if n == 0 {
		t.Fatal("no face pixel in the shade")
	}
	ratio := dark / light
	t.Logf("shaded face pixels %.0f: swapped %.1f %%, as dark as the bare swap ×%.2f (target ×%.2f)", n, 100*changed/n, ratio, shade.k[0])
	if changed/n < 0.6 {
		t.Errorf("the shade split between covers and shadows is swapped on %.1f %% of its pixels, want >= 60 %%", 100*changed/n)
	}
	if ratio > shade.k[0]+0.06 || ratio < shade.k[0]-0.1 { // the membrane alone carries part of it
		t.Errorf("the swapped shade is ×%.2f as bright as the bare face's swap, want about ×%.2f (darkened as the target)", ratio, shade.k[0])
	}
}
