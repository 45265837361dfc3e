//go:build cgo && !nompi

package collective

/*
#cgo pkg-config: ompi-c
#include <mpi.h>

// The scan works in place in its request's C buffer (see request in mpi.go).
static int ff_iexscan_i64(MPI_Comm c, void *vals, int n, MPI_Request *r) {
	return MPI_Iexscan(MPI_IN_PLACE, vals, n, MPI_INT64_T, MPI_SUM, c, r);
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// exscanInt64 posts an MPI_Iexscan and waits for it as every request is waited for (growing
// sleeps between tests on the MPI thread), so other calls are served meanwhile.
func (c *mpiComm) exscanInt64(vals []int64) error {
	if len(vals) > maxCount {
		return fmt.Errorf("collective: exclusive scan of %d values exceeds MPI's count limit", len(vals))
	}
	n := len(vals)
	r := &request{c: c, call: "MPI_Iexscan(sum)", done: func(buf unsafe.Pointer, _, _ int) {
		copy(vals, unsafe.Slice((*int64)(buf), n))
	}}
	posted, err := c.post(r, 8*n, func(buf unsafe.Pointer) C.int {
		copy(unsafe.Slice((*int64)(buf), n), vals)
		return C.ff_iexscan_i64(c.world, buf, C.int(n), r.req)
	})
	if err != nil {
		return err
	}
	if err := wait(posted); err != nil {
		return err
	}
	if c.rank == 0 {
		clear(vals) // MPI leaves rank 0's result undefined
	}
	return nil
}
