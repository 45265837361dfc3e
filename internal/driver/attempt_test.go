package driver

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/join"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// Run's phases on one rank (the single-process Comm): the agreement with a setup error and
// with a signal, and the end of an attempt whose ranks report a real error and another's.

// worker is an attempt of the single rank in its worker role alone (no coordinator): the
// agreement's side every rank but 0 takes, logging into log.
func worker(ctx context.Context, cfg job.Config, log *bytes.Buffer) *attempt {
	a := newAttempt(ctx, collective.Single(), cfg, Options{Log: logging.New(log, logging.Info)})
	a.coord = nil
	close(a.castDone)
	return a
}

// A rank whose settings are not rank 0's fails the agreement with its own error, which it
// printed (Reported: main does not print it again); the job's kind is its.
func TestAgreePhaseSetupError(t *testing.T) {
	cfg := job.Default()
	var log bytes.Buffer
	a := worker(context.Background(), cfg, &log)
	a.plan.Settings = map[string]string{"chunk_frames": "elsewhere"}
	err := a.agree()
	var printed *Reported
	if !errors.As(err, &printed) || fault.KindOf(err) != fault.Usage {
		t.Fatalf("agree: %v (%T), want the rank's usage error, reported", err, err)
	}
	if !strings.Contains(err.Error(), "runs another job than rank 0") || !strings.Contains(log.String(), err.Error()) {
		t.Errorf("error %q, log %q: want the settings' error, said once in the log", err, log.String())
	}
	if got := ExitStatus(context.Background(), err); got != fault.ExitUsage {
		t.Errorf("exit status %d, want %d", got, fault.ExitUsage)
	}
}

// A signal before every rank is ready stops the job, whatever failed after it: rank 0 says the
// stop (Remote: main does not say it again), and a SIGUSR1 with no chunk done is not requeued.
func TestAgreePhaseSignal(t *testing.T) {
	for _, role := range []string{"worker", "coordinator"} {
		t.Run(role, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(Signal("SIGUSR1"))
			var log bytes.Buffer
			a := worker(ctx, job.Default(), &log)
			if role == "coordinator" {
				a.coord = &coordinator{attempt: a} // no run record, no job folder: a stop in the plan's checks
			} else {
				a.plan.Settings = map[string]string{"chunk_frames": "elsewhere"} // its failure after the signal
			}
			err := a.agree()
			var st *Stopped
			if !errors.As(err, &st) || !errors.Is(err, ErrCheckpointed) {
				t.Fatalf("agree: %v (%T), want a stop", err, err)
			}
			if !strings.HasPrefix(st.Msg, "stopped by SIGUSR1 (rank 0): nothing was written to the output path; not requeued") {
				t.Errorf("stop %q", st.Msg)
			}
			if st.Next != NoRequeue || !st.Remote {
				t.Errorf("next %v, remote %v: want NoRequeue, said here", st.Next, st.Remote)
			}
			if said := strings.Contains(log.String(), st.Msg); said != (role == "coordinator") {
				t.Errorf("log %q: rank 0 alone says the stop", log.String())
			}
			if strings.Contains(log.String(), "runs another job") {
				t.Errorf("log %q: a failure after the signal is not said", log.String())
			}
		})
	}
}

// The agreement's vector: a signal names the lowest rank signalled and comes before any
// failure; a failure alone gives its kind.
func TestAgreeVector(t *testing.T) {
	v := agreeVector(4, 2, fault.AsInput(errors.New("x")), "SIGTERM")
	w := agreeVector(4, 3, nil, "SIGUSR1")
	for i := range v {
		v[i] = max(v[i], w[i])
	}
	if stop, _, _ := readAgreement(v); stop != "rank 2: SIGTERM" {
		t.Errorf("stop %q, want rank 2's", stop)
	}
	if stop, failed, kind := readAgreement(agreeVector(4, 1, fault.AsInput(errors.New("x")), "")); stop != "" || !failed || kind != fault.Input {
		t.Errorf("stop %q, failed %v, kind %v: want an input failure", stop, failed, kind)
	}
	if stop, failed, _ := readAgreement(agreeVector(4, 1, nil, "")); stop != "" || failed {
		t.Errorf("stop %q, failed %v: want neither", stop, failed)
	}
}

// Rank 0 takes a real error for the job's cause, not a rank's report of another's failure,
// whichever came first; a remote error alone is still a cause (the job failed).
func TestCollectRealCause(t *testing.T) {
	results := func(rs ...Result) [][]byte {
		var all [][]byte
		for i := range rs {
			all = append(all, encodeResult(&rs[i]))
		}
		return all
	}
	remote := &RemoteError{Kind: fault.Internal}
	real := Result{Rank: 2, Err: "chunk 3: decoding failed", Kind: fault.Input}
	g, err := collect(results(
		Result{Rank: 0, Err: remote.Error(), Kind: fault.Internal, Remote: true},
		Result{Rank: 1, Stopped: true},
		real,
		Result{Rank: 3, Err: remote.Error(), Kind: fault.Internal, Remote: true},
	))
	if err != nil {
		t.Fatal(err)
	}
	if g.first == nil || g.first.Rank != 2 || !g.stopped || len(g.stats) != 4 {
		t.Fatalf("collect: first %+v, stopped %v, %d stats", g.first, g.stopped, len(g.stats))
	}
	if c := g.first.cause(); c.Err != "rank 2: chunk 3: decoding failed" || c.Kind != fault.Input {
		t.Errorf("cause %+v", c)
	}
	// A chunk's error names its rank itself (chunkError, Result.Named): not named twice.
	var named Result
	(&attempt{plan: Plan{Image: true}, me: 2}).account(&named, &chunkError{rank: 2, ranks: 4, chunk: 3, err: fault.AsInput(errors.New("decoding failed"))}, time.Now(), rank.GPUStats{})
	if c := named.cause(); !named.Named || c.Err != "rank 2, chunk 3: decoding failed" || c.Kind != fault.Input {
		t.Errorf("a chunk's error on rank 2 of 4: cause %+v (named %v)", c, named.Named)
	}
	g, _ = collect(results(Result{Rank: 0}, Result{Rank: 1, Err: remote.Error(), Kind: fault.Internal, Remote: true}))
	if g.first == nil || g.first.Rank != 1 {
		t.Errorf("a remote error alone: first %+v, want rank 1's", g.first)
	}
	if _, err := collect([][]byte{[]byte("{")}); fault.KindOf(err) != fault.Internal {
		t.Errorf("an undecodable result: %v", err)
	}
}

// The end phases of an image on one rank: rank 0 gathers its failed result, says the error once
// and returns it, reported, with its kind; the run report records it.
func TestGatherJoinEnd(t *testing.T) {
	dir := t.TempDir()
	cfg := job.Default()
	cfg.TargetPath, cfg.OutputPath = filepath.Join(dir, "target.png"), filepath.Join(dir, "out.png")
	var log bytes.Buffer
	a := newAttempt(context.Background(), collective.Single(), cfg, Options{Log: logging.New(&log, logging.Info)})
	close(a.castDone)
	c := a.coord
	c.plan.Image = true
	c.rec = &runRecord{cfg: cfg, ranks: 1, start: time.Now(), plan: &c.plan}
	c.pj = join.Start(context.Background(), a.comm, join.Output{Image: true, Path: cfg.OutputPath}, "")
	all, err := a.gather(Result{Rank: 0, Err: "image: no face in the target", Kind: fault.Input})
	if err != nil {
		t.Fatal(err)
	}
	final, err := a.join(all)
	if err != nil {
		t.Fatal(err)
	}
	if !final.Printed || final.Err != "image: no face in the target" {
		t.Fatalf("outcome %+v, want the rank's error, said", final)
	}
	out, err := a.end(final)
	var printed *Reported
	if out != "" || !errors.As(err, &printed) || fault.KindOf(err) != fault.Input || err.Error() != "image: no face in the target" {
		t.Fatalf("end: %q, %v (%T)", out, err, err)
	}
	if n := strings.Count(log.String(), "no face in the target"); n != 1 {
		t.Errorf("log %q: the error said %d times, want once", log.String(), n)
	}
	rep, ok, rerr := report.Read(cfg.OutputPath)
	if rerr != nil || !ok || rep.Outcome != lustre.Failed || rep.Error != "image: no face in the target" {
		t.Errorf("run report: %+v %v %v", rep, ok, rerr)
	}
}
