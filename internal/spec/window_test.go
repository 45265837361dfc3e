package spec

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/swap"
)

// The covers are voted over swap.CoverVote frames each side (at most face_landmark_smoothing's)
// only where the classic swap runs over a smoothing window; the decode's halo grows by as much.
func TestWindowVotesCoversOnlyForTheClassicSwap(t *testing.T) {
	for _, c := range []struct {
		name   string
		set    func(*job.Config)
		covers int
	}{
		{"default", func(*job.Config) {}, swap.CoverVote},
		{"face_landmark_smoothing 2", func(c *job.Config) { c.FaceLandmarkSmoothing = 2 }, 2},
		{"face_landmark_smoothing 0", func(c *job.Config) { c.FaceLandmarkSmoothing = 0 }, 0},
		{"face tracker", func(c *job.Config) { c.FaceTrackerScore = 0.3 }, 0},
		{"a model swapper", func(c *job.Config) { c.FaceSwapperModel = "inswapper_128" }, 0},
		{"no swap", func(c *job.Config) { c.Processors = []string{job.ProcessorEnhance} }, 0},
	} {
		cfg := job.Default()
		c.set(&cfg)
		w := windowOf(cfg)
		if w.Covers != c.covers || w.Halo() != max(w.K, w.Still)+c.covers {
			t.Errorf("%s: covers voted over %d frames each side, halo %d; want %d, %d", c.name, w.Covers, w.Halo(), c.covers, max(w.K, w.Still)+c.covers)
		}
	}
}
