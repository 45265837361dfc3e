package swap

import (
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// A shadow cast across a face in a clip is swapped on every frame, through the vote, with the
// lit skin beside it, and the swapped face is as much darker there than the same frame's
// swap without the shadow as the target is: the shadow's finds sit where a codec's noise
// moves them (a frame's dark skin grainier than a photo's), and the carry follows the vote,
// not the frame's own finds.
func TestVotedShadowIsSwappedAndCarriedOnEveryFrame(t *testing.T) {
	fullTier(t, "swaps a 12-frame shaded clip with its vote")
	const frames, edge = 12, 440 // the shadow falls right of x = edge (over her left side)
	bare := testenv.CloseUpClipFrames(t, "astronaut.png", frames)
	dir := t.TempDir()
	shaded := filepath.Join(dir, "shaded.mp4")
	// x0.5 right of the edge, with a penumbra 8 px wide; encoded as real footage is.
	k := fmt.Sprintf("(0.5+0.5*clip((%d-X)/8+0.5,0,1))", edge)
	vf := fmt.Sprintf("format=rgb24,geq=r='r(X,Y)*%[1]s':g='g(X,Y)*%[1]s':b='b(X,Y)*%[1]s',format=yuv420p", k)
	ffmpeg := testenv.Tool(t, "ffmpeg")
	if out, err := exec.Command(ffmpeg, "-v", "error", "-y", "-i", bare, "-vf", vf, "-c:v", "libx264", "-preset", "veryfast", "-crf", "20", shaded).CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	p := photos(t)
	src, err := NewSource(p.dst, &p.dstLm)
	if err != nil {
		t.Fatal(err)
	}
	sw := NewSwapper(src, DefaultOptions())
	imgs, lms := clipFaces(t, shaded, frames)
	bareImgs, bareLms := clipFaces(t, bare, frames)
	covers := make([]*face.Cover, frames)
	for i := range frames {
		covers[i] = sw.FindCover(imgs[i], &lms[i])
	}
	for i := CoverVote; i < frames-CoverVote; i++ {
		var votes []*face.Cover
		for _, c := range covers[i-CoverVote : i+CoverVote+1] {
			if c != nil {
				votes = append(votes, c)
			}
		}
		out := imgs[i].Clone()
		sw.Votes(votes, 2*CoverVote+1)
		sw.Apply(out, &lms[i])
		bareOut := bareImgs[i].Clone()
		sw.Apply(bareOut, &bareLms[i])
		saveForEyes(t, out, fmt.Sprintf("shadowclip_%d.png", i))
		dark, lit := shadowSides(imgs[i], out, &lms[i], edge)
		bareDark, bareLit := shadowSides(bareImgs[i], bareOut, &bareLms[i], edge)
		want := (dark.tgt / lit.tgt) / (bareDark.tgt / bareLit.tgt)
		got := (dark.out / lit.out) / (bareDark.out / bareLit.out)
		t.Logf("frame %d: kept in the shadow %.1f%% (bare %.1f%%), in the light %.1f%% (bare %.1f%%); darkened x%.3f (target x%.3f)",
			i, 100*dark.kept, 100*bareDark.kept, 100*lit.kept, 100*bareLit.kept, got, want)
		if dark.kept > bareDark.kept+0.05 || lit.kept > bareLit.kept+0.05 {
			t.Errorf("frame %d: %.1f%% of the shaded cheek kept, %.1f%% of the lit one (bare face %.1f%%, %.1f%%): want both swapped",
				i, 100*dark.kept, 100*lit.kept, 100*bareDark.kept, 100*bareLit.kept)
		}
		if math.Abs(got/want-1) > 0.15 {
			t.Errorf("frame %d: the swapped shadow darkened x%.2f, the target's x%.2f: want it carried", i, got, want)
		}
	}
}

// clipFaces is the first n frames of clip and the face's landmarks in each.
func clipFaces(t *testing.T, clip string, n int) ([]*raster.Image, []face.Landmarks68) {
	dir := t.TempDir()
	if out, err := exec.Command(testenv.Tool(t, "ffmpeg"), "-v", "error", "-i", clip, "-frames:v", fmt.Sprint(n), filepath.Join(dir, "%02d.png")).CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	imgs, lms := make([]*raster.Image, n), make([]face.Landmarks68, n)
	box := geom.Rect{X0: 269, Y0: 77, X1: 573, Y1: 378}
	for i := range n {
		var err error
		if imgs[i], err = raster.Load(filepath.Join(dir, fmt.Sprintf("%02d.png", i+1))); err != nil {
			t.Fatal(err)
		}
		lms[i] = landmarksIn(t, imgs[i], box)
	}
	return imgs, lms
}

// shadowSide is what a side of the shadow's edge holds of the face: the share of its pixels
// kept as the target's, and the mean brightness of the target and the output.
type shadowSide struct{ kept, tgt, out float64 }

// shadowSides measures the cheeks beside the nose (landmarks lm) each side of x = edge, 10 px
// clear of it.
func shadowSides(tgt, out *raster.Image, lm *face.Landmarks68, edge int) (dark, lit shadowSide) {
	var n [2]float64
	y0, y1 := int(lm[29].Y), int(lm[33].Y)
	for y := y0; y < y1; y++ {
		for x := int(lm[3].X) + 8; x < int(lm[13].X)-8; x++ {
			if x > edge-10 && x < edge+10 || x > int(lm[31].X)-4 && x < int(lm[35].X)+4 {
				continue
			}
			side, s := 1, &lit
			if x > edge {
				side, s = 0, &dark
			}
			tr, tg, tb := tgt.At(x, y)
			or, og, ob := out.At(x, y)
			if absDiff(tr, or) <= 2 && absDiff(tg, og) <= 2 && absDiff(tb, ob) <= 2 {
				s.kept++
			}
			s.tgt += float64(tr) + float64(tg) + float64(tb)
			s.out += float64(or) + float64(og) + float64(ob)
			n[side]++
		}
	}
	for i, s := range []*shadowSide{&dark, &lit} {
		s.kept, s.tgt, s.out = s.kept/n[i], s.tgt/n[i], s.out/n[i]
	}
	return dark, lit
}

// A light shadow over one side of a lined face with glasses is no shadow across the whole
// face: its eye sockets, its glasses and its cheek turned from the light are darker than the
// lit skin too and join the shade, with steps unlike its own along their edges. The swap
// takes no such region for a shadow (it would darken and blur the lit side with it): what it
// takes, where it takes one, lies on the shaded side of the edge.
func TestShadowAreaStaysOnItsSide(t *testing.T) {
	fullTier(t, "swaps a shaded 4-frame close-up clip")
	const frames, edge = 4, 500 // shaded right of x = edge
	bare := testenv.CloseUpClipFrames(t, "grace_hopper.png", frames)
	shaded := filepath.Join(t.TempDir(), "shaded.mp4")
	k := fmt.Sprintf("(0.7+0.3*clip((%d-X)/8+0.5,0,1))", edge)
	vf := fmt.Sprintf("format=rgb24,geq=r='r(X,Y)*%[1]s':g='g(X,Y)*%[1]s':b='b(X,Y)*%[1]s',format=yuv420p", k)
	if out, err := exec.Command(testenv.Tool(t, "ffmpeg"), "-v", "error", "-y", "-i", bare, "-vf", vf, "-c:v", "libx264", "-preset", "veryfast", "-crf", "20", shaded).CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	p := photos(t)
	src, err := NewSource(p.src, &p.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	sw := NewSwapper(src, DefaultOptions())
	imgs, lms := clipFaces(t, shaded, frames)
	for i := range frames {
		c := sw.FindCover(imgs[i], &lms[i])
		if c == nil || c.Shade == nil {
			t.Logf("frame %d: no shadow", i)
			continue
		}
		lit, n := 0, 0
		for j, v := range c.Shade {
			if v == 0 {
				continue
			}
			n++
			if c.Rect.Min.X+j%c.Rect.Dx() < edge-40 {
				lit++
			}
		}
		t.Logf("frame %d: a shadow of %d px, %d of them on the lit side", i, n, lit)
		if lit > n/10 {
			t.Errorf("frame %d: %d of the shadow's %d px lie on the lit side of its edge: want it on its own side", i, lit, n)
		}
	}
}
