// Package resume tests checkpoint and resume end to end, for real: attempts are killed
// (SIGKILL, no clean-up) or stopped (SIGTERM) at points the test-only pause hook holds them
// at, and the rerun of the same command must give the very frames of an uninterrupted run;
// the job folder's lifecycle and the resume fingerprint. (Under Slurm: e2e/dist.)
package resume

import (
	"sync"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m) }

// targetHashes are the frame hashes of the B-frame clips this test binary made, by frame count.
var targetHashes sync.Map

// bframeClip makes clitest.BframeClip's clip of n frames at path and returns its frames'
// hashes, decoded once a test binary: the clip of n frames is the same bytes every time, and
// each decode is an ffmpeg run.
func bframeClip(t *testing.T, path string, n int) []string {
	t.Helper()
	clitest.BframeClip(t, path, n)
	if h, ok := targetHashes.Load(n); ok {
		return h.([]string)
	}
	h := clitest.FrameHashes(t, path)
	targetHashes.Store(n, h)
	return h
}
