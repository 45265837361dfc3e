package pipeline

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/swap"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// The window's steady tone is measured on the frames as the target gave them, so the classic
// swap must compare it with the frame's own tone as the target gave it too, not with the frame
// as the processors before it left it: two faces crossing, the second one's tone was measured
// over the first one's swap, and the difference moved the second face's colour and seam (as a
// processor before the swapper, a colorizer or an enhancer, had its change undone on the face).
// A still window (steady tone = the frame's own) must swap exactly as no window does.
func TestSteadyToneComparesTheFrameAsAnalysed(t *testing.T) {
	cfg := job.Default()
	cfg.ModelsDir = filepath.Join(testenv.Cache(t), "models")
	cfg.OnnxruntimeLibrary = testenv.ORTLibrary(t)
	cfg.SourcePaths = []string{testenv.Sample(t, "astronaut.png")}
	cfg.FaceSelectorMode = "many"
	cfg.IdentityMeasure = "off"
	m, err := LoadModels(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, _, err := m.Analyse(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ws, err := m.Workers(1)
	if err != nil {
		t.Fatal(err)
	}
	defer CloseWorkers(ws)
	w := ws[0].(*modelWorker)
	frame, err := raster.Load(testenv.Sample(t, "grace_hopper.png"))
	if err != nil {
		t.Fatal(err)
	}
	found, err := w.Analyse(frame, nil)
	if err != nil || len(found) == 0 {
		t.Fatalf("grace_hopper.png: %d faces, %v", len(found), err)
	}
	// A second face a third of a box to the right, over the first one's cheek.
	a := found[0]
	b := a
	dx := a.Box.W() / 3
	b.Box.X0, b.Box.X1 = a.Box.X0+dx, a.Box.X1+dx
	for i := range b.Landmarks {
		b.Landmarks[i].X += dx
	}
	for i := range b.Five {
		b.Five[i].X += dx
	}
	var tm swap.ToneMeter
	swapped := func(steady bool) *raster.Image {
		faces := []face.Face{a, b}
		for i := range faces {
			faces[i].Tone, faces[i].SteadyTone = face.Tone{}, face.Tone{}
			if steady {
				faces[i].SteadyTone = tm.Measure(frame, faces[i].Box)
			}
		}
		img := frame.Clone()
		if err := w.Apply([]*raster.Image{img}, [][]face.Face{faces}); err != nil {
			t.Fatal(err)
		}
		return w.Frame(0).Clone()
	}
	plain, held := swapped(false), swapped(true)
	if string(plain.Pix) == string(frame.Pix) {
		t.Fatal("the swap changed nothing")
	}
	most, sum := 0, 0
	for i := range plain.Pix {
		d := max(int(plain.Pix[i]), int(held.Pix[i])) - min(int(plain.Pix[i]), int(held.Pix[i]))
		most, sum = max(most, d), sum+d
	}
	if most > 1 {
		t.Fatalf("two crossing faces, a still window: the swap moved by up to %d levels (%d in all) against the frame's own tone: want at most 1 (rounding)", most, sum)
	}
}

// The analysis measures a face's tone only where the window smooths it into the steady tone
// the classic swap reads: not with face_landmark_smoothing 0, nor under the face tracker.
func TestToneMeasuredOnlyForTheSteadyTone(t *testing.T) {
	frame, err := raster.Load(testenv.Sample(t, "grace_hopper.png"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		set      func(*job.Config)
		measured bool
	}{
		{"default", func(*job.Config) {}, true},
		{"face_landmark_smoothing 0", func(c *job.Config) { c.FaceLandmarkSmoothing = 0 }, false},
		{"face tracker", func(c *job.Config) { c.FaceTrackerScore = 0.3 }, false},
	} {
		cfg := job.Default()
		cfg.ModelsDir = filepath.Join(testenv.Cache(t), "models")
		cfg.OnnxruntimeLibrary = testenv.ORTLibrary(t)
		cfg.SourcePaths = []string{testenv.Sample(t, "astronaut.png")}
		cfg.IdentityMeasure = "off"
		c.set(&cfg)
		m, err := LoadModels(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		ws, err := m.Workers(1)
		if err != nil {
			t.Fatal(err)
		}
		found, err := ws[0].(*modelWorker).Analyse(frame, nil)
		CloseWorkers(ws)
		m.Close()
		if err != nil || len(found) == 0 {
			t.Fatalf("%s: %d faces, %v", c.name, len(found), err)
		}
		if got := found[0].Tone.Weight > 0; got != c.measured {
			t.Errorf("%s: tone measured %v, want %v", c.name, got, c.measured)
		}
	}
}
