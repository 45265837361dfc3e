package collective

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

// Single returns the Comm of a job with one rank. It checks arguments exactly as the MPI
// Comm does, so code that passes with Single does not break under mpirun.
func Single() Comm { return &single{} }

type single struct {
	mu      sync.Mutex
	done    bool
	pending int // requests not yet completed by Test or Wait, as MPI counts them
}

var errFinalized = errors.New("collective: communicator already finalized")

func (s *single) check(root int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return errFinalized
	}
	if root != 0 {
		return fmt.Errorf("collective: root %d out of range for a job of 1 rank", root)
	}
	return nil
}

func (s *single) Rank() int      { return 0 }
func (s *single) Size() int      { return 1 }
func (s *single) LocalRank() int { return 0 }
func (s *single) LocalSize() int { return 1 }
func (s *single) Barrier() error { return s.check(0) }

func (s *single) Bcast(root int, buf []byte) error { return s.check(root) }

func (s *single) Gather(root int, send []byte) ([][]byte, error) {
	if err := s.check(root); err != nil {
		return nil, err
	}
	// A copy, as MPI gives: the caller may reuse send.
	return [][]byte{append([]byte{}, send...)}, nil
}

func (s *single) AllreduceInt64(op Op, vals []int64) error {
	if err := s.check(0); err != nil {
		return err
	}
	if op < Sum || op > Min {
		return fmt.Errorf("collective: unknown reduction %v", op)
	}
	return nil
}

// IallreduceInt64 over one rank is complete at once; the request still counts as in flight
// until Test or Wait completes it, as in MPI, so that Finalize refuses it here too.
func (s *single) IallreduceInt64(op Op, vals []int64) (Request, error) {
	if err := s.AllreduceInt64(op, vals); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending++
	return &singleRequest{s: s}, nil
}

type singleRequest struct {
	s        *single
	complete bool // under s.mu
}

func (r *singleRequest) Test() (bool, error) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if !r.complete {
		r.complete = true
		r.s.pending--
	}
	return true, nil
}

func (r *singleRequest) Wait() error { return wait(r) }

// Isend and Irecv have no other rank to talk to in a job of one rank (MPI would allow a message
// to oneself, which no caller here needs).
func (s *single) Isend(dest, tag int, buf []byte) (Request, error) {
	return nil, p2pRefused(s, "Isend to", dest)
}

func (s *single) Irecv(source, tag int, buf []byte) (RecvRequest, error) {
	return nil, p2pRefused(s, "Irecv from", source)
}

func p2pRefused(s *single, call string, peer int) error {
	if err := s.check(0); err != nil {
		return err
	}
	return fmt.Errorf("collective: %s rank %d in a job of 1 rank: there is no other rank", call, peer)
}

func (s *single) Abort(code int) { os.Exit(code) }

func (s *single) Finalize() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return errFinalized
	}
	if s.pending > 0 {
		return pendingError(s.pending)
	}
	s.done = true
	return nil
}
