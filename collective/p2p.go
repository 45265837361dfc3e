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
*/
import "C"

import (
	"fmt"
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
	n := len(buf)
	r := &request{c: c, call: fmt.Sprintf("MPI_Isend(to rank %d, tag %d)", dest, tag)}
	return requestOrNil(c.post(r, n, func(cbuf unsafe.Pointer) C.int {
		copy(unsafe.Slice((*byte)(cbuf), n), buf)
		return C.ff_isend(c.world, cbuf, C.int(n), C.int(dest), C.int(tag), r.req)
	}))
}

func (c *mpiComm) Irecv(source, tag int, buf []byte) (RecvRequest, error) {
	if err := c.peerOK("Irecv from", source, tag, buf); err != nil {
		return nil, err
	}
	r := &recvRequest{request: &request{c: c, call: fmt.Sprintf("MPI_Irecv(from rank %d, tag %d)", source, tag), recv: true}}
	if source == AnySource {
		r.call = fmt.Sprintf("MPI_Irecv(from any rank, tag %d)", tag)
	}
	r.done = func(cbuf unsafe.Pointer, from, count int) { // under r.mu, in Test
		r.source, r.n = from, count
		copy(buf, unsafe.Slice((*byte)(cbuf), count))
	}
	if _, err := c.post(r.request, len(buf), func(cbuf unsafe.Pointer) C.int {
		return C.ff_irecv(c.world, cbuf, C.int(len(buf)), C.int(source), C.int(tag), r.req)
	}); err != nil {
		return nil, err
	}
	return r, nil
}

// recvRequest is a posted MPI_Irecv: the message is copied into the caller's buffer at
// completion, and its source and length kept.
type recvRequest struct {
	*request
	source, n int
}

func (r *recvRequest) Message() (source, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.source, r.n
}
