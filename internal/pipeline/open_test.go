package pipeline

import (
	"path/filepath"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// Open, before the source is known (a rank other than 0 while rank 0 plans), opens the
// sessions the workers made later share: they open none of their own, and Close closes them.
func TestOpenBeforeTheSource(t *testing.T) {
	cfg := job.Default()
	cfg.ModelsDir = filepath.Join(testenv.Cache(t), "models")
	cfg.OnnxruntimeLibrary = testenv.ORTLibrary(t)
	cfg.SourcePaths = []string{testenv.Sample(t, "grace_hopper.png")}
	before := infer.OpenSessions()
	m, err := LoadModels(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	opened := infer.OpenSessions()
	if opened != before+2 || len(m.engines.Engines()) != 2 {
		t.Fatalf("Open: %d sessions opened, engines %v; want BlazeFace's and the identity measure's fr_feature", opened-before, m.engines.Engines())
	}
	ws, err := m.Workers(2)
	if err != nil {
		t.Fatal(err)
	}
	if n := infer.OpenSessions(); n != opened {
		t.Errorf("2 workers after Open opened %d more sessions, want none", n-opened)
	}
	CloseWorkers(ws)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if n := infer.OpenSessions(); n != before {
		t.Errorf("%d sessions left open after Close", n-before)
	}
}
