package adapters

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/audio"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// The lip syncers' stand-ins load with FaceFusion's signature and compute what fixtures
// documents: a mouth box and two voice windows a column apart give outputs that differ (a
// misaligned window shows in the pixels), each as the formula says.
func TestLipSyncerStandIns(t *testing.T) {
	dir := fixtures.Dir(t, "wav2lip_96", "wav2lip_gan_96", "edtalk_256")
	for _, name := range []string{"wav2lip_96", "edtalk_256"} {
		m := catalog.Must(name)
		s, err := infer.OpenSession(m.Spec(), infer.SessionConfig{ModelsDir: dir, Library: testenv.ORTLibrary(t), Logf: func(string, ...any) {}})
		if err != nil {
			t.Fatal(err)
		}
		size, planes := m.Size, int(m.Want.Inputs[1].Shape[1])
		target := make([]float32, planes*size*size)
		for i := range target {
			target[i] = float32(i%251) / 251
		}
		var w audio.Window
		for f := range w {
			for c := range w[f] {
				w[f][c] = math.Exp(float64((f*3+c*5)%17) - 12) // a spread of magnitudes, like a spectrogram's
			}
		}
		var shifted audio.Window
		for f := range w {
			copy(shifted[f][:], append(w[f][1:], w[f][0]))
		}
		var outs [2][]float32
		for k, win := range []*audio.Window{&w, &shifted} {
			voice := make([]float32, 80*16)
			facemodel.VoiceInput(voice, win, m.SyncType(), 0.5)
			s.Inputs()[0].SetFloat32(0, voice)
			s.Inputs()[1].SetFloat32(0, target)
			if len(s.Inputs()) > 2 {
				s.Inputs()[2].SetFloat32(0, []float32{0.5})
			}
			if err := s.Run(1); err != nil {
				t.Fatal(err)
			}
			outs[k] = make([]float32, 3*size*size)
			s.Outputs()[0].GetFloat32(outs[k], 0)
			a := 0.0
			for f := 0; f < 80; f++ {
				for c := 0; c < 16; c++ {
					a += float64(fixtures.LipVoice(f, c)) * float64(voice[f*16+c])
				}
			}
			for _, p := range [][2]int{{0, 0}, {size - 1, size / 3}, {size / 2, size - 1}} {
				x, y := p[0], p[1]
				for c := 0; c < 3; c++ {
					want := float64(fixtures.LipBias[c]) + a*float64(fixtures.LipVoiceGain[c]) +
						float64(fixtures.LipRamp[c][0])*float64(x)/float64(size) + float64(fixtures.LipRamp[c][1])*float64(y)/float64(size)
					for j := 0; j < planes; j++ {
						mix := float64(fixtures.LipMix3[c][j%3])
						if planes == 6 {
							mix = float64(fixtures.LipMix6[c][j])
						}
						want += mix * float64(target[j*size*size+y*size+x])
					}
					if m.SyncType() == catalog.EDTalk {
						want += 0.5 * float64(fixtures.LipWeightGain[c])
					}
					if got := outs[k][c*size*size+y*size+x]; math.Abs(float64(got)-want) > 1e-4 {
						t.Errorf("%s: output %d at (%d,%d) = %v, the stand-in's formula %v", name, c, x, y, got, want)
					}
				}
			}
		}
		diff := 0.0
		for i := range outs[0] {
			diff = max(diff, math.Abs(float64(outs[0][i]-outs[1][i])))
		}
		t.Logf("%s: windows a column apart differ by %.1f levels", name, diff*255)
		if diff*255 < 2 {
			t.Errorf("%s: windows a column apart change the output by %.2f levels only", name, diff*255)
		}
		s.Close()
	}
}

// With occlusion, sync_lip pastes through the minimum of its model's mask and the occlusion
// mask of the crop as cut (create_occlusion_mask, before the model): each model's frame equals
// the sync without occlusion pasted again through that minimum, the occlusion mask taken from
// the crop by CropMasker (held to the occluder stand-in's arithmetic by TestCropMasker), and
// differs from the frame without occlusion.
func TestLipSyncerOcclusion(t *testing.T) {
	dir := fixtures.Dir(t, "wav2lip_96", "edtalk_256", "xseg_2")
	five, lm := testFace()
	base := noiseFrame(rand.New(rand.NewPCG(9, 10)), 480, 420)
	var voice audio.Window
	for f := range voice {
		for c := range voice[f] {
			voice[f][c] = math.Exp(float64((f*5+c*3)%13) - 10)
		}
	}
	mask := DefaultMaskOptions()
	occ := mask
	occ.Types, occ.Occluder = []string{"box", "occlusion"}, "xseg_2"
	cm, err := NewCropMasker(MaskOptions{Types: []string{"occlusion"}, Occluder: "xseg_2"}, lipCrop, ffConfig(t, dir, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer cm.Close()
	for _, name := range []string{"wav2lip_96", "edtalk_256"} {
		plain, err := NewLipSyncer(name, ffConfig(t, dir, 1), 0.5, mask)
		if err != nil {
			t.Fatal(err)
		}
		occluded, err := NewLipSyncer(name, ffConfig(t, dir, 1), 0.5, occ)
		if err != nil {
			t.Fatal(err)
		}
		without, got := cloneImage(base), cloneImage(base)
		if err := plain.Sync(without, five, &lm, &voice); err != nil {
			t.Fatal(err)
		}
		if err := occluded.Sync(got, five, &lm, &voice); err != nil {
			t.Fatal(err)
		}
		o, err := cm.Mask(plain.crop, &lm, geom.Affine{})
		if err != nil {
			t.Fatal(err)
		}
		both := append([]float32(nil), plain.mask...)
		align.MinInto(both, o)
		want := cloneImage(base)
		align.PasteBack(want, plain.back, both, align.Estimate(five, plain.tmpl, lipCrop))
		if string(got.Pix) != string(want.Pix) {
			t.Errorf("%s: the frame with occlusion is not the sync pasted through min(model mask, occlusion mask)", name)
		}
		if string(got.Pix) == string(without.Pix) {
			t.Errorf("%s: occlusion changes nothing: the stand-in occluder does not show the mask", name)
		}
		plain.Close()
		occluded.Close()
	}
}

func cloneImage(img *raster.Image) *raster.Image {
	c := raster.New(img.W, img.H)
	copy(c.Pix, img.Pix)
	return c
}
