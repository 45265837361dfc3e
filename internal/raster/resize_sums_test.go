package raster

import (
	"crypto/sha256"
	"encoding/hex"
	"image"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// TestResizerShrinksAsOpenCV holds Resizer to cv2.resize(img, (w, h)) of OpenCV 4.6 (the oracle's;
// sha256 of its output turned to RGB, captured once with Debian's python3-opencv), to the bit.
func TestResizerShrinksAsOpenCV(t *testing.T) {
	for _, c := range []struct {
		file string
		w, h int
		sum  string
	}{
		{"astronaut.png", 320, 320, "0606a609551981afd016f697d8801d660dd23d95a65493a2717f55908c22ff0c"},
		{"astronaut.png", 160, 160, "9183c3363b4f07d0c44d6f1188a11ef28f93c60eaa11034900c3b6e71bc87dca"},
		{"grace_hopper.png", 271, 320, "c22841cf9b3bbf600f49d732e8b39d63c5f5e08ddeddf4b1371a831b9f9a229b"},
		{"coffee.png", 480, 320, "defe00cc314b843dcd68c2e077f3c970b29434c2ac6ff638142d63803b770290"},
		{"grace_hopper.png", 407, 477, "6bb6abb199147c15934c48c65885a735a592ab20d0666014cfbe53983c7394a8"},
	} {
		src, err := Load(testenv.Sample(t, c.file))
		if err != nil {
			t.Fatal(err)
		}
		var z Resizer
		dst := New(c.w+3, c.h+2) // a larger canvas: only the top-left w×h is written
		z.Resize(dst, image.Rect(0, 0, c.w, c.h), src)
		sum := sha256.New()
		for y := range c.h {
			sum.Write(dst.Pix[y*dst.Stride:][:3*c.w])
		}
		if got := hex.EncodeToString(sum.Sum(nil)); got != c.sum {
			t.Errorf("%s to %dx%d: sha256 %s, want OpenCV's %s", c.file, c.w, c.h, got, c.sum)
		}
	}
}
