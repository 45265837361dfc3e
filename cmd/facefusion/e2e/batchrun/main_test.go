// Package batchrun tests facefusion batch-run end to end outside Slurm, on tiny clips without a
// swapper: failures, retries and quarantine; settling files, re-delivered copies and outputs
// from elsewhere; two runs at once over one inbox; a rank killed mid-target under mpirun.
// (Under Slurm: e2e/dist.)
package batchrun

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m) }
