// Package dist tests distributed runs of facefusion end to end under the real launchers:
// mpirun, and srun and sbatch on a real Slurm cluster (internal/slurmtest). Under mpirun: any
// rank count and chunk size gives the target's frames, a swap and every processor combination
// over ranks match one rank, idle and failing ranks, ranks that disagree, plan and probe.
// Under Slurm: the batch script with srun, requeue, preemption and its own clock; batch-run
// as a job array; probe under srun.
//
// The tests run one at a time, except four marked t.Parallel, which run two at a time after
// the rest (-parallel defaults to the 2 cores): the two Slurm tests among them mostly wait
// (Slurm's scheduling, paused ranks, requeues, their own clock) while the two rank matrices
// keep the cores busy. The Slurm tests never overlap: their clusters take turns (slurmtest's
// lock file), and the third, TestBatchSlurm, runs with the serial tests: a Slurm test waiting
// for the lock holds a parallel slot, and with both slots held so, the lock holder's parallel
// subtests never got one (a deadlock). A Slurm test of another package (collective's) waiting
// for the lock holds only its own package's slot; with at most two parallel here, the holder's
// subtests always have one.
package dist

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m) }
