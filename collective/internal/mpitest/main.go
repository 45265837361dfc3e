// Command mpitest exercises every collective call once so the tests can run it under mpirun,
// srun, sbatch and alone, and compare what rank 0 prints.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/rank"
)

func main() {
	force := flag.Bool("mpi", false, "always use MPI (singleton when alone) instead of collective.Init's choice")
	abortRank := flag.Int("abort", -1, "this rank calls Abort(3) after the first barrier; the others wait in a barrier")
	exitRank := flag.Int("exit", -1, "this rank exits with status 4 without finalizing; the others wait in a barrier")
	flag.Parse()

	c := initComm(*force)
	check := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			c.Abort(2)
		}
	}
	id, err := rank.Identify(c.Rank(), c.Size(), c.LocalRank(), c.LocalSize(), rank.Options{Device: "cpu"})
	check(err)
	fmt.Printf("rank %d size %d local %d/%d\n", id.WorldRank, id.WorldSize, id.LocalRank, id.LocalSize)

	failOnCue(c, check, *abortRank, *exitRank)

	got, wrong := broadcasts(c, check)

	mine := fmt.Sprintf("r%d:%s:%d", c.Rank(), strings.Repeat("x", c.Rank()), len(got))
	if c.Rank() == 1 {
		mine = "" // an empty contribution must gather as empty
	}
	all, err := c.Gather(0, []byte(mine))
	check(err)
	if c.Rank() != 0 && all != nil {
		check(fmt.Errorf("rank %d got a gather result", c.Rank()))
	}

	vals := []int64{int64(c.Rank()), int64(c.Rank()), int64(c.Rank())}
	for i, op := range []collective.Op{collective.Sum, collective.Max, collective.Min} {
		v := []int64{vals[i]}
		check(c.AllreduceInt64(op, v))
		vals[i] = v[0]
	}
	inFlight := iallreduce(c, check)
	// Rank r adds r+1 bytes and 10: the sums of the ranks before it.
	r := int64(c.Rank())
	scan := []int64{r + 1, 10}
	check(collective.ExscanInt64(c, scan))
	if scan[0] != r*(r+1)/2 || scan[1] != 10*r {
		check(fmt.Errorf("rank %d: Exscan gave %v, want [%d %d]", r, scan, r*(r+1)/2, 10*r))
	}
	p2p := pointToPoint(c, check)

	check(c.Barrier())
	if c.Rank() == 0 {
		fmt.Printf("iallreduce %v in flight until every rank posted: %v\n", inFlight, inFlight && c.Size() > 1)
		parts := make([]string, len(all))
		for i, b := range all {
			parts[i] = string(b)
		}
		fmt.Printf("gather %s\n", strings.Join(parts, ","))
		fmt.Printf("allreduce sum %d max %d min %d\n", vals[0], vals[1], vals[2])
		fmt.Printf("exscan %v\n", scan)
		fmt.Printf("bcast in pieces: %d byte(s) wrong over every rank\n", wrong)
		fmt.Printf("%s\n", p2p)
	}
	check(c.Finalize())
	if err := c.Barrier(); err == nil {
		fmt.Fprintln(os.Stderr, "barrier after finalize succeeded")
		os.Exit(5)
	}
}

// initComm joins the job: through MPI when force is set (a singleton when alone), else as
// collective.Init chooses. It exits with status 2 when that fails.
func initComm(force bool) collective.Comm {
	var c collective.Comm
	var err error
	if force {
		c, err = collective.InitMPI(collective.ThreadFunneled)
	} else {
		c, err = collective.Init()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	return c
}

// failOnCue makes the rank named by abortRank call Abort(3), and the one named by exitRank
// exit without finalizing, after a first barrier; the other ranks then wait in barriers for
// the launcher to end them.
func failOnCue(c collective.Comm, check func(error), abortRank, exitRank int) {
	check(c.Barrier())
	if c.Rank() == abortRank {
		c.Abort(3)
	}
	if c.Rank() == exitRank {
		os.Exit(4)
	}
	if abortRank >= 0 || exitRank >= 0 {
		// The survivors block here until the launcher kills them; give it a moment so a
		// rank that would hang is caught by the test's guard, not by luck.
		check(c.Barrier())
		time.Sleep(30 * time.Second)
		check(c.Barrier())
	}
}

// broadcasts runs a broadcast of rank 0's payload and one in pieces, returning the payload
// every rank got and the bytes of the pieces that arrived wrong, summed over every rank.
func broadcasts(c collective.Comm, check func(error)) (got []byte, wrong int64) {
	var payload []byte
	if c.Rank() == 0 {
		payload = []byte(strings.Repeat("plan!", 1000))
	}
	got, err := collective.BcastBytes(c, 0, payload)
	check(err)

	// A broadcast in pieces (a model file's bytes in the driver): 10007 bytes in 4096-byte
	// pieces, the last one short; every rank counts the bytes it got wrong.
	chunked := make([]byte, 10007)
	if c.Rank() == 0 {
		for i := range chunked {
			chunked[i] = byte(i * 31)
		}
	}
	check(collective.BcastChunks(c, 0, chunked, 4096))
	count := []int64{0}
	for i, b := range chunked {
		if b != byte(i*31) {
			count[0]++
		}
	}
	check(c.AllreduceInt64(collective.Sum, count))
	return got, count[0]
}

// iallreduce runs one non-blocking allreduce that rank 0 posts first: the others post theirs
// only once rank 0 has tested its request (they wait for a file rank 0 writes then), so rank 0's
// first Test must find it in flight when there are other ranks. A barrier runs while it is in
// flight. Every rank checks the result; rank 0 reports whether its first Test found it in
// flight (the test asserts that only with more than one rank).
func iallreduce(c collective.Comm, check func(error)) (inFlight bool) {
	var dir []byte
	if c.Rank() == 0 {
		exe, err := os.Executable()
		check(err)
		d, err := os.MkdirTemp(filepath.Dir(exe), "iallreduce")
		check(err)
		dir = []byte(d)
	}
	dir, err := collective.BcastBytes(c, 0, dir)
	check(err)
	posted := filepath.Join(string(dir), "posted")
	if c.Rank() != 0 {
		for {
			if _, err := os.Stat(posted); err == nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	n := c.Size()
	v := make([]int64, n+1)
	v[c.Rank()] = int64(c.Rank()) + 1 // each rank's own slot, as the driver's control rounds use it
	v[n] = 1
	req, err := c.IallreduceInt64(collective.Sum, v)
	check(err)
	if c.Rank() == 0 {
		done, err := req.Test()
		check(err)
		inFlight = !done
		f, err := os.OpenFile(posted, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644) // in rank 0's own MkdirTemp folder
		check(err)
		check(f.Close())
	}
	check(c.Barrier())
	check(req.Wait())
	for r := 0; r < n; r++ {
		if v[r] != int64(r)+1 {
			check(fmt.Errorf("rank %d: Iallreduce gave %v: slot %d is %d, want %d", c.Rank(), v, r, v[r], r+1))
		}
	}
	if v[n] != int64(n) {
		check(fmt.Errorf("rank %d: Iallreduce gave %v: the sum is %d, want %d", c.Rank(), v, v[n], n))
	}
	if c.Rank() == 0 {
		check(os.RemoveAll(string(dir))) // rank 0's MkdirTemp folder, holding only "posted"
	}
	return inFlight
}

// pointToPoint has every other rank send rank 0 three messages (a short one, one large enough
// for MPI's rendezvous protocol, an empty one), which rank 0 receives from any rank, checking
// each rank's are in order and intact; rank 0 then sends each rank one message that it
// receives from rank 0 by name. A sender overwrites its buffer right after Isend (Isend
// copies it). Rank 0's line says what arrived; in a job of one rank, Isend to rank 1 is refused.
func pointToPoint(c collective.Comm, check func(error)) string {
	const tag, large = 7, 1<<20 + 3
	msg := func(from, k int) []byte {
		switch k {
		case 0:
			return []byte(fmt.Sprintf("hello from %d", from))
		case 1:
			b := make([]byte, large+from)
			for i := range b {
				b[i] = byte(i*7 + from)
			}
			return b
		}
		return nil
	}
	if c.Size() == 1 {
		if _, err := c.Isend(1, tag, []byte("x")); err == nil {
			check(fmt.Errorf("a send (Isend) to rank 1 in a job of 1 rank succeeded"))
		}
		return "p2p none: a job of 1 rank"
	}
	if c.Rank() != 0 {
		var reqs []collective.Request
		for k := 0; k < 3; k++ {
			b := msg(c.Rank(), k)
			r, err := c.Isend(0, tag, b)
			check(err)
			for i := range b {
				b[i] = 0 // the copy is sent, not this
			}
			reqs = append(reqs, r)
		}
		for _, r := range reqs {
			check(r.Wait())
		}
		buf := make([]byte, 64)
		r, err := c.Irecv(0, tag, buf)
		check(err)
		check(r.Wait())
		if _, n := r.Message(); string(buf[:n]) != fmt.Sprintf("to %d", c.Rank()) {
			check(fmt.Errorf("rank %d received %q from rank 0", c.Rank(), buf[:n]))
		}
		return ""
	}
	next := make([]int, c.Size()) // the message each rank sends next
	buf := make([]byte, large+c.Size())
	for got := 0; got < 3*(c.Size()-1); got++ {
		r, err := c.Irecv(collective.AnySource, tag, buf)
		check(err)
		check(r.Wait())
		from, n := r.Message()
		if from < 1 || from >= c.Size() || next[from] > 2 || string(buf[:n]) != string(msg(from, next[from])) {
			check(fmt.Errorf("rank 0 received %d bytes from rank %d, not its message %d", n, from, next[from]))
		}
		next[from]++
	}
	for r := 1; r < c.Size(); r++ {
		req, err := c.Isend(r, tag, []byte(fmt.Sprintf("to %d", r)))
		check(err)
		check(req.Wait())
	}
	return fmt.Sprintf("p2p 3 messages in order from each of %d rank(s)", c.Size()-1)
}
