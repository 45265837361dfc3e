package pipeline

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// TestWorkersShareEngines runs the embedded default (BlazeFace, dlib, the classic swapper) with
// three workers: the rank's engine set holds one BlazeFace session and one of the identity
// measure's recognizer, fr_feature, each sized for the three (one batch buffer each, both files
// fixing batch 1), and the frames the workers swap at the
// same time are bit-identical to one worker's. Close ends the sessions.
func TestWorkersShareEngines(t *testing.T) {
	cfg := job.Default()
	cfg.ModelsDir = filepath.Join(testenv.Cache(t), "models")
	cfg.OnnxruntimeLibrary = testenv.ORTLibrary(t)
	cfg.SourcePaths = []string{testenv.Sample(t, "grace_hopper.png")}
	m, err := LoadModels(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, _, err := m.Analyse(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	target := func(t *testing.T) *raster.Image {
		img, err := raster.Load(testenv.Sample(t, "astronaut.png"))
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	one, err := m.Workers(1)
	if err != nil {
		t.Fatal(err)
	}
	want := target(t)
	if err := one[0].Process(want); err != nil {
		t.Fatal(err)
	}
	CloseWorkers(one)
	if framesWithFaces(one) != 1 {
		t.Fatal("one worker found no face in astronaut.png")
	}

	m.LimitRuns(3) // the driver bounds the runs in flight by the rank's CPUs; 3 here, whatever this machine has
	ws, err := m.Workers(3)
	if err != nil {
		t.Fatal(err)
	}
	defer CloseWorkers(ws)
	engines := m.engines.Engines()
	if len(engines) != 2 || engines["fr_feature"] == nil {
		t.Fatalf("the rank's engines %v, want BlazeFace and fr_feature", engines)
	}
	for name, e := range engines {
		if e.Batches() != 3 {
			t.Errorf("%s: %d batch buffers for 3 workers, want 3", name, e.Batches())
		}
	}
	processAtOnce(t, ws, func() *raster.Image { return target(t) }, want)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(m.engines.Engines()); n != 0 {
		t.Errorf("after Close the rank still holds %d engines", n)
	}
}

// processAtOnce runs every worker of ws at once, each on its own copy of load's frame, and
// wants each result to be want's bytes (one worker's alone).
func processAtOnce(t *testing.T, ws []Worker, load func() *raster.Image, want *raster.Image) {
	t.Helper()
	got := make([]*raster.Image, len(ws))
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	for i, w := range ws {
		got[i] = load()
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.Process(got[i])
		}()
	}
	wg.Wait()
	for i := range ws {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if string(got[i].Pix) != string(want.Pix) {
			t.Errorf("worker %d of %d: the frame differs from one worker's", i, len(ws))
		}
	}
}
