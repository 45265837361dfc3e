package driver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// The decision every rank exits by: reason × progress × restarts × cap.
func TestDecide(t *testing.T) {
	for _, c := range []struct {
		reason                   string
		newChunks, restarts, max int
		want                     Next
		why                      string
	}{
		// Slurm's warning or the job's own clock, with progress and restarts left: requeue.
		{"rank 0: SIGUSR1", 3, 0, 10, Requeue, ""},
		{"rank 5: SIGUSR1", 1, 9, 10, Requeue, ""},
		{"deadline", 2, 0, 1, Requeue, ""},
		// No new chunk: a requeue would stop the same way.
		{"rank 1: SIGUSR1", 0, 0, 10, NoRequeue, "finished no new chunk"},
		{"deadline", 0, 3, 10, NoRequeue, "lower chunk_frames or stop_margin"},
		// The cap reached (or zero): not requeued, whatever the progress.
		{"rank 0: SIGUSR1", 4, 10, 10, NoRequeue, "already restarted 10 time(s) (max_restarts 10)"},
		{"deadline", 4, 12, 10, NoRequeue, "max_restarts 10"},
		{"rank 0: SIGUSR1", 4, 0, 0, NoRequeue, "requeues are off (max_restarts 0)"},
		// SIGTERM and SIGINT cancel, whatever the progress and the restarts.
		{"rank 0: SIGTERM", 5, 0, 10, Cancelled, ""},
		{"rank 3: SIGTERM", 0, 10, 10, Cancelled, ""},
		{"rank 0: SIGINT", 5, 0, 10, Cancelled, ""},
		// A reason this program did not write is never a reason to requeue.
		{"", 5, 0, 10, Cancelled, ""},
		{"rank 0: a signal", 5, 0, 10, Cancelled, ""},
		{"rank 0: SIGUSR1 and more", 5, 0, 10, Cancelled, ""},
	} {
		next, why := Decide(c.reason, c.newChunks, false, c.restarts, c.max)
		if next != c.want || !strings.Contains(why, c.why) || (c.why == "") != (why == "") {
			t.Errorf("Decide(%q, new %d, restarts %d, max %d) = %v %q; want %v %q", c.reason, c.newChunks, c.restarts, c.max, next, why, c.want, c.why)
		}
	}
	// An attempt that saved rank 0's voice analysis made progress with no chunk: a warning
	// requeues it while restarts are left; the cap and the cancelling signals hold as ever.
	for _, c := range []struct {
		reason        string
		restarts, max int
		want          Next
		why           string
	}{
		{"rank 0: SIGUSR1", 0, 10, Requeue, ""},
		{"deadline", 2, 3, Requeue, ""},
		{"rank 0: SIGUSR1", 3, 3, NoRequeue, "already restarted 3 time(s)"},
		{"rank 0: SIGTERM", 0, 10, Cancelled, ""},
	} {
		next, why := Decide(c.reason, 0, true, c.restarts, c.max)
		if next != c.want || !strings.Contains(why, c.why) || (c.why == "") != (why == "") {
			t.Errorf("Decide(%q, new 0, voice kept, restarts %d, max %d) = %v %q; want %v %q", c.reason, c.restarts, c.max, next, why, c.want, c.why)
		}
	}
}

// The line rank 0 prints says what was kept and what happens next, and carries the decision.
func TestStopResultSaysWhatHappensNext(t *testing.T) {
	cfg := job.Default()
	t.Setenv("SLURM_JOB_ID", "42")
	t.Setenv("SLURM_RESTART_COUNT", "2")
	for _, c := range []struct {
		reason    string
		margin    time.Duration
		newChunks int
		next      Next
		want      []string
	}{
		{"rank 1: SIGUSR1", 0, 3, Requeue, []string{"stopped by SIGUSR1 (rank 1): 6 of 10 chunk(s) (48 of 80 frames) are checkpointed in J, 3 of them finished in this attempt",
			"the batch script requeues the job (restart 3 of at most 10); by hand: rerun the same command"}},
		{"deadline", 90 * time.Second, 0, NoRequeue, []string{"stopped by its own clock (stop_margin 90 s before the Slurm job's time limit)", "not requeued: this attempt finished no new chunk", "--time", "chunk_frames", "by hand"}},
		// --time=1: the margin shrunk to a quarter of the minute is the one said.
		{"deadline", 14 * time.Second, 2, Requeue, []string{"stopped by its own clock (14s before the Slurm job's time limit: stop_margin 90 s, shrunk to fit the job's time)"}},
		{"rank 0: SIGTERM", 0, 3, Cancelled, []string{"cancelled by SIGTERM (rank 0)", "if Slurm requeues the job", "rerun the same command to resume"}},
		{"rank 0: SIGINT", 0, 3, Cancelled, []string{"cancelled by SIGINT (rank 0)", "; rerun the same command to resume"}},
	} {
		r := stopResult(cfg, c.margin, c.reason, kept{c.newChunks, 6, 10, 48, 80, "J", false, false, ""})
		if !r.Stopped || r.Next != c.next || r.StopReason != c.reason || r.NewChunks != c.newChunks {
			t.Errorf("%s: result %+v, want stopped, %v", c.reason, r, c.next)
		}
		for _, w := range c.want {
			if !strings.Contains(r.Err, w) {
				t.Errorf("%s: %q does not say %q", c.reason, r.Err, w)
			}
		}
		if strings.Contains(r.Err, "resubmit") || strings.Contains(r.Err, "\n") {
			t.Errorf("%s: %q", c.reason, r.Err)
		}
	}
}

// The first reason written to STOP wins, whichever ranks race to write; a rank of an older
// attempt writes nothing.
func TestWriteStopFirstWins(t *testing.T) {
	jd := &lustre.JobDir{Path: t.TempDir()}
	if err := os.WriteFile(jd.Attempt(), []byte("2"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeStop(jd, "1", "rank 9: SIGUSR1") // a straggler of attempt 1
	if _, err := os.Stat(jd.Stop()); err == nil {
		t.Fatal("a rank of an older attempt wrote STOP")
	}
	writeStop(jd, "2", "rank 3: SIGUSR1")
	var wg sync.WaitGroup
	for _, r := range []string{"rank 0: SIGTERM", "deadline", "rank 1: SIGINT"} {
		wg.Add(1)
		go func() { defer wg.Done(); writeStop(jd, "2", r) }()
	}
	wg.Wait()
	if got := stopReason(context.Background(), jd); got != "rank 3: SIGUSR1" {
		t.Errorf("reason %q, want the first one", got)
	}
	if left, _ := filepath.Glob(filepath.Join(jd.Path, ".STOP.tmp-*")); len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
}

// Without STOP, rank 0's own signal (the cause main cancelled with) is the reason.
func TestStopReasonFallsBackToRank0Signal(t *testing.T) {
	jd := &lustre.JobDir{Path: t.TempDir()}
	ctx, cancel := context.WithCancelCause(context.Background())
	if got := stopReason(ctx, jd); got != "" {
		t.Errorf("no stop: reason %q", got)
	}
	cancel(Signal("SIGTERM"))
	if got := stopReason(ctx, jd); got != "rank 0: SIGTERM" {
		t.Errorf("reason %q, want rank 0: SIGTERM", got)
	}
}

// The job's own clock writes STOP with reason deadline when it passes, and nothing when the
// attempt ends first.
func TestWatchDeadline(t *testing.T) {
	jd := &lustre.JobDir{Path: t.TempDir()}
	os.WriteFile(jd.Attempt(), []byte("1"), 0o644)
	var log strings.Builder
	stop := watchDeadline(context.Background(), jd, "1", time.Now().Add(5*time.Second), logging.New(&log, logging.Info))
	stop()
	if _, err := os.Stat(jd.Stop()); err == nil {
		t.Fatal("STOP written although the attempt ended before the deadline")
	}
	stop = watchDeadline(context.Background(), jd, "1", time.Now().Add(100*time.Millisecond), logging.New(&log, logging.Info))
	defer stop()
	for start := time.Now(); time.Since(start) < 5*time.Second; time.Sleep(20 * time.Millisecond) {
		if got := stopReason(context.Background(), jd); got == ReasonDeadline {
			return
		}
	}
	t.Fatalf("no STOP with reason deadline after the deadline passed; log:\n%s", log.String())
}
