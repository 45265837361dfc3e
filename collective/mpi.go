//go:build cgo && !nompi

package collective

/*
#cgo pkg-config: ompi-c
#include <stdlib.h>
#include <time.h>
#include <mpi.h>

// OpenMPI's handles are macros over addresses of globals; these wrappers give cgo plain
// functions and keep datatypes and ops out of Go.
static MPI_Comm ff_world(void) { return MPI_COMM_WORLD; }
static MPI_Comm ff_null(void) { return MPI_COMM_NULL; }

static int ff_init(int required, int *provided) {
	return MPI_Init_thread(NULL, NULL, required, provided);
}
static int ff_errors_return(MPI_Comm c) { return MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN); }
static int ff_split_shared(MPI_Comm c, int key, MPI_Comm *out) {
	return MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, key, MPI_INFO_NULL, out);
}
// Every collective is posted non-blocking and completed by ff_wait, which tests the request
// with growing sleeps in between (50 µs, doubling to 2 ms): a rank waiting for the others
// sleeps. OpenMPI's blocking collectives poll instead, a full core per waiting rank, and the
// ranks wait often and long (for rank 0's plan, for the slowest rank, for rank 0's join):
// where ranks share cores (a laptop, an oversubscribed node, the tests' mpirun -np 3 on two
// cores), pollers starve the rank everyone waits for and its ffmpeg. At most 2 ms is
// added to a collective, of which a run makes a handful.
static int ff_wait(MPI_Request *r) {
	long ns = 50000;
	for (;;) {
		int done = 0;
		int rc = MPI_Test(r, &done, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS || done) return rc;
		struct timespec ts = {0, ns};
		nanosleep(&ts, NULL);
		if (ns < 2000000) ns *= 2;
	}
}
static int ff_barrier(MPI_Comm c) {
	MPI_Request r;
	int rc = MPI_Ibarrier(c, &r);
	return rc != MPI_SUCCESS ? rc : ff_wait(&r);
}
static int ff_bcast(MPI_Comm c, void *buf, int n, int root) {
	MPI_Request r;
	int rc = MPI_Ibcast(buf, n, MPI_BYTE, root, c, &r);
	return rc != MPI_SUCCESS ? rc : ff_wait(&r);
}
static int ff_gather_int(MPI_Comm c, int v, int *out, int root) {
	MPI_Request r;
	int rc = MPI_Igather(&v, 1, MPI_INT, out, 1, MPI_INT, root, c, &r);
	return rc != MPI_SUCCESS ? rc : ff_wait(&r);
}
static int ff_gatherv(MPI_Comm c, void *send, int n, void *recv, int *counts, int *displs, int root) {
	MPI_Request r;
	int rc = MPI_Igatherv(send, n, MPI_BYTE, recv, counts, displs, MPI_BYTE, root, c, &r);
	return rc != MPI_SUCCESS ? rc : ff_wait(&r);
}
static int ff_allreduce_i64(MPI_Comm c, long long *vals, int n, int op) {
	MPI_Op o = op == 0 ? MPI_SUM : op == 1 ? MPI_MAX : MPI_MIN;
	MPI_Request r;
	int rc = MPI_Iallreduce(MPI_IN_PLACE, vals, n, MPI_INT64_T, o, c, &r);
	return rc != MPI_SUCCESS ? rc : ff_wait(&r);
}
// The non-blocking allreduce's buffer and request live in C memory: MPI writes them after the
// call that posted them has returned, which Go memory passed to C must not allow.
static int ff_iallreduce_i64(MPI_Comm c, long long *vals, int n, int op, MPI_Request *r) {
	MPI_Op o = op == 0 ? MPI_SUM : op == 1 ? MPI_MAX : MPI_MIN;
	return MPI_Iallreduce(MPI_IN_PLACE, vals, n, MPI_INT64_T, o, c, r);
}
// A test of any posted request; for a receive (source not NULL), on completion, the message's
// source and byte count too (MPI defines a status only for receives).
static int ff_test_status(MPI_Request *r, int *done, int *source, int *count) {
	if (source == NULL) return MPI_Test(r, done, MPI_STATUS_IGNORE);
	MPI_Status st;
	int rc = MPI_Test(r, done, &st);
	if (rc != MPI_SUCCESS || !*done) return rc;
	*source = st.MPI_SOURCE;
	return MPI_Get_count(&st, MPI_BYTE, count);
}
static int ff_error_string(int code, char *out) {
	int n = 0;
	if (MPI_Error_string(code, out, &n) != MPI_SUCCESS) n = 0;
	return n;
}
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"
)

var mpiStarted struct {
	sync.Mutex
	yes bool
}

// InitMPI initialises MPI with MPI_Init_thread and returns the world communicator. A
// dedicated goroutine, locked to its OS thread, makes that call and every later MPI call, so
// MPI_THREAD_FUNNELED is all this package needs; level is what is requested, and an MPI
// library that provides less than funneled is an error. Errors on the communicators are
// returned (MPI_ERRORS_RETURN), not fatal, and become Go errors carrying MPI_Error_string.
// MPI allows one initialisation per process.
func InitMPI(level ThreadLevel) (Comm, error) {
	mpiStarted.Lock()
	defer mpiStarted.Unlock()
	if mpiStarted.yes {
		return nil, fmt.Errorf("collective: MPI was already initialised in this process; MPI allows one MPI_Init per process, so reuse the first Comm")
	}
	c := &mpiComm{calls: make(chan func())}
	ready := make(chan error)
	go c.serve(level, ready)
	if err := <-ready; err != nil {
		return nil, err
	}
	mpiStarted.yes = true
	return c, nil
}

type mpiComm struct {
	calls chan func()

	// mu serialises calls and guards done; MPI calls themselves happen on the server thread.
	mu   sync.Mutex
	done bool

	world, node          C.MPI_Comm
	rank, size           int
	localRank, localSize int
	multiple             bool
	pending              int // non-blocking collectives posted and not yet complete (under mu)
}

func (c *mpiComm) serve(level ThreadLevel, ready chan<- error) {
	// Never unlocked: when this goroutine returns after Finalize its thread is discarded.
	runtime.LockOSThread()
	var provided C.int
	if rc := C.ff_init(C.int(level), &provided); rc != C.MPI_SUCCESS {
		ready <- c.mpiError("MPI_Init_thread", rc)
		return
	}
	c.multiple = ThreadLevel(provided) >= ThreadMultiple
	if ThreadLevel(provided) < ThreadFunneled && level >= ThreadFunneled {
		ready <- fmt.Errorf("collective: MPI provides only %v but this program needs %v; use an MPI library built with thread support", ThreadLevel(provided), ThreadFunneled)
		return
	}
	c.world = C.ff_world()
	if err := c.setup(); err != nil {
		ready <- err
		return
	}
	ready <- nil
	for f := range c.calls {
		f()
	}
}

func (c *mpiComm) setup() error {
	if rc := C.ff_errors_return(c.world); rc != C.MPI_SUCCESS {
		return c.mpiError("MPI_Comm_set_errhandler", rc)
	}
	var r, s C.int
	if rc := C.MPI_Comm_rank(c.world, &r); rc != C.MPI_SUCCESS {
		return c.mpiError("MPI_Comm_rank", rc)
	}
	if rc := C.MPI_Comm_size(c.world, &s); rc != C.MPI_SUCCESS {
		return c.mpiError("MPI_Comm_size", rc)
	}
	c.rank, c.size = int(r), int(s)
	if rc := C.ff_split_shared(c.world, r, &c.node); rc != C.MPI_SUCCESS {
		return c.mpiError("MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)", rc)
	}
	if rc := C.ff_errors_return(c.node); rc != C.MPI_SUCCESS {
		return c.mpiError("MPI_Comm_set_errhandler", rc)
	}
	if rc := C.MPI_Comm_rank(c.node, &r); rc != C.MPI_SUCCESS {
		return c.mpiError("MPI_Comm_rank(node)", rc)
	}
	if rc := C.MPI_Comm_size(c.node, &s); rc != C.MPI_SUCCESS {
		return c.mpiError("MPI_Comm_size(node)", rc)
	}
	c.localRank, c.localSize = int(r), int(s)
	return nil
}

// mpiError is the one place an MPI return code becomes a Go error.
func (c *mpiComm) mpiError(call string, rc C.int) error {
	if rc == C.MPI_SUCCESS {
		return nil
	}
	var buf [C.MPI_MAX_ERROR_STRING + 1]C.char
	n := C.ff_error_string(rc, &buf[0])
	msg := C.GoStringN(&buf[0], n)
	if msg == "" {
		msg = "unknown error"
	}
	return fmt.Errorf("collective: %s failed on rank %d: %s (MPI error %d)", call, c.rank, msg, int(rc))
}

// run executes f on the MPI thread and waits for it.
func (c *mpiComm) run(f func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return errFinalized
	}
	res := make(chan error, 1)
	c.calls <- func() { res <- f() }
	return <-res
}

func (c *mpiComm) rootOK(root int) error {
	if root < 0 || root >= c.size {
		return fmt.Errorf("collective: root %d out of range for a job of %d ranks", root, c.size)
	}
	return nil
}

func (c *mpiComm) Rank() int      { return c.rank }
func (c *mpiComm) Size() int      { return c.size }
func (c *mpiComm) LocalRank() int { return c.localRank }
func (c *mpiComm) LocalSize() int { return c.localSize }

func (c *mpiComm) Barrier() error {
	return c.run(func() error { return c.mpiError("MPI_Barrier", C.ff_barrier(c.world)) })
}

// ptr is the address of b's first byte, or of a dummy for an empty slice (MPI accepts any
// address with count 0, cgo does not accept &b[0]).
var dummy C.char

func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return unsafe.Pointer(&dummy)
	}
	return unsafe.Pointer(&b[0])
}

const maxCount = 1<<31 - 1

// Bcast leaves root checking to MPI, which reports a bad root as MPI_ERR_ROOT.
func (c *mpiComm) Bcast(root int, buf []byte) error {
	if len(buf) > maxCount {
		return fmt.Errorf("collective: broadcast of %d bytes exceeds MPI's 2 GiB count limit", len(buf))
	}
	return c.run(func() error {
		return c.mpiError("MPI_Bcast", C.ff_bcast(c.world, ptr(buf), C.int(len(buf)), C.int(root)))
	})
}

func (c *mpiComm) Gather(root int, send []byte) ([][]byte, error) {
	if err := c.rootOK(root); err != nil {
		return nil, err
	}
	if len(send) > maxCount {
		return nil, fmt.Errorf("collective: gather of %d bytes from one rank exceeds MPI's 2 GiB count limit", len(send))
	}
	var out [][]byte
	err := c.run(func() error {
		// Sizes first, so root can lay out one receive buffer for MPI_Gatherv.
		var counts, displs []C.int
		if c.rank == root {
			counts = make([]C.int, c.size)
			displs = make([]C.int, c.size)
		} else {
			counts = make([]C.int, 1) // ignored by MPI off root, but must be a valid address
		}
		if err := c.mpiError("MPI_Gather(sizes)", C.ff_gather_int(c.world, C.int(len(send)), &counts[0], C.int(root))); err != nil {
			return err
		}
		var recv []byte
		if c.rank == root {
			total := 0
			for i, n := range counts {
				displs[i] = C.int(total)
				total += int(n)
			}
			if total > maxCount {
				return fmt.Errorf("collective: gather of %d bytes at rank %d exceeds MPI's 2 GiB count limit", total, root)
			}
			recv = make([]byte, total)
		} else {
			displs = counts
		}
		rc := C.ff_gatherv(c.world, ptr(send), C.int(len(send)), ptr(recv), &counts[0], &displs[0], C.int(root))
		if err := c.mpiError("MPI_Gatherv", rc); err != nil {
			return err
		}
		if c.rank == root {
			out = make([][]byte, c.size)
			for i := range out {
				d := int(displs[i])
				out[i] = recv[d : d+int(counts[i]) : d+int(counts[i])]
			}
		}
		return nil
	})
	return out, err
}

func (c *mpiComm) AllreduceInt64(op Op, vals []int64) error {
	if op < Sum || op > Min {
		return fmt.Errorf("collective: unknown reduction %v", op)
	}
	if len(vals) > maxCount {
		return fmt.Errorf("collective: allreduce of %d values exceeds MPI's count limit", len(vals))
	}
	if len(vals) == 0 {
		// Every rank must still enter the collective, so keep the call.
		vals = make([]int64, 0, 1)
	}
	return c.run(func() error {
		p := (*C.longlong)(unsafe.Pointer(unsafe.SliceData(vals)))
		return c.mpiError("MPI_Allreduce("+op.String()+")", C.ff_allreduce_i64(c.world, p, C.int(len(vals)), C.int(op)))
	})
}

func (c *mpiComm) IallreduceInt64(op Op, vals []int64) (Request, error) {
	if op < Sum || op > Min {
		return nil, fmt.Errorf("collective: unknown reduction %v", op)
	}
	if len(vals) > maxCount {
		return nil, fmt.Errorf("collective: allreduce of %d values exceeds MPI's count limit", len(vals))
	}
	n := len(vals)
	r := &request{c: c, call: "MPI_Iallreduce(" + op.String() + ")", done: func(buf unsafe.Pointer, _, _ int) {
		copy(vals, unsafe.Slice((*int64)(buf), n))
	}}
	return requestOrNil(c.post(r, 8*n, func(buf unsafe.Pointer) C.int {
		copy(unsafe.Slice((*int64)(buf), n), vals)
		return C.ff_iallreduce_i64(c.world, (*C.longlong)(buf), C.int(n), C.int(op), r.req)
	}))
}

// requestOrNil is post's result as a Request: a nil interface, not a nil *request, on an error.
func requestOrNil(r *request, err error) (Request, error) {
	if err != nil {
		return nil, err
	}
	return r, nil
}

// request is a posted non-blocking MPI call (an allreduce, a send, a receive). Its buffer and
// MPI_Request live in C memory: MPI uses them after the call that posted them has returned,
// which Go memory passed to C must not allow.
type request struct {
	c    *mpiComm
	call string
	// done copies the result out of the buffer once MPI is done with it (nil: nothing to copy),
	// with the message's source and byte count (a receive's: recv).
	done func(buf unsafe.Pointer, source, count int)
	recv bool

	mu       sync.Mutex // serialises Test from several goroutines
	buf      unsafe.Pointer
	req      *C.MPI_Request
	complete bool
	err      error
}

// post allocates r's buffer of n bytes (at least one: malloc(0) may return NULL, and MPI wants
// a valid address) and its MPI_Request, and starts it on the MPI thread: start fills the buffer
// and makes the MPI call. The request counts as pending until it completes.
func (c *mpiComm) post(r *request, n int, start func(buf unsafe.Pointer) C.int) (*request, error) {
	err := c.run(func() error {
		r.buf = C.malloc(C.size_t(max(1, n)))
		r.req = (*C.MPI_Request)(C.malloc(C.size_t(unsafe.Sizeof(C.MPI_Request(nil)))))
		if err := c.mpiError(r.call, start(r.buf)); err != nil {
			r.free()
			return err
		}
		c.pending++
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (r *request) free() {
	C.free(r.buf)
	C.free(unsafe.Pointer(r.req))
	r.buf, r.req = nil, nil
}

func (r *request) Test() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.complete || r.err != nil {
		return r.complete, r.err
	}
	err := r.c.run(func() error {
		var done, source, count C.int
		src, cnt := (*C.int)(nil), (*C.int)(nil)
		if r.recv {
			src, cnt = &source, &count
		}
		if err := r.c.mpiError("MPI_Test("+r.call+")", C.ff_test_status(r.req, &done, src, cnt)); err != nil {
			// The request is over, but whether MPI is done with its buffer is not said: the
			// buffer is left allocated rather than freed under it.
			r.c.pending--
			return err
		}
		if done != 0 {
			if r.done != nil {
				r.done(r.buf, int(source), int(count))
			}
			r.free()
			r.complete = true
			r.c.pending--
		}
		return nil
	})
	if err != nil && err != errFinalized {
		r.err = err
	}
	return r.complete, err
}

func (r *request) Wait() error { return wait(r) }

// Abort ends the whole job. When another goroutine is blocked in a collective (a peer died)
// the MPI thread is busy; then, or when MPI provides MPI_THREAD_MULTIPLE, MPI_Abort is called
// from the caller's thread, which OpenMPI's abort path handles: it is the one call a stuck
// rank must still be able to make.
func (c *mpiComm) Abort(code int) {
	if !c.multiple && c.mu.TryLock() {
		if c.done {
			// MPI is gone; nothing is left to tell the other ranks.
			os.Exit(code)
		}
		c.calls <- func() { C.MPI_Abort(c.world, C.int(code)) }
		select {} // MPI_Abort does not return
	}
	C.MPI_Abort(c.world, C.int(code))
	select {}
}

func (c *mpiComm) Finalize() error {
	c.mu.Lock()
	n := c.pending
	c.mu.Unlock()
	if n > 0 {
		return pendingError(n)
	}
	err := c.run(func() error {
		if c.node != C.ff_null() {
			if err := c.mpiError("MPI_Comm_free(node)", C.MPI_Comm_free(&c.node)); err != nil {
				return err
			}
		}
		return c.mpiError("MPI_Finalize", C.MPI_Finalize())
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done {
		c.done = true
		close(c.calls)
	}
	return err
}
