package collective

import "fmt"

// ExscanInt64 replaces vals on every rank by the element-wise sum of the vals of the ranks
// before it (MPI_Exscan; rank 0 gets zeros, which MPI leaves undefined): each rank's offset
// in a file that the ranks write in rank order, from its own size alone. Every rank passes the
// same number of values.
func ExscanInt64(c Comm, vals []int64) error {
	s, ok := c.(exscanner)
	if !ok {
		return fmt.Errorf("collective: %T has no exclusive scan", c)
	}
	return s.exscanInt64(vals)
}

// exscanner is a Comm with an exclusive scan; every Comm of this package is one (kept out of
// the Comm interface so that communicators built elsewhere need not grow a method).
type exscanner interface {
	exscanInt64(vals []int64) error
}

// Over one rank, nothing comes before rank 0.
func (s *single) exscanInt64(vals []int64) error {
	if err := s.check(0); err != nil {
		return err
	}
	clear(vals)
	return nil
}
