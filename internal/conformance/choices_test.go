package conformance

import (
	"slices"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/job"
)

// TestChoicesAreTheJobs: the choices the suite must cover (held to FaceFusion's source by
// TestOptionsAreFaceFusions) are the ones the job takes, so a choice the job adds or drops is
// one the suite covers or stops asking for.
func TestChoicesAreTheJobs(t *testing.T) {
	for _, o := range options {
		if len(o.choices) == 0 {
			continue
		}
		ours := job.Choices(o.key)
		if !slices.Equal(slices.Sorted(slices.Values(o.choices)), slices.Sorted(slices.Values(ours))) {
			t.Errorf("%s: the suite covers %v, the job takes %v", o.key, o.choices, ours)
		}
	}
}
