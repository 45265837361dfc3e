// Package dist tests distributed runs of facefusion end to end under the real launchers:
// mpirun, and srun and sbatch on a real Slurm cluster (internal/slurmtest). Under mpirun: any
// rank count and chunk size gives the target's frames, a swap and every processor combination
// over ranks match one rank, idle and failing ranks, ranks that disagree, plan and probe.
// Under Slurm: the batch script with srun, requeue, preemption and its own clock; batch-run
// as a job array; probe under srun.
//
// The tests run one at a time, except four marked t.Parallel, which run together after the
// rest: the two Slurm tests among them mostly wait (Slurm's scheduling, paused ranks, requeues,
// their own clock) while the two rank matrices keep the cores busy. TestMain raises -parallel's
// default (the 2 cores) to 8 for them and for TestResumeSlurm's seven stops, each a job that
// mostly waits on a 32-CPU test node: 158 s for this package alone against 212 s with 2
// (go test -count=1 ./cmd/facefusion/e2e/dist, one run each on the 2-core machine, load
// average about 1). An explicit -parallel still wins (2 at least: with one slot, a Slurm test
// waiting for the lock starves the holder's subtests). The Slurm tests never overlap: their
// clusters take turns (slurmtest's lock file), and the third, TestBatchSlurm, runs with the
// serial tests: a Slurm test waiting for the lock holds a parallel slot, and with every slot
// held so, the lock holder's parallel subtests never got one (a deadlock, seen with two
// slots). With two parallel Slurm tests and 8 slots, the holder's subtests always have one,
// whatever waits for the lock (collective's Slurm test holds only its own package's slot).
package dist

import (
	"flag"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
)

func TestMain(m *testing.M) {
	if err := flag.Set("test.parallel", "8"); err != nil {
		panic(err)
	}
	clitest.Main(m)
}
