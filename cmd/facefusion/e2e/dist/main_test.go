// Package dist tests distributed runs of facefusion under mpirun end to end: any rank count
// and chunk size gives the target's frames, a swap over ranks matches one rank, idle and
// failing ranks, ranks that disagree, plan and probe. (Under Slurm: e2e/slurm.)
package dist

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m) }
