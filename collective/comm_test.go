package collective

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// exercise checks the one-rank semantics every Comm must share, so Single and MPI agree.
func exercise(t *testing.T, c Comm) {
	t.Helper()
	if c.Rank() != 0 || c.Size() != 1 || c.LocalRank() != 0 || c.LocalSize() != 1 {
		t.Fatalf("rank %d/%d local %d/%d, want 0/1 local 0/1", c.Rank(), c.Size(), c.LocalRank(), c.LocalSize())
	}
	if err := c.Barrier(); err != nil {
		t.Fatal(err)
	}
	buf := []byte("unchanged")
	if err := c.Bcast(0, buf); err != nil || string(buf) != "unchanged" {
		t.Fatalf("Bcast: %q, %v", buf, err)
	}
	if err := c.Bcast(1, buf); err == nil {
		t.Fatal("Bcast from root 1 in a 1-rank job succeeded")
	}
	for _, payload := range [][]byte{nil, []byte("x"), bytes.Repeat([]byte("0123456789"), 100000)} {
		got, err := BcastBytes(c, 0, payload)
		if err != nil || !bytes.Equal(got, payload) {
			t.Fatalf("BcastBytes of %d bytes: got %d bytes, %v", len(payload), len(got), err)
		}
	}
	for _, chunk := range []int{1, 7, MaxBcastChunk} {
		b := []byte("chunked, unchanged")
		if err := BcastChunks(c, 0, b, chunk); err != nil || string(b) != "chunked, unchanged" {
			t.Fatalf("BcastChunks in pieces of %d: %q, %v", chunk, b, err)
		}
	}
	if err := BcastChunks(c, 0, buf, 0); err == nil {
		t.Fatal("BcastChunks in pieces of 0 bytes succeeded")
	}
	send := []byte("mine")
	all, err := c.Gather(0, send)
	if err != nil || len(all) != 1 || string(all[0]) != "mine" {
		t.Fatalf("Gather: %q, %v", all, err)
	}
	send[0] = 'X'
	if string(all[0]) != "mine" {
		t.Fatal("Gather result aliases the send buffer")
	}
	if all, err := c.Gather(0, nil); err != nil || len(all) != 1 || len(all[0]) != 0 {
		t.Fatalf("Gather of nothing: %q, %v", all, err)
	}
	if _, err := c.Gather(2, send); err == nil {
		t.Fatal("Gather to root 2 in a 1-rank job succeeded")
	}
	for _, op := range []Op{Sum, Max, Min} {
		v := []int64{-5, 0, 1 << 40}
		if err := c.AllreduceInt64(op, v); err != nil || v[0] != -5 || v[1] != 0 || v[2] != 1<<40 {
			t.Fatalf("Allreduce %v over one rank changed %v (%v)", op, v, err)
		}
	}
	if err := c.AllreduceInt64(Op(9), []int64{1}); err == nil {
		t.Fatal("Allreduce with an unknown op succeeded")
	}
	if err := c.AllreduceInt64(Sum, nil); err != nil {
		t.Fatalf("Allreduce of nothing: %v", err)
	}
	// The non-blocking allreduce: while a request is in flight Finalize refuses; once complete,
	// vals hold the result, and Test keeps saying so.
	for _, op := range []Op{Sum, Max, Min} {
		v := []int64{-5, 0, 1 << 40}
		r, err := c.IallreduceInt64(op, v)
		if err != nil {
			t.Fatalf("Iallreduce %v: %v", op, err)
		}
		if err := c.Finalize(); err == nil || !strings.Contains(err.Error(), "1 non-blocking collective(s) still in flight") {
			t.Fatalf("Finalize with a request in flight: %v, want a refusal", err)
		}
		if err := r.Wait(); err != nil || v[0] != -5 || v[1] != 0 || v[2] != 1<<40 {
			t.Fatalf("Iallreduce %v over one rank gave %v (%v)", op, v, err)
		}
		if done, err := r.Test(); !done || err != nil {
			t.Fatalf("Test after Wait: %v, %v", done, err)
		}
	}
	if _, err := c.IallreduceInt64(Op(9), []int64{1}); err == nil {
		t.Fatal("Iallreduce with an unknown op succeeded")
	}
	r, err := c.IallreduceInt64(Max, nil)
	if err != nil {
		t.Fatalf("Iallreduce of nothing: %v", err)
	}
	for done := false; !done; {
		if done, err = r.Test(); err != nil {
			t.Fatal(err)
		}
	}
	// Point-to-point: a job of one rank has no other rank to talk to.
	if _, err := c.Isend(1, 0, []byte("x")); err == nil || !strings.Contains(err.Error(), "rank 1") {
		t.Fatalf("Isend to rank 1 of a 1-rank job: %v, want a refusal naming the rank", err)
	}
	if _, err := c.Irecv(1, 0, make([]byte, 1)); err == nil || !strings.Contains(err.Error(), "rank 1") {
		t.Fatalf("Irecv from rank 1 of a 1-rank job: %v, want a refusal naming the rank", err)
	}
	if _, err := c.Irecv(-7, 0, make([]byte, 1)); err == nil {
		t.Fatal("Irecv from rank -7 succeeded")
	}
	if err := c.Finalize(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.IallreduceInt64(Sum, []int64{1}); err == nil || !strings.Contains(err.Error(), "finalized") {
		t.Fatalf("Iallreduce after Finalize: %v, want a finalized error", err)
	}
	if err := c.Barrier(); err == nil || !strings.Contains(err.Error(), "finalized") {
		t.Fatalf("Barrier after Finalize: %v, want a finalized error", err)
	}
	if err := c.Finalize(); err == nil {
		t.Fatal("second Finalize succeeded")
	}
}

func TestSingle(t *testing.T) { exercise(t, Single()) }

// MPI started inside the test binary as a singleton must behave exactly like Single, and turn
// MPI's own error codes into readable errors.
func TestSingletonMPIInProcess(t *testing.T) {
	c, err := InitMPI(ThreadFunneled)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Bcast(3, make([]byte, 4))
	if err == nil || !strings.Contains(err.Error(), "MPI_Bcast failed on rank 0") || !strings.Contains(err.Error(), "MPI_ERR_ROOT") {
		t.Fatalf("Bcast to a bad root: %v, want an MPI_ERR_ROOT error from MPI_Error_string", err)
	}
	// Calls from many goroutines are all funnelled to the MPI thread.
	done := make(chan error)
	for i := 0; i < 8; i++ {
		go func() {
			v := []int64{int64(i)}
			err := c.AllreduceInt64(Max, v)
			if err == nil && v[0] != int64(i) {
				err = fmt.Errorf("Allreduce(max) over one rank turned %d into %d", i, v[0])
			}
			if err == nil {
				err = c.Barrier()
			}
			done <- err
		}()
	}
	for i := 0; i < 8; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	exercise(t, c)
	if _, err := InitMPI(ThreadFunneled); err == nil {
		t.Fatal("second InitMPI succeeded")
	}
}

func TestOpAndLevelNames(t *testing.T) {
	if Sum.String() != "sum" || Min.String() != "min" || ThreadMultiple.String() != "MPI_THREAD_MULTIPLE" {
		t.Fatal("names wrong")
	}
}
