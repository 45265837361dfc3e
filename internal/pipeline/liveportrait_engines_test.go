package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// TestLivePortraitEnginesShared: a job with both LivePortrait processors on three workers holds
// one engine per file of the chain for the rank (the six, whichever processor opened them first),
// and three workers editing at once give one worker's bytes: the editors' buffers are their own,
// the sessions shared.
func TestLivePortraitEnginesShared(t *testing.T) {
	lp := []string{"live_portrait_feature_extractor", "live_portrait_motion_extractor", "live_portrait_generator",
		"live_portrait_eye_retargeter", "live_portrait_lip_retargeter", "live_portrait_stitcher"}
	dir := fixtures.Dir(t, lp...)
	for _, f := range []string{"blazeface_front_128.onnx", job.DlibFile} {
		if err := os.Symlink(testenv.Model(t, f), filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := job.Default()
	cfg.Processors = []string{job.ProcessorFaceEditor, job.ProcessorExpression}
	cfg.FaceEditorMouthSmile, cfg.FaceEditorHeadYaw, cfg.FaceEditorEyeOpenRatio = 1, -0.5, 0.5
	cfg.ModelsDir = dir
	cfg.OnnxruntimeLibrary = testenv.ORTLibrary(t)
	cfg.IdentityMeasure = "off"
	m, err := LoadModels(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, _, err := m.Analyse(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	load := func() *raster.Image {
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
	want := load()
	if err := one[0].Process(want); err != nil {
		t.Fatal(err)
	}
	CloseWorkers(one)
	if framesWithFaces(one) != 1 || string(want.Pix) == string(load().Pix) {
		t.Fatal("one worker found no face in astronaut.png, or left it as it was")
	}
	m.LimitRuns(3)
	ws, err := m.Workers(3)
	if err != nil {
		t.Fatal(err)
	}
	defer CloseWorkers(ws)
	engines := m.engines.Engines()
	for _, name := range lp {
		if engines[name] == nil {
			t.Errorf("the rank's engines %v lack %s", engines, name)
		}
	}
	if len(engines) != len(lp)+1 { // and BlazeFace
		t.Errorf("the rank holds %d engines, want the chain's %d and BlazeFace: %v", len(engines), len(lp), engines)
	}
	processAtOnce(t, ws, load, want)
}
