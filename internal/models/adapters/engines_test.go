package adapters

import (
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/face"
)

// TestSharedEnginesMatchOneWorker: three workers, each with its own swapper (pixel boost 256,
// occlusion mask), enhancer and recognizer on one engine set, swap, enhance and embed their
// faces at the same time; every frame and embedding is bit-identical to one worker's on engines
// of its own at batch 1, with the set's engines at batch 8 (the workers' tiles meet in shared
// batches) and at batch 1 (the workers' runs in flight at once). The set holds one engine per
// model whatever the number of workers.
func TestSharedEnginesMatchOneWorker(t *testing.T) {
	dir := fixtures.Dir(t, "inswapper_128", "xseg_1", "gpen_bfr_256", "arcface_w600k_r50")
	emb := embeddingOf(t, 0.2, -0.1, 0.3, 0.05)
	mask := MaskOptions{Types: []string{"box", "occlusion"}, Blur: 0.3}
	const workers = 3
	type result struct {
		faces []FaceRef
		embs  []face.Embedding
	}
	work := func(cfg infer.SessionConfig, seed uint64) (result, error) {
		sw, err := NewFaceSwapper("inswapper_128", cfg, SwapOptions{PixelBoost: 256, Mask: mask})
		if err != nil {
			return result{}, err
		}
		defer sw.Close()
		en, err := NewFaceEnhancer("gpen_bfr_256", cfg, 80, 0.5, DefaultMaskOptions())
		if err != nil {
			return result{}, err
		}
		defer en.Close()
		rec, err := NewRecognizer(cfg)
		if err != nil {
			return result{}, err
		}
		defer rec.Close()
		if err := sw.SetSource(emb); err != nil {
			return result{}, err
		}
		r := result{faces: swapScenes(seed)}
		r.embs = make([]face.Embedding, len(r.faces))
		if err := swapInto(sw, r.faces); err != nil {
			return r, err
		}
		if err := enhanceInto(en, r.faces); err != nil {
			return r, err
		}
		return r, rec.Embed(r.faces, r.embs)
	}
	var want [workers]result
	for w := range want {
		var err error
		if want[w], err = work(ffConfig(t, dir, 1), uint64(w+1)); err != nil {
			t.Fatal(err)
		}
	}
	for _, batch := range []int{8, 1} {
		set := infer.NewEngineSet(infer.EngineConfig{Workers: workers})
		cfg := ffConfig(t, dir, batch)
		cfg.Engines = set
		var got [workers]result
		errs := make([]error, workers)
		var wg sync.WaitGroup
		for w := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[w], errs[w] = work(cfg, uint64(w+1))
			}()
		}
		wg.Wait()
		for w := range got {
			if errs[w] != nil {
				t.Fatalf("batch %d, worker %d: %v", batch, w, errs[w])
			}
			for j := range got[w].faces {
				if !unchanged(got[w].faces[j].Frame, want[w].faces[j].Frame) {
					t.Errorf("batch %d, worker %d, face %d: the frame differs from one worker's on its own engines", batch, w, j)
				}
				if got[w].embs[j] != want[w].embs[j] {
					t.Errorf("batch %d, worker %d, face %d: the embedding differs from one worker's", batch, w, j)
				}
			}
		}
		var names []string
		for name := range set.Engines() {
			names = append(names, name)
		}
		sort.Strings(names)
		if want := []string{"arcface_w600k_r50", "gpen_bfr_256", "inswapper_128", "xseg_1"}; !slices.Equal(names, want) {
			t.Errorf("batch %d: the set's engines %v, want one each of %v", batch, names, want)
		}
		if err := set.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
