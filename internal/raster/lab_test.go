package raster

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// The sha256 of OpenCV 4.6's cv2.cvtColor over every 8-bit triple (triple v = (v>>16, v>>8&255,
// v&255), v from 0 to 2²⁴−1, in order), COLOR_RGB2Lab and COLOR_Lab2RGB, computed with Debian
// 12's python3-opencv.
const (
	cvRGB2LabSHA = "b3067516fa862bb008af4ffb4da5555722524a70776bf7ffd523a90f4331480c"
	cvLab2RGBSHA = "fe94a44a1fb178c1b5041a43095c4d99f4d37fb7b32258da356d8bd63bba9b0d"
)

func TestLabMatchesOpenCVOnEveryTriple(t *testing.T) {
	to, back := sha256.New(), sha256.New()
	buf, bufBack := make([]byte, 0, 3<<16), make([]byte, 0, 3<<16)
	for v := range 1 << 24 {
		x, y, z := uint8(v>>16), uint8(v>>8), uint8(v)
		l, a, b := RGBToLab8(x, y, z)
		r, g, bl := LabToRGB8(x, y, z)
		buf, bufBack = append(buf, l, a, b), append(bufBack, r, g, bl)
		if len(buf) == cap(buf) {
			to.Write(buf)
			back.Write(bufBack)
			buf, bufBack = buf[:0], bufBack[:0]
		}
	}
	if got := hex.EncodeToString(to.Sum(nil)); got != cvRGB2LabSHA {
		t.Errorf("RGB→Lab over all triples: sha256 %s, OpenCV's %s", got, cvRGB2LabSHA)
	}
	if got := hex.EncodeToString(back.Sum(nil)); got != cvLab2RGBSHA {
		t.Errorf("Lab→RGB over all triples: sha256 %s, OpenCV's %s", got, cvLab2RGBSHA)
	}
}

// Samples of the same conversion, so a failure above can be read: cv2.cvtColor of single pixels.
func TestLabKnownValues(t *testing.T) {
	for _, c := range []struct{ in, lab [3]uint8 }{
		{[3]uint8{0, 0, 0}, [3]uint8{0, 128, 128}},
		{[3]uint8{255, 255, 255}, [3]uint8{255, 128, 128}},
		{[3]uint8{0, 98, 254}, [3]uint8{119, 165, 45}}, // lands on the cube-root table entry OpenCV truncates
	} {
		l, a, b := RGBToLab8(c.in[0], c.in[1], c.in[2])
		if got := [3]uint8{l, a, b}; got != c.lab {
			t.Errorf("RGB %v → Lab %v, OpenCV gives %v", c.in, got, c.lab)
		}
	}
}

// The test images of the CLAHE test: a fixed linear congruential sequence folded into k levels
// over a slow ramp, so tiles differ and the histograms clip; Python builds the same ones.
func claheImage(seed, w, h, k int) []uint8 {
	v := seed
	out := make([]uint8, w*h)
	for i := range out {
		v = (v*1103515245 + 12345) % (1 << 31)
		out[i] = uint8(((v >> 16) % k) + i*7/(w*h/16+1))
	}
	return out
}

// cvCLAHESHA is the sha256 of OpenCV 4.6's cv2.createCLAHE(clipLimit).apply (8×8 tiles) over
// the claheImage cases below, one after another.
const cvCLAHESHA = "87d0b355dfa44f346da91713f693962771636bf3d2f1b4fde68d151ac7684a1a"

func TestCLAHEMatchesOpenCV(t *testing.T) {
	h := sha256.New()
	for _, c := range []struct {
		seed, w, h, k int
		clip          float64
	}{{1, 256, 256, 40, 2}, {2, 256, 256, 256, 2}, {3, 256, 256, 12, 2}, {4, 100, 77, 30, 2}, {5, 256, 256, 60, 4}, {6, 64, 64, 5, 2}} {
		img := claheImage(c.seed, c.w, c.h, c.k)
		CLAHE(img, c.w, c.h, c.clip, 8, 8)
		h.Write(img)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != cvCLAHESHA {
		t.Errorf("CLAHE: sha256 %s, OpenCV's %s", got, cvCLAHESHA)
	}
}

func BenchmarkLabRoundTrip256(b *testing.B) {
	img := claheImage(7, 256*3, 256, 256)
	b.ReportAllocs()
	for range b.N {
		for i := 0; i < len(img); i += 3 {
			l, a, bb := RGBToLab8(img[i], img[i+1], img[i+2])
			img[i], img[i+1], img[i+2] = LabToRGB8(l, a, bb)
		}
	}
}

func BenchmarkCLAHE256(b *testing.B) {
	src := claheImage(1, 256, 256, 40)
	img := make([]uint8, len(src))
	b.ReportAllocs()
	for range b.N {
		copy(img, src)
		CLAHE(img, 256, 256, 2, 8, 8)
	}
}
