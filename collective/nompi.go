//go:build !cgo || nompi

package collective

import "errors"

// InitMPI is unavailable in a build without cgo or with the nompi tag: such a binary runs
// as a single rank only.
func InitMPI(level ThreadLevel) (Comm, error) {
	return nil, errors.New("collective: this binary was built without MPI (nompi tag or CGO_ENABLED=0); rebuild with cgo and libopenmpi-dev to run under mpirun or srun")
}
