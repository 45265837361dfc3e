package backgroundremover

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	"github.com/facefusion-hpc/facefusion/internal/processors/processortest"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// The processor run as a worker runs it, on the stand-ins (infer/fixtures backgroundremove.go).

func open(t *testing.T, model string, fill, despillC []int, maxBatch int) *processors.Chain {
	t.Helper()
	cfg := job.Default()
	cfg.Processors = []string{job.ProcessorRemoveBackground}
	cfg.BackgroundRemoverModel = model
	cfg.BackgroundRemoverFillColor, cfg.BackgroundRemoverDespillColor = fill, despillC
	return processortest.Open(t, cfg, model, maxBatch, processors.Source{}, processortest.Count{})
}

func frames() []*raster.Image {
	var out []*raster.Image
	for i := range 3 {
		out = append(out, processortest.Noise(uint64(i+7), 150, 110, [3]uint8{60, 170, 90}))
	}
	return out
}

func run(t *testing.T, ch *processors.Chain, fs []*raster.Image) []*raster.Alpha {
	t.Helper()
	b := &processors.Batch{Frames: fs, Indices: make([]int, len(fs))}
	for _, p := range ch.Steps() {
		if err := processors.Run(p, b); err != nil {
			t.Fatal(err)
		}
	}
	return b.Alphas
}

// FaceFusion's default colours (A = 0) leave the frame and give the mask as its alpha; a fill
// of A = 255 turns where the mask is 0 into the fill colour and keeps where it is 255; a batch
// gives each frame the bytes and alpha it gets alone.
func TestMaskFillAndBatch(t *testing.T) {
	for _, model := range []string{"modnet", "u2net_cloth"} { // corridor_key at 1024² is the conformance suite's
		orig, plain := frames(), frames()
		alphas := run(t, open(t, model, []int{0, 0, 0, 0}, []int{0, 0, 0, 0}, 1), plain)
		for i := range orig {
			if !processortest.Same(plain[i], orig[i]) {
				t.Errorf("%s: A = 0 changed frame %d", model, i)
			}
			if len(alphas) != len(orig) || alphas[i] == nil || alphas[i].W != 150 || alphas[i].H != 110 {
				t.Fatalf("%s: no alpha for frame %d", model, i)
			}
		}
		var lo, hi bool
		for _, v := range alphas[0].Pix {
			lo, hi = lo || v < 64, hi || v > 192
		}
		if !lo || !hi {
			t.Errorf("%s: the mask does not span background and foreground", model)
		}
		masks := [][]uint8{}
		for _, a := range alphas {
			masks = append(masks, append([]uint8(nil), a.Pix...))
		}
		filled, batched := frames(), frames()
		fill := []int{10, 20, 250, 255}
		for i := range filled {
			run(t, open(t, model, fill, []int{0, 255, 0, 120}, 1), filled[i:i+1])
		}
		alphas = run(t, open(t, model, fill, []int{0, 255, 0, 120}, 3), batched)
		for i := range filled {
			if !processortest.Same(batched[i], filled[i]) || string(alphas[i].Pix) != string(masks[i]) {
				t.Errorf("%s: frame %d batched with others differs from itself alone", model, i)
			}
			for k, m := range masks[i] {
				r, g, b := filled[i].At(k%150, k/150)
				if m == 0 && [3]uint8{r, g, b} != [3]uint8{10, 20, 250} {
					t.Fatalf("%s: frame %d pixel %d, mask 0: %v, want the fill colour", model, i, k, [3]uint8{r, g, b})
				}
			}
		}
	}
}
