package driver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/job"
)

// Rank 0 broadcasts the model files when model_broadcast says so and another rank will open
// sessions: not for one rank, a job without models, an image (rank 0 alone processes it) or
// batch-run's rerun of a finished target; auto only where the ranks span hosts.
func TestCastsModels(t *testing.T) {
	dir := t.TempDir()
	done := filepath.Join(dir, "done.mp4")
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := func(mode, target, output string, processors ...string) job.Config {
		c := job.Default()
		c.ModelBroadcast, c.TargetPath, c.OutputPath = mode, target, output
		if processors != nil {
			c.Processors = processors
		}
		return c
	}
	out := filepath.Join(dir, "out.mp4")
	for _, c := range []struct {
		name            string
		size, local     int
		cfg             job.Config
		skipDone, casts bool
	}{
		{"on, 2 ranks", 2, 2, cfg("on", "in.mp4", out), false, true},
		{"on, 1 rank", 1, 1, cfg("on", "in.mp4", out), false, false},
		{"on, no models", 2, 2, cfg("on", "in.mp4", out, "none"), false, false},
		{"on, an image", 2, 2, cfg("on", "in.png", filepath.Join(dir, "out.png")), false, false},
		{"on, a rerun of a finished target", 2, 2, cfg("on", "in.mp4", done), true, false},
		{"on, a run over an output (--force)", 2, 2, cfg("on", "in.mp4", done), false, true},
		{"auto, one host", 4, 4, cfg("auto", "in.mp4", out), false, false},
		{"auto, two hosts", 4, 2, cfg("auto", "in.mp4", out), false, true},
		{"off, two hosts", 4, 2, cfg("off", "in.mp4", out), false, false},
	} {
		if got := castsModels(c.size, c.local, c.cfg, c.skipDone); got != c.casts {
			t.Errorf("%s: castsModels %v, want %v", c.name, got, c.casts)
		}
	}
}
