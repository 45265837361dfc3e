// Package slurm tests facefusion under a real Slurm cluster (internal/slurmtest): the batch
// script with srun, requeue, preemption and its own clock; batch-run as a job array; probe
// under srun.
//
// The tests run one at a time (none calls t.Parallel; their subtests run in parallel): each
// holds the machine's one test cluster (slurmtest's lock) for its whole run, and a test
// waiting for the lock in a parallel slot could starve the holder's parallel subtests of
// slots (a deadlock, seen when these tests shared cmd/facefusion's binary). A Slurm test of
// another package (collective's) waiting for the lock holds only its own package's slot.
package slurm

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m) }
