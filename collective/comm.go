// Package collective is how ranks talk to each other: barrier, broadcast, gather, allreduce
// and abort over OpenMPI, with a single-process Comm of identical semantics for runs without
// a launcher.
//
// It is the only package that includes mpi.h. Every MPI call runs on one goroutine locked to
// the OS thread that called MPI_Init_thread, so callers may use a Comm from any goroutine.
package collective

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
)

// Comm is a communicator over every rank of the job. Collective calls must be made by every
// rank, in the same order, with the same root; calls from several goroutines of one rank are
// serialised in an unspecified order, so a program should make them from one goroutine.
type Comm interface {
	Rank() int
	Size() int
	// LocalRank and LocalSize place this rank among those sharing its node (shared memory).
	LocalRank() int
	LocalSize() int
	Barrier() error
	// Bcast copies root's buf into every rank's buf; every rank passes a buf of the same length.
	Bcast(root int, buf []byte) error
	// Gather collects every rank's send (any length) at root, indexed by rank. Only root gets
	// a non-nil result.
	Gather(root int, send []byte) ([][]byte, error)
	// AllreduceInt64 replaces vals on every rank by the element-wise op over all ranks.
	AllreduceInt64(op Op, vals []int64) error
	// Abort ends every rank of the job with code; it does not return.
	Abort(code int)
	// Finalize shuts the communicator down; later calls fail.
	Finalize() error
}

// Op is a reduction.
type Op int

const (
	Sum Op = iota
	Max
	Min
)

func (o Op) String() string {
	switch o {
	case Sum:
		return "sum"
	case Max:
		return "max"
	case Min:
		return "min"
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// ThreadLevel is the MPI thread support requested from MPI_Init_thread.
type ThreadLevel int

const (
	ThreadSingle ThreadLevel = iota
	ThreadFunneled
	ThreadSerialized
	ThreadMultiple
)

func (l ThreadLevel) String() string {
	switch l {
	case ThreadSingle:
		return "MPI_THREAD_SINGLE"
	case ThreadFunneled:
		return "MPI_THREAD_FUNNELED"
	case ThreadSerialized:
		return "MPI_THREAD_SERIALIZED"
	case ThreadMultiple:
		return "MPI_THREAD_MULTIPLE"
	}
	return "thread level " + strconv.Itoa(int(l))
}

// BcastBytes broadcasts a byte string of any length from root: the length goes first so the
// other ranks need not know it. Non-root ranks' b is ignored.
func BcastBytes(c Comm, root int, b []byte) ([]byte, error) {
	var n [8]byte
	if c.Rank() == root {
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
	}
	if err := c.Bcast(root, n[:]); err != nil {
		return nil, err
	}
	size := binary.LittleEndian.Uint64(n[:])
	if c.Rank() == root {
		return b, c.Bcast(root, b)
	}
	if size > 1<<31-1 {
		return nil, fmt.Errorf("collective: broadcast of %d bytes exceeds MPI's 2 GiB count limit", size)
	}
	out := make([]byte, size)
	return out, c.Bcast(root, out)
}

// Init returns the job's communicator. It uses MPI when a launcher started this process
// (mpirun, or srun --mpi=pmix), and the single-process Comm when the program was started
// alone: a singleton MPI_Init would work too, but it forks an orted helper, needs a working
// OpenMPI runtime on a laptop, and buys nothing for one rank. FACEFUSION_MPI=always forces
// MPI (singleton when alone), FACEFUSION_MPI=never forces the single-process Comm.
func Init() (Comm, error) {
	switch os.Getenv("FACEFUSION_MPI") {
	case "always":
		return InitMPI(ThreadFunneled)
	case "never":
		return Single(), nil
	case "", "auto":
	default:
		return nil, fmt.Errorf("collective: FACEFUSION_MPI=%q: want auto, always or never", os.Getenv("FACEFUSION_MPI"))
	}
	if Launched() {
		return InitMPI(ThreadFunneled)
	}
	// srun without PMIx starts N independent singletons that would all think they are rank 0
	// and write the same files: refuse.
	if n, _ := strconv.Atoi(os.Getenv("SLURM_STEP_NUM_TASKS")); n > 1 {
		return nil, fmt.Errorf("collective: srun started %d tasks without an MPI launcher interface: run `srun --mpi=pmix` (or set MpiDefault=pmix in slurm.conf)", n)
	}
	return Single(), nil
}

// Launched reports whether an MPI launcher started this process: mpirun exports
// OMPI_COMM_WORLD_SIZE, and PMIx-based launchers (srun --mpi=pmix, prterun) PMIX_RANK.
func Launched() bool {
	for _, k := range []string{"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"} {
		if _, ok := os.LookupEnv(k); ok {
			return true
		}
	}
	return false
}
