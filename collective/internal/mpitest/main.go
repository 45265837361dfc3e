// Command mpitest exercises every collective call once so the tests can run it under mpirun,
// srun, sbatch and alone, and compare what rank 0 prints.
package main

import (
	"flag"
	"fmt"
	"os"
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

	var c collective.Comm
	var err error
	if *force {
		c, err = collective.InitMPI(collective.ThreadFunneled)
	} else {
		c, err = collective.Init()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	check := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			c.Abort(2)
		}
	}
	id, err := rank.Identify(c.Rank(), c.Size(), c.LocalRank(), c.LocalSize(), rank.Options{Device: "cpu"})
	check(err)
	fmt.Printf("rank %d size %d local %d/%d\n", id.WorldRank, id.WorldSize, id.LocalRank, id.LocalSize)

	check(c.Barrier())
	if c.Rank() == *abortRank {
		c.Abort(3)
	}
	if c.Rank() == *exitRank {
		os.Exit(4)
	}
	if *abortRank >= 0 || *exitRank >= 0 {
		// The survivors block here until the launcher kills them; give it a moment so a
		// rank that would hang is caught by the test's guard, not by luck.
		check(c.Barrier())
		time.Sleep(30 * time.Second)
		check(c.Barrier())
	}

	var payload []byte
	if c.Rank() == 0 {
		payload = []byte(strings.Repeat("plan!", 1000))
	}
	got, err := collective.BcastBytes(c, 0, payload)
	check(err)

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
	check(c.Barrier())
	if c.Rank() == 0 {
		parts := make([]string, len(all))
		for i, b := range all {
			parts[i] = string(b)
		}
		fmt.Printf("gather %s\n", strings.Join(parts, ","))
		fmt.Printf("allreduce sum %d max %d min %d\n", vals[0], vals[1], vals[2])
	}
	check(c.Finalize())
	if err := c.Barrier(); err == nil {
		fmt.Fprintln(os.Stderr, "barrier after finalize succeeded")
		os.Exit(5)
	}
}
