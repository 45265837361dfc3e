package spec

import (
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
)

// An image output has FaceFusion's packed sizes (even sides, halves to even, at scale 1 too);
// a scale that leaves nothing or more than ffmpeg takes is a usage error naming the flag.
func TestResolveImage(t *testing.T) {
	c := job.Default()
	sizes := func(im Image) [4]int { return [4]int{im.TempWidth, im.TempHeight, im.Width, im.Height} }
	if im, err := ResolveImage(c, 513, 301); err != nil || sizes(im) != [4]int{512, 300, 512, 300} {
		t.Errorf("scale 1: %+v, %v", im, err)
	}
	c.OutputImageScale = 0.5
	if im, err := ResolveImage(c, 513, 301); err != nil || sizes(im) != [4]int{256, 150, 256, 150} { // 256.5 → 256, 150.5 → 150
		t.Errorf("scale 0.5: %+v, %v", im, err)
	}
	c.OutputImageScale = 2
	if im, err := ResolveImage(c, 513, 301); err != nil || sizes(im) != [4]int{512, 300, 1026, 602} {
		t.Errorf("scale 2: %+v, %v; want the copy at the target's own size", im, err)
	}
	c.OutputImageScale = 0.25
	if _, err := ResolveImage(c, 513, 5); fault.KindOf(err) != fault.Usage || !strings.Contains(err.Error(), "--output-image-scale 0.25") {
		t.Errorf("a 513x5 target at 0.25 (a side of 0): %v, want a usage error naming the flag", err)
	}
	c.OutputImageScale = 1
	if _, err := ResolveImage(c, 1, 301); fault.KindOf(err) != fault.Usage {
		t.Errorf("a 1x301 target at 1 (packed to a side of 0): %v, want a usage error", err)
	}
	// Larger than ffmpeg takes: refused before the work, not after it (FaceFusion allows 8).
	c.OutputImageScale = 8
	if _, err := ResolveImage(c, 2100, 2100); fault.KindOf(err) != fault.Usage || !strings.Contains(err.Error(), "16800x16800") {
		t.Errorf("a 2100x2100 target at 8: %v, want a usage error naming the size", err)
	}
	if _, err := ResolveImage(c, 1000, 1000); err != nil {
		t.Errorf("a 1000x1000 target at 8 (8000x8000): %v", err)
	}
}
