package driver

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// A stop margin that would stop the job before it began shrinks to a quarter of the time left;
// one that fits stays.
func TestStopMargin(t *testing.T) {
	for _, c := range []struct {
		margin, left, want time.Duration
		shrunk             bool
	}{
		{90 * time.Second, 2 * time.Minute, 90 * time.Second, false},
		{90 * time.Second, 56 * time.Second, 14 * time.Second, true}, // --time=1
		{90 * time.Second, 90 * time.Second, 22500 * time.Millisecond, true},
		{90 * time.Second, 0, 0, true},
	} {
		got, shrunk := stopMargin(c.margin, c.left)
		if got != c.want || shrunk != c.shrunk {
			t.Errorf("stopMargin(%v, %v) = %v, %v; want %v, %v", c.margin, c.left, got, shrunk, c.want, c.shrunk)
		}
	}
}

// The time each stop leaves: USR1 and the job's own clock the time to the limit, TERM KillWait
// less the round that brought it, INT none; without the fact, none.
func TestStopWindow(t *testing.T) {
	now := time.Now()
	clock := slurmClock{limit: now.Add(2 * time.Minute), killWait: 30 * time.Second}
	for _, c := range []struct {
		sig   string
		clock slurmClock
		want  time.Duration
	}{
		{"SIGUSR1", clock, 2 * time.Minute},
		{"", clock, 2 * time.Minute}, // the job's own clock, an operator's STOP
		{"SIGTERM", clock, 29 * time.Second},
		{"SIGINT", clock, 0},
		{"a signal", clock, 0},
		{"SIGUSR1", slurmClock{killWait: 30 * time.Second}, 0}, // no time limit known
		{"SIGTERM", slurmClock{limit: now.Add(time.Hour)}, 0},  // no KillWait known
		{"SIGUSR1", slurmClock{limit: now.Add(-time.Second)}, 0},
	} {
		if got := stopWindow(c.sig, now, c.clock); got != c.want {
			t.Errorf("stopWindow(%q, %+v) = %v, want %v", c.sig, c.clock, got, c.want)
		}
	}
}

// A chunk fits when its frames left at the rate end within the window less the margin (15 s,
// or a third of a short window).
func TestFits(t *testing.T) {
	for _, c := range []struct {
		left   int
		rate   float64
		window time.Duration
		want   bool
	}{
		{100, 2, 120 * time.Second, true},  // 50 s of 105
		{100, 1, 120 * time.Second, true},  // 100 s of 105
		{110, 1, 120 * time.Second, false}, // 110 s of 105
		{19, 1, 29 * time.Second, true},    // TERM, KillWait 30 s: 19 s of 19.3
		{20, 1, 29 * time.Second, false},
		{0, 0, 0, true}, // nothing left: nothing to lose
		{1, 0, time.Hour, false},
		{1, 100, 0, false},
	} {
		if got := fits(c.left, c.rate, c.window); got != c.want {
			t.Errorf("fits(%d frames, %.0f/s, %v) = %v, want %v", c.left, c.rate, c.window, got, c.want)
		}
	}
}

// The piece in flight and its frames left, from the frames written.
func TestInFlight(t *testing.T) {
	work := []rank.Piece{{Chunk: 1, Owner: 1, Frames: rank.Range{Start: 13, End: 16}}, {Chunk: 2, Owner: 0, Frames: rank.Range{Start: 16, End: 24}}}
	for _, c := range []struct {
		written, k, left int
		ok               bool
	}{
		{0, 0, 3, false}, {2, 0, 1, true}, {3, 1, 8, false}, {4, 1, 7, true}, {10, 1, 1, true}, {11, 0, 0, false}, {12, 0, 0, false},
	} {
		k, left, ok := inFlight(work, c.written)
		if k != c.k || left != c.left || ok != c.ok {
			t.Errorf("inFlight(%d) = %d, %d, %v; want %d, %d, %v", c.written, k, left, ok, c.k, c.left, c.ok)
		}
	}
	chunks := []rank.Range{{Start: 0, End: 8}, {Start: 8, End: 16}, {Start: 16, End: 24}}
	if wholly(work[0], 0, chunks) || !wholly(work[1], 0, chunks) {
		t.Errorf("wholly: a piece sent to rank 1 is not rank 0's whole chunk; chunk 2 is")
	}
}

// finishing is rank 0 of one rank (the single-process Comm) with its control rounds, 4 of the 8
// frames of its one chunk (or of its first part, when shared) written in 4 s, and clock.
func finishing(t *testing.T, sig context.Context, clock slurmClock, shared bool) *shareEncode {
	t.Helper()
	jd := &lustre.JobDir{Path: t.TempDir()}
	if err := jd.WriteAttempt("1 t"); err != nil {
		t.Fatal(err)
	}
	work := []rank.Piece{{Chunk: 0, Frames: rank.Range{Start: 0, End: 8}}}
	if shared {
		work[0].Frames.End = 6 // frames 6 and 7 would come from another rank
	}
	p := Plan{JobDir: jd.Path, AttemptID: "1 t", Frames: rank.Range{Start: 0, End: 8}, Chunks: []rank.Range{{Start: 0, End: 8}}, Work: [][]rank.Piece{work}}
	comm := collective.Single()
	ctl := startControl(sig, comm, job.Default(), &p, jd, Options{}, nil, clock)
	a := &attempt{ctx: sig, comm: comm, plan: p, jd: jd, log: logging.New(io.Discard, logging.Debug)}
	e := &shareEncode{attempt: a, ctl: ctl, work: work}
	end := e.watch()
	t.Cleanup(func() {
		end()
		if err := ctl.leave(nil); err != nil {
			t.Error(err)
		}
	})
	e.t0 = time.Now().Add(-4 * time.Second)
	e.written.Store(4)
	return e
}

// The decision at a stop, and what it does to the frames: a chunk that fits is finished (its
// frames end once it is written), one that does not is discarded at once, as is a shared
// chunk, a stop with no time known, and SIGINT; a later SIGINT ends a finish at once, and the
// finish's time running out ends it too.
func TestStopFinishesTheChunkThatFits(t *testing.T) {
	now := time.Now()
	plenty := slurmClock{limit: now.Add(10 * time.Minute), killWait: 30 * time.Second}
	for _, c := range []struct {
		name   string
		sig    string
		clock  slurmClock
		shared bool
		finish bool
	}{
		{"usr1-fits", "SIGUSR1", plenty, false, true},
		{"own-clock-fits", "", plenty, false, true},
		{"usr1-too-late", "SIGUSR1", slurmClock{limit: now.Add(5 * time.Second)}, false, false},
		{"usr1-no-limit", "SIGUSR1", slurmClock{killWait: 30 * time.Second}, false, false},
		{"term-in-killwait", "SIGTERM", plenty, false, true},
		{"term-killwait-short", "SIGTERM", slurmClock{killWait: 5 * time.Second}, false, false},
		{"term-killwait-unknown", "SIGTERM", slurmClock{limit: now.Add(time.Hour)}, false, false},
		{"int", "SIGINT", plenty, false, false},
		{"shared-chunk", "SIGUSR1", plenty, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := finishing(t, context.Background(), c.clock, c.shared)
			e.askStop(c.sig)
			if e.asked.Err() == nil {
				t.Fatal("the stop was not marked asked")
			}
			if got := e.stop.Err() == nil; got != c.finish {
				t.Fatalf("finishing: %v, want %v", got, c.finish)
			}
			if !c.finish {
				return
			}
			e.counted(3)
			if e.stop.Err() != nil {
				t.Fatal("the frames ended before the chunk's last")
			}
			e.counted(1)
			if e.stop.Err() == nil {
				t.Fatal("the frames did not end at the chunk's last")
			}
		})
	}
	t.Run("later-int", func(t *testing.T) {
		e := finishing(t, context.Background(), plenty, false)
		e.askStop("SIGUSR1")
		e.askStop("SIGUSR1") // the rounds repeat it: nothing changes
		if e.stop.Err() != nil {
			t.Fatal("USR1 with 10 minutes left discarded the chunk")
		}
		e.askStop("SIGINT")
		if e.stop.Err() == nil {
			t.Fatal("a SIGINT after USR1 did not end the frames at once")
		}
	})
	t.Run("time-runs-out", func(t *testing.T) {
		// KillWait 4 s: 3 s after the round, 2 s of it to finish the 4 frames left, which at 1
		// frame/s do not fit; 1 frame left (7 written in 4 s) does, and then never comes.
		e := finishing(t, context.Background(), slurmClock{killWait: 4 * time.Second}, false)
		e.written.Store(7)
		e.askStop("SIGTERM")
		if e.stop.Err() != nil {
			t.Fatal("a frame left at 1.75 frames/s did not fit in 2 s")
		}
		waitDone(t, e.stop, "the finish's time ran out and the frames did not end")
	})
	t.Run("own-signals", func(t *testing.T) {
		// This rank's own signal (main's cancel of its context) is a stop like the rounds', and
		// a later one (main's tell) shortens it.
		base, tell := WithLaterSignals(context.Background())
		sig, cancel := context.WithCancelCause(base)
		e := finishing(t, sig, plenty, false)
		cancel(Signal("SIGUSR1"))
		waitDone(t, e.asked, "the signal never reached the encode")
		if e.stop.Err() != nil {
			t.Fatal("USR1 to this rank with 10 minutes left discarded the chunk")
		}
		tell(Signal("SIGINT"))
		waitDone(t, e.stop, "a later SIGINT did not end the frames")
	})
}

// waitDone waits for ctx, failing with msg after 30 s (a guard, not a clock).
func waitDone(t *testing.T, ctx context.Context, msg string) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(30 * time.Second):
		t.Fatal(msg)
	}
}
