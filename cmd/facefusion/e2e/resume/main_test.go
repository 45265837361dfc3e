// Package resume tests checkpoint and resume end to end, for real: attempts are killed
// (SIGKILL, no clean-up) or stopped (SIGTERM) at points the test-only pause hook holds them
// at, and the rerun of the same command must give the very frames of an uninterrupted run;
// the job folder's lifecycle and the resume fingerprint. (Under Slurm: e2e/dist.)
package resume

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m) }
