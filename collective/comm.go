// Package collective is how ranks talk to each other: barrier, broadcast, gather, allreduce,
// point-to-point messages and abort over OpenMPI, with a single-process Comm of identical
// semantics for runs without a launcher (it has no other rank to send to).
//
// It is the only package that includes mpi.h. Every MPI call runs on one goroutine locked to
// the OS thread that called MPI_Init_thread, so callers may use a Comm from any goroutine.
package collective

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"time"
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
	// IallreduceInt64 starts AllreduceInt64 without waiting for the other ranks: it returns at
	// once, and vals holds the result once the request is complete. vals belongs to the request
	// until then. It is a collective like the others (every rank, same order); other calls may
	// be made while it is in flight. Every request must be completed (Test true, or Wait)
	// before Finalize.
	IallreduceInt64(op Op, vals []int64) (Request, error)
	// Isend starts sending buf to rank dest with tag (0 to MaxTag) and returns at once: buf is
	// copied, so the caller may reuse it. The request completes once MPI is done with the copy
	// (a large message: once dest has posted its receive). Point-to-point, not collective.
	Isend(dest, tag int, buf []byte) (Request, error)
	// Irecv starts receiving one message with tag from rank source (AnySource: any rank) into
	// buf, which must be large enough for it and belongs to the request until it completes;
	// then Message says who sent it and its length. Messages from one rank with one tag arrive
	// in the order they were sent.
	Irecv(source, tag int, buf []byte) (RecvRequest, error)
	// Abort ends every rank of the job with code; it does not return.
	Abort(code int)
	// Finalize shuts the communicator down; later calls fail.
	Finalize() error
}

// Request is a non-blocking collective in flight.
type Request interface {
	// Test reports whether the collective is complete, without waiting: one MPI_Test, made on
	// the MPI thread between other calls. Once it says true, the results are in place, and
	// later calls say true again.
	Test() (bool, error)
	// Wait blocks the calling goroutine until the collective is complete; the MPI thread stays
	// free for other calls in between (it tests the request with growing sleeps, 50 µs
	// doubling to 2 ms, like the blocking collectives).
	Wait() error
}

// RecvRequest is a receive in flight (Irecv).
type RecvRequest interface {
	Request
	// Message is the sender's rank and the message's length, once the request is complete.
	Message() (source, n int)
}

// AnySource is Irecv's source for a message from any rank.
const AnySource = -1

// MaxTag is the largest tag every MPI library must accept (MPI_TAG_UB is at least 32767).
const MaxTag = 32767

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

// wait is Request.Wait for any request: Test with growing sleeps in between, on the caller's
// goroutine, so that the MPI thread serves other calls while the ranks catch up.
func wait(r Request) error {
	d := 50 * time.Microsecond
	for {
		done, err := r.Test()
		if err != nil || done {
			return err
		}
		time.Sleep(d)
		if d < 2*time.Millisecond {
			d *= 2
		}
	}
}

// pendingError is Finalize's refusal while non-blocking collectives are in flight: MPI_Finalize
// with an active request is erroneous (and the request's buffer would be written after it).
func pendingError(n int) error {
	return fmt.Errorf("collective: Finalize with %d non-blocking collective(s) still in flight: complete each request (Test or Wait) first", n)
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

// MaxBcastChunk is the most bytes BcastChunks moves in one MPI_Bcast: MPI's count is a C int,
// so one call moves at most 2 GiB − 1.
const MaxBcastChunk = 1 << 30

// BcastChunks copies root's buf into every rank's buf, as Bcast, in pieces of at most chunk
// bytes (MaxBcastChunk for a buffer of any size); every rank passes a buf of the same length
// and the same chunk.
func BcastChunks(c Comm, root int, buf []byte, chunk int) error {
	if chunk < 1 || chunk > MaxBcastChunk {
		return fmt.Errorf("collective: broadcast chunk of %d bytes: want 1 to %d", chunk, MaxBcastChunk)
	}
	for off := 0; off < len(buf); off += chunk {
		if err := c.Bcast(root, buf[off:min(off+chunk, len(buf))]); err != nil {
			return err
		}
	}
	return nil
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
