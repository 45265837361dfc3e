package driver

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// The control rounds on one rank (the single-process Comm; several ranks run under mpirun in
// cmd/facefusion/e2e): each way the job is stopped reaches the encode, rank 0 writes the job's
// progress file, and the rounds end with no request in flight.

// controlled starts one rank's rounds over a job folder of attempt "1 t" and its encode, as
// encodeShare does; the encode has counted 5 frames.
func controlled(t *testing.T, signal context.Context) (*control, context.Context, *lustre.JobDir, collective.Comm) {
	t.Helper()
	jd := &lustre.JobDir{Path: t.TempDir()}
	if err := jd.WriteAttempt("1 t"); err != nil {
		t.Fatal(err)
	}
	p := &Plan{JobDir: jd.Path, AttemptID: "1 t", Frames: rank.Range{Start: 0, End: 8},
		Chunks: []rank.Range{{Start: 0, End: 8}}, Work: [][]rank.Piece{{{Chunk: 0, Frames: rank.Range{Start: 0, End: 8}}}}}
	comm := collective.Single()
	c := startControl(signal, comm, job.Default(), p, jd, Options{}, nil, slurmClock{})
	ctx, cancel := context.WithCancelCause(context.Background())
	t.Cleanup(func() { cancel(nil) })
	c.encode(cancel).Add(5)
	return c, ctx, jd, comm
}

// stopped waits for the rounds to cancel the encode (the test's guard: a hang fails it, not a
// clock) and returns the cause.
func stopped(t *testing.T, ctx context.Context) error {
	t.Helper()
	guard := time.NewTimer(60 * time.Second)
	defer guard.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-guard.C:
		t.Fatal("the rounds never stopped the encode")
	}
	return nil
}

// end leaves the rounds as Run does and checks that they left nothing in flight and that the
// progress file holds the encode's frames.
func end(t *testing.T, c *control, comm collective.Comm, jd *lustre.JobDir, err error) {
	t.Helper()
	if err := c.leave(err); err != nil {
		t.Fatal(err)
	}
	if err := comm.Finalize(); err != nil {
		t.Fatalf("Finalize after the rounds: %v", err)
	}
	frames, ok, err := jd.ReadProgress()
	if !ok || err != nil || len(frames) != 1 || frames[0] != 5 {
		t.Fatalf("progress file: %v %v %v, want [5]", frames, ok, err)
	}
}

func TestControlStopFile(t *testing.T) {
	t.Parallel()
	c, ctx, jd, comm := controlled(t, context.Background())
	// Written by a rank's signal, the job's own clock or an operator: rank 0 finds it.
	writeStop(jd, "1 t", "deadline")
	if cause := stopped(t, ctx); cause != errStopRequested {
		t.Fatalf("cause %v, want %v", cause, errStopRequested)
	}
	end(t, c, comm, jd, nil)
	if got := stopReason(context.Background(), jd); got != ReasonDeadline {
		t.Errorf("reason %q, want the one in STOP", got)
	}
}

func TestControlSignal(t *testing.T) {
	t.Parallel()
	signal, send := context.WithCancelCause(context.Background())
	c, ctx, jd, comm := controlled(t, signal)
	send(Signal("SIGUSR1"))
	if cause := stopped(t, ctx); cause != errStopRequested {
		t.Fatalf("cause %v, want %v", cause, errStopRequested)
	}
	end(t, c, comm, jd, nil)
	// The signal's name came through the round, and rank 0 wrote it down before deciding.
	if got := stopReason(context.Background(), jd); got != "rank 0: SIGUSR1" {
		t.Errorf("reason %q, want rank 0: SIGUSR1", got)
	}
}

func TestControlTakeover(t *testing.T) {
	t.Parallel()
	c, ctx, jd, comm := controlled(t, context.Background())
	jd.WriteAttempt("2 u")
	cause := stopped(t, ctx)
	if cause == nil || !strings.Contains(cause.Error(), "was taken over by attempt 2") {
		t.Fatalf("cause %v, want a takeover by attempt 2", cause)
	}
	end(t, c, comm, jd, cause)
	if _, err := os.Stat(jd.Stop()); err == nil {
		t.Error("a takeover wrote STOP into the newer attempt's folder")
	}
}

// A rank's failure is the job's decision, reported to the others as another rank's error; a
// rank that finishes ends the rounds at once.
func TestControlFailureAndEnd(t *testing.T) {
	t.Parallel()
	c, ctx, jd, comm := controlled(t, context.Background())
	end(t, c, comm, jd, errors.New("chunk 0: ffmpeg exited 1"))
	var remote *RemoteError
	if !errors.As(c.cause, &remote) {
		t.Errorf("a failure's decision: %v, want a RemoteError", c.cause)
	}
	if ctx.Err() != nil {
		t.Errorf("the rounds cancelled an encode that had ended: %v", context.Cause(ctx))
	}
	if c.leave(nil) != nil {
		t.Error("a second leave failed")
	}
	if nilCtl := (*control)(nil); nilCtl.leave(nil) != nil { // an image has no rounds
		t.Error("leave of no rounds failed")
	}
}

func TestPackName(t *testing.T) {
	for _, name := range []string{"SIGUSR1", "SIGTERM", "SIGINT", "a signal"} {
		if v := packName(name); v <= 0 || unpackName(v) != name {
			t.Errorf("%q packs to %d, unpacks to %q", name, v, unpackName(v))
		}
	}
	if got := unpackName(packName("")); got != "a signal" {
		t.Errorf("no name: %q", got)
	}
}

// An image's rounds carry a signal to rank 0's image, and name it, without touching a file.
func TestControlImage(t *testing.T) {
	t.Parallel()
	signal, send := context.WithCancelCause(context.Background())
	dir := t.TempDir()
	comm := collective.Single()
	c := startControl(signal, comm, job.Default(), &Plan{Image: true}, &lustre.JobDir{Path: dir}, Options{}, nil, slurmClock{})
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	c.encode(cancel)
	send(Signal("SIGTERM"))
	if cause := stopped(t, ctx); cause != errStopRequested {
		t.Fatalf("cause %v, want %v", cause, errStopRequested)
	}
	if err := c.leave(nil); err != nil {
		t.Fatal(err)
	}
	if got := c.stopReason(); got != "rank 0: SIGTERM" {
		t.Errorf("reason %q, want rank 0: SIGTERM", got)
	}
	if err := comm.Finalize(); err != nil {
		t.Fatalf("Finalize after the rounds: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("an image's rounds wrote %v", left)
	}
}

// A signal before every rank is ready is the job's stop, whatever failed after it.
func TestAgreeSignal(t *testing.T) {
	signal, send := context.WithCancelCause(context.Background())
	if reason, err := agree(signal, collective.Single(), errors.New("x")); reason != "" || err == nil {
		t.Fatalf("no signal: %q %v, want the error", reason, err)
	}
	send(Signal("SIGINT"))
	if reason, err := agree(signal, collective.Single(), errors.New("ffprobe stopped: context canceled")); reason != "rank 0: SIGINT" || err != nil {
		t.Fatalf("after SIGINT: %q %v, want rank 0: SIGINT and no error", reason, err)
	}
}
