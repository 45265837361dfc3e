package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// The least mean identity similarity of the swapped faces to the source (the run report's
// identity.after, by fr_feature) the embedded default's swap must reach on the first 11 frames
// of three clips (the measure takes their frame 0: one face). The goals are 0.75 on the demo and 0.55 on a
// close-up; these floors guard what the swap reaches, less a margin, and each lies above what
// the swapper before issue 11 gave, so a return to it fails:
//
//	clip (source → target)                     before issue 11   now     floor   goal
//	grace_hopper → demo clip                    0.57              0.669   0.64    0.75 (not met)
//	grace_hopper → close-up of astronaut        0.58              0.651   0.62    0.55 (met)
//	astronaut → close-up of grace_hopper        0.19 (whole clip) 0.594   0.55    0.55 (met)
//
// ("now" on the close-ups made 11 frames long, as this test makes them: x264 codes the same
// frames a little differently from the 3 s close-ups'.)
// The last is the hard direction: the target's hat, hair, ears, jaw line and kept glasses frames
// fill much of what the recognizer sees; small false finds of occluders on her face would
// keep the target's pixels there.
const (
	demoIdentityMin        = 0.64
	closeUpIdentityMin     = 0.62
	hardCloseUpIdentityMin = 0.55
)

// The run report measures the swapped faces' identity with the embedded default's recognizer:
// the swap moves the faces towards the source (after > before) on the demo clip and a close-up,
// by at least the goals above. The close-ups are made 11 frames long, all the run reads of
// them. (identity_measure off: TestIdentityRecognizer; the measure reads the faces before
// face_debugger draws on them: TestImageTarget.)
func TestIdentityMeasure(t *testing.T) {
	testenv.Full(t, "runs the facefusion binary on close-up clips")
	dir := t.TempDir()
	grace, astronaut := testenv.Sample(t, "grace_hopper.png"), testenv.Sample(t, "astronaut.png")
	demo := filepath.Join(testenv.Cache(t), "demo", "target.mp4")
	for _, c := range []struct {
		name, source, target string
		min                  float64
	}{
		{"demo", grace, demo, demoIdentityMin},
		{"close-up", grace, testenv.CloseUpClipFrames(t, "astronaut.png", 11), closeUpIdentityMin},
		{"hard close-up", astronaut, testenv.CloseUpClipFrames(t, "grace_hopper.png", 11), hardCloseUpIdentityMin},
	} {
		out := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".mp4")
		// 11 frames: the measure takes output frame 0 (its stride is at least job.IdentityMinEvery).
		r := clitest.Run(t, "run", "-s", c.source, "-t", c.target, "-o", out, "--trim-frame-start", "0", "--trim-frame-end", "11")
		if r.Code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, r.Code, r.Stderr)
		}
		id := clitest.CheckReportEnd(t, out, r, lustre.Complete).Identity
		if id == nil {
			t.Fatalf("%s: the report has no identity", c.name)
		}
		t.Logf("%s: %+v", c.name, *id)
		if id.Recognizer != "fr_feature" || id.Every != job.IdentityStride(11) || id.Faces != 1 {
			t.Errorf("%s: identity %+v, want fr_feature's measure of 1 face, every %dth frame", c.name, *id, job.IdentityStride(11))
		}
		if id.After <= id.Before || id.After < c.min || id.Before > 0.3 || id.ToTarget <= 0 || id.ToTarget >= 1 {
			t.Errorf("%s: after %.4f, before %.4f, to_target %.4f: want after > before (another person's face, below 0.3) and after ≥ %.2f",
				c.name, id.After, id.Before, id.ToTarget, c.min)
		}
	}
}
