package swap

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// A keyframe brightens a still target face by 3 levels in one frame. Matched to the frame's
// own colour, the swapped face follows the jump; matched to the window's steady tone (the
// frame before's), it holds within a fifth of it. Where the window's tone is the frame's own
// (light that changes at a steady pace: the window's line passes through the frame), Steady
// changes nothing, bit for bit; and it lasts one Apply.
func TestSteadyToneHoldsAKeyframesJump(t *testing.T) {
	target := place(100, 5, 320, 230)
	before := skin(640, 480, 3)
	after := before.Clone()
	for i := range after.Pix {
		after.Pix[i] = uint8(min(255, int(after.Pix[i])+3))
	}
	box := geom.Bounds(target[:])
	var tm ToneMeter
	toneBefore, toneAfter := tm.Measure(before, box), tm.Measure(after, box)
	src := newSource(t)
	swapped := func(frame func() []byte, own, steady *face.Tone) []byte {
		img := before.Clone()
		copy(img.Pix, frame())
		s := NewSwapper(src, DefaultOptions())
		if own != nil {
			s.Steady(*own, *steady)
		}
		s.Apply(img, &target)
		return img.Pix
	}
	interior := func(a, b []byte) float64 { // mean |a−b| about the nose
		var sum float64
		n := 0
		c := target[30]
		for y := int(c.Y) - 25; y <= int(c.Y)+25; y++ {
			for x := int(c.X) - 25; x <= int(c.X)+25; x++ {
				for k := range 3 {
					i := y*before.Stride + 3*x + k
					sum += float64(max(a[i], b[i]) - min(a[i], b[i]))
					n++
				}
			}
		}
		return sum / float64(n)
	}
	ref := swapped(func() []byte { return before.Pix }, nil, nil)
	jumped := interior(ref, swapped(func() []byte { return after.Pix }, nil, nil))
	held := interior(ref, swapped(func() []byte { return after.Pix }, &toneAfter, &toneBefore))
	t.Logf("the swapped face's interior moves %.2f levels with the frame's own colour, %.2f with the steady tone", jumped, held)
	if jumped < 2 || held > jumped/5 {
		t.Fatalf("the keyframe's 3 levels move the swapped face %.2f levels (own colour) and %.2f (steady): want the steady one within a fifth", jumped, held)
	}
	// The window agrees with the frame: nothing changes.
	plain := swapped(func() []byte { return after.Pix }, nil, nil)
	same := swapped(func() []byte { return after.Pix }, &toneAfter, &toneAfter)
	if string(plain) != string(same) {
		t.Fatal("a steady tone equal to the frame's own changed the swap")
	}
	// One Apply only: the next, without Steady, is the plain swap.
	s := NewSwapper(src, DefaultOptions())
	s.Steady(toneAfter, toneBefore)
	img := after.Clone()
	s.Apply(img, &target)
	img = after.Clone()
	s.Apply(img, &target)
	if string(img.Pix) != string(plain) {
		t.Fatal("Steady lasted beyond one Apply")
	}
	// Also when that Apply leaves its face untouched (too small to swap): the tones were that
	// face's, not the next one's.
	tiny := place(3, 5, 320, 230)
	s.Steady(toneAfter, toneBefore)
	img = after.Clone()
	s.Apply(img, &tiny)
	if string(img.Pix) != string(after.Pix) {
		t.Fatal("a face too small to swap was changed")
	}
	img = after.Clone()
	s.Apply(img, &target)
	if string(img.Pix) != string(plain) {
		t.Fatal("Steady outlasted an Apply that left its face untouched")
	}
}

// A change of light on the face far beyond a codec's rounding (a flash, a flicker of 12
// levels in one frame) is the frame's own, not noise to hold: the swapped face follows it, as
// without the window, rather than keeping the window's colour inside a seam the frame's light
// crosses; a change between is followed in part, and a keyframe's 3 levels are still held.
func TestSteadyToneFollowsALargeChangeOfLight(t *testing.T) {
	target := place(100, 5, 320, 230)
	before := skin(640, 480, 3)
	box := geom.Bounds(target[:])
	var tm ToneMeter
	toneBefore := tm.Measure(before, box)
	src := newSource(t)
	swap := func(frame *raster.Image, own, steady *face.Tone) []byte {
		img := frame.Clone()
		s := NewSwapper(src, DefaultOptions())
		if own != nil {
			s.Steady(*own, *steady)
		}
		s.Apply(img, &target)
		return img.Pix
	}
	moved := func(levels int) (plain, steadied []byte) {
		after := before.Clone()
		for i := range after.Pix {
			after.Pix[i] = uint8(min(255, int(after.Pix[i])+levels))
		}
		toneAfter := tm.Measure(after, box)
		return swap(after, nil, nil), swap(after, &toneAfter, &toneBefore)
	}
	diff := func(a, b []byte) (most int) {
		for i := range a {
			most = max(most, max(int(a[i]), int(b[i]))-min(int(a[i]), int(b[i])))
		}
		return most
	}
	if plain, held := moved(16); diff(plain, held) > 1 {
		t.Errorf("a flash of 16 levels: the steady swap differs from the frame's own by up to %d levels: want it followed (at most 1)", diff(plain, held))
	}
	if plain, held := moved(3); diff(plain, held) < 2 {
		t.Errorf("a keyframe's 3 levels: the steady swap differs from the frame's own by %d levels: want it held", diff(plain, held))
	}
}
