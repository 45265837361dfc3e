//go:build cgo && !nompi

package collective

/*
#cgo pkg-config: ompi-c
#include <stdlib.h>
#include <mpi.h>

// Point-to-point messages: their buffers and requests live in C memory, which MPI may use after
// the call that posted them has returned (Go memory passed to C must not be kept).
static int ff_isend(MPI_Comm c, void *buf, int n, int dest, int tag, MPI_Request *r) {
	return MPI_Isend(buf, n, MPI_BYTE, dest, tag, c, r);
}
static int ff_irecv(MPI_Comm c, void *buf, int n, int source, int tag, MPI_Request *r) {
	return MPI_Irecv(buf, n, MPI_BYTE, source < 0 ? MPI_ANY_SOURCE : source, tag, c, r);
}
static int ff_test_message(MPI_Request *r, int *done, int *source, int *count) {
	MPI_Status st;
	int rc = MPI_Test(r, done, &st);
	if (rc != MPI_SUCCESS || !*done) return rc;
	*source = st.MPI_SOURCE;
	return MPI_Get_count(&st, MPI_BYTE, count);
}
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

func (c *mpiComm) peerOK(call string, peer, tag int, buf []byte) error {
	switch {
	case peer < 0 && !(peer == AnySource && call == "Irecv from"):
		return fmt.Errorf("collective: %s rank %d: no such rank", call, peer)
	case peer >= c.size:
		return fmt.Errorf("collective: %s rank %d: out of range for a job of %d ranks", call, peer, c.size)
	case tag < 0 || tag > MaxTag:
		return fmt.Errorf("collective: tag %d: want 0 to %d", tag, MaxTag)
	case len(buf) > maxCount:
		return fmt.Errorf("collective: a message of %d bytes exceeds MPI's 2 GiB count limit", len(buf))
	}
	return nil
}

func (c *mpiComm) Isend(dest, tag int, buf []byte) (Request, error) {
	if err := c.peerOK("Isend to", dest, tag, buf); err != nil {
		return nil, err
	}
	r := &p2pRequest{c: c, call: fmt.Sprintf("MPI_Isend(to rank %d, tag %d)", dest, tag)}
	err := c.run(func() error {
		r.alloc(len(buf))
		copy(unsafe.Slice((*byte)(r.buf), len(buf)), buf)
		if err := c.mpiError(r.call, C.ff_isend(c.world, r.buf, C.int(len(buf)), C.int(dest), C.int(tag), r.req)); err != nil {
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

func (c *mpiComm) Irecv(source, tag int, buf []byte) (RecvRequest, error) {
	if err := c.peerOK("Irecv from", source, tag, buf); err != nil {
		return nil, err
	}
	r := &p2pRequest{c: c, call: fmt.Sprintf("MPI_Irecv(from rank %d, tag %d)", source, tag), recv: true, into: buf}
	if source == AnySource {
		r.call = fmt.Sprintf("MPI_Irecv(from any rank, tag %d)", tag)
	}
	err := c.run(func() error {
		r.alloc(len(buf))
		if err := c.mpiError(r.call, C.ff_irecv(c.world, r.buf, C.int(len(buf)), C.int(source), C.int(tag), r.req)); err != nil {
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

// p2pRequest is a posted MPI_Isend or MPI_Irecv.
type p2pRequest struct {
	c    *mpiComm
	call string
	recv bool // an Irecv: the message is copied into into at completion
	into []byte

	mu        sync.Mutex // serialises Test from several goroutines
	buf       unsafe.Pointer
	req       *C.MPI_Request
	complete  bool
	err       error
	source, n int
}

func (r *p2pRequest) alloc(n int) {
	r.buf = C.malloc(C.size_t(max(1, n))) // malloc(0) may return NULL; MPI wants an address
	r.req = (*C.MPI_Request)(C.malloc(C.size_t(unsafe.Sizeof(C.MPI_Request(nil)))))
}

func (r *p2pRequest) free() {
	C.free(r.buf)
	C.free(unsafe.Pointer(r.req))
	r.buf, r.req = nil, nil
}

func (r *p2pRequest) Test() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.complete || r.err != nil {
		return r.complete, r.err
	}
	err := r.c.run(func() error {
		var done, source, count C.int
		if err := r.c.mpiError("MPI_Test("+r.call+")", C.ff_test_message(r.req, &done, &source, &count)); err != nil {
			// As for the allreduce: the buffer is left to MPI rather than freed under it.
			r.c.pending--
			return err
		}
		if done != 0 {
			if r.recv {
				r.source, r.n = int(source), int(count)
				copy(r.into, unsafe.Slice((*byte)(r.buf), r.n))
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

func (r *p2pRequest) Wait() error { return wait(r) }

func (r *p2pRequest) Message() (source, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.source, r.n
}
