package facemodel

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/audio"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// prepare_audio_frame: the empty frame is −4 everywhere (× 2·weight for wav2lip), 1 gives 3.2,
// 1e-3 gives −1.6, a loud value is clipped to 4; edtalk takes no weight.
func TestVoiceInput(t *testing.T) {
	var w audio.Window
	w[0][0], w[1][2], w[79][15] = 1, 1e-3, 1e6
	dst := make([]float32, 80*16)
	VoiceInput(dst, &w, catalog.EDTalk, 0.3)
	for i, want := range map[int]float32{0: 3.2, 16 + 2: -1.6, 79*16 + 15: 4, 5: -4} {
		if d := dst[i] - want; d > 1e-6 || d < -1e-6 {
			t.Errorf("edtalk: value %d = %v, want %v", i, dst[i], want)
		}
	}
	VoiceInput(dst, nil, catalog.Wav2Lip, 0.75)
	for i, v := range dst {
		if v != -4*float32(0.75)*2 {
			t.Fatalf("wav2lip's empty frame: value %d = %v, want -6", i, v)
		}
	}
}

// wav2lip's target is BGR / 255, the first three planes with the lower half black; the output
// comes back from BGR planes, clipped and truncated.
func TestWav2LipTensors(t *testing.T) {
	box := raster.New(4, 4)
	for i := range box.Pix {
		box.Pix[i] = uint8(i * 5)
	}
	dst := make([]float32, 6*16)
	Wav2LipTarget(dst, box)
	at := func(plane, x, y int) float32 { return dst[plane*16+y*4+x] }
	px := func(x, y, c int) float32 { return float32(box.Pix[y*box.Stride+3*x+c]) / 255 }
	for y := 0; y < 4; y++ {
		for x := 0; x < 4; x++ {
			for c := 0; c < 3; c++ { // plane c is B, G, R: RGB channel 2−c
				if at(3+c, x, y) != px(x, y, 2-c) {
					t.Fatalf("full box plane %d at (%d,%d) = %v, want %v", 3+c, x, y, at(3+c, x, y), px(x, y, 2-c))
				}
				want := px(x, y, 2-c)
				if y >= 2 {
					want = 0
				}
				if at(c, x, y) != want {
					t.Fatalf("blacked box plane %d at (%d,%d) = %v, want %v", c, x, y, at(c, x, y), want)
				}
			}
		}
	}
	out := raster.New(1, 1)
	LipSyncOutput(out, []float32{0.5, 1.2, -0.1}, catalog.Wav2Lip)
	if got := [3]uint8(out.Pix); got != [3]uint8{0, 255, 127} {
		t.Errorf("wav2lip output B 0.5, G 1.2, R −0.1 gave RGB %v, want [0 255 127]", got)
	}
	LipSyncOutput(out, []float32{0.5, 1.2, -0.1}, catalog.EDTalk)
	if got := [3]uint8(out.Pix); got != [3]uint8{127, 255, 0} {
		t.Errorf("edtalk output R 0.5, G 1.2, B −0.1 gave RGB %v, want [127 255 0]", got)
	}
}

// edtalk's target is the crop's RGB planes / 255, in that order.
func TestEDTalkTarget(t *testing.T) {
	img := raster.New(2, 1)
	copy(img.Pix, []uint8{255, 51, 0, 1, 2, 3})
	dst := make([]float32, 6)
	EDTalkTarget(dst, img)
	want := []float32{1, float32(1.0 / 255), 0.2, float32(2.0 / 255), 0, float32(3.0 / 255)}
	for i := range want {
		if dst[i] != want[i] {
			t.Errorf("target value %d = %v, want %v (planes R, G, B of pixels 0 and 1)", i, dst[i], want[i])
		}
	}
}
