//go:build cgo && !nompi

package collective

/*
#cgo pkg-config: ompi-c
#include <time.h>
#include <mpi.h>

// As ff_wait in mpi.go: the scan is posted non-blocking and completed with sleeps between tests.
static int ff_exscan_wait(MPI_Request *r) {
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
static int ff_exscan_i64(MPI_Comm c, long long *in, long long *out, int n) {
	MPI_Request r;
	int rc = MPI_Iexscan(in, out, n, MPI_INT64_T, MPI_SUM, c, &r);
	return rc != MPI_SUCCESS ? rc : ff_exscan_wait(&r);
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

func (c *mpiComm) exscanInt64(vals []int64) error {
	if len(vals) > maxCount {
		return fmt.Errorf("collective: exclusive scan of %d values exceeds MPI's count limit", len(vals))
	}
	in := append(make([]int64, 0, max(1, len(vals))), vals...)
	out := make([]int64, max(1, len(vals)))
	err := c.run(func() error {
		rc := C.ff_exscan_i64(c.world, (*C.longlong)(unsafe.Pointer(&in[:1][0])), (*C.longlong)(unsafe.Pointer(&out[0])), C.int(len(vals)))
		return c.mpiError("MPI_Exscan(sum)", rc)
	})
	if err != nil {
		return err
	}
	if c.rank == 0 {
		clear(vals) // MPI leaves rank 0's result undefined
	} else {
		copy(vals, out)
	}
	return nil
}
