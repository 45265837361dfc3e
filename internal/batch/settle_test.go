package batch

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/testenv"

	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
)

// appendFor appends a byte to path every 100 ms for d, then stops: a copy still arriving.
func appendFor(t *testing.T, path string, d time.Duration) <-chan time.Time {
	t.Helper()
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	last := make(chan time.Time, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			last <- time.Time{}
			return
		}
		defer f.Close()
		var at time.Time
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			f.Write([]byte("x"))
			at = time.Now()
		}
		last <- at
	}()
	return last
}

func settleBatch(settle int) (*batch, *bytes.Buffer) {
	var log bytes.Buffer
	cfg := job.Default()
	cfg.SettleTime = settle
	return &batch{cfg: cfg, opt: Options{Log: logging.New(&log, logging.Info), WaitSettling: true}}, &log
}

// A run by hand waits for a target still being written: it goes on only once the file has kept
// its size and time for settle_time after the last write, and says that it waits.
func TestSettleWaitWaitsForTheLastWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "arriving.mp4")
	last := appendFor(t, path, 1500*time.Millisecond)
	b, log := settleBatch(1)
	st, _ := os.Stat(path)
	state, why := b.settleWait(context.Background(), "batch [1/1] arriving.mp4", path, st, time.Since(st.ModTime()))
	done := time.Now()
	lastWrite := <-last
	if state != "" {
		t.Fatalf("settleWait: %s (%s), want settled", state, why)
	}
	if done.Sub(lastWrite) < time.Second {
		t.Errorf("went on %v after the last write, before settle_time (1 s)", done.Sub(lastWrite))
	}
	if !strings.Contains(log.String(), "waiting until its size and time stay unchanged for 1 s (at most 10 s)") || !strings.Contains(log.String(), "settled after") {
		t.Errorf("the log does not say it waits and settled:\n%s", log.String())
	}
}

// A file that keeps changing is left for the next run at the bound; one that goes is missing;
// a stop ends the wait at once.
func TestSettleWaitEnds(t *testing.T) {
	testenv.Full(t, "waits out the 2 s settle bound")
	defer func(f int) { settleWaitFactor = f }(settleWaitFactor)
	settleWaitFactor = 2
	dir := t.TempDir()
	path := filepath.Join(dir, "growing.mp4")
	last := appendFor(t, path, 3*time.Second)
	b, _ := settleBatch(1)
	st, _ := os.Stat(path)
	start := time.Now()
	state, why := b.settleWait(context.Background(), "t", path, st, 0)
	if took := time.Since(start); state != Settling || !strings.Contains(why, "still changing after 2 s (2 × settle_time): left for the next run") || took > 2500*time.Millisecond {
		t.Errorf("a file still growing: %q (%s) after %v, want settling at the 2 s bound", state, why, took)
	}
	<-last

	gone := filepath.Join(dir, "gone.mp4")
	os.WriteFile(gone, []byte("x"), 0o644)
	st, _ = os.Stat(gone)
	os.Remove(gone)
	if state, why := b.settleWait(context.Background(), "t", gone, st, 0); state != Missing {
		t.Errorf("a file removed while it settled: %q (%s), want missing", state, why)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st, _ = os.Stat(path)
	if state, why := b.settleWait(ctx, "t", path, st, 0); state != Settling || !strings.Contains(why, "stopped") {
		t.Errorf("a stop while it settled: %q (%s), want settling", state, why)
	}
}
