package collective

import (
	"slices"
	"testing"
)

// Over one rank the exclusive scan is zeros (nothing comes before rank 0), and a finalized
// communicator refuses it. Under mpirun, mpitest checks every rank's sums (TestUnderMpirun).
func TestExscanSingle(t *testing.T) {
	c := Single()
	v := []int64{7, -3}
	if err := ExscanInt64(c, v); err != nil || !slices.Equal(v, []int64{0, 0}) {
		t.Fatalf("Exscan over one rank gave %v (%v), want [0 0]", v, err)
	}
	if err := c.Finalize(); err != nil {
		t.Fatal(err)
	}
	if err := ExscanInt64(c, v); err == nil {
		t.Fatal("Exscan after Finalize succeeded")
	}
}
