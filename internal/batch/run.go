package batch

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/driver"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/metrics"
	"github.com/facefusion-hpc/facefusion/internal/outpath"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
	"github.com/facefusion-hpc/facefusion/internal/slurm"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// The states of an entry in a run's summary.
const (
	Done        = "done"         // processed in this run; its output is in place
	AlreadyDone = "already-done" // its contents were done before (a done record, or its output's run report): skipped
	Settling    = "settling"     // modified within settle_time: left for the next run
	Busy        = "busy"         // another run holds its job folder: left to it
	Failed      = "failed"       // failed in this run; retried by a later run until quarantined
	Quarantined = "quarantined"  // failed as bad input, or max_failures times: not tried again (the file is left where it is)
	Missing     = "missing"      // in the frozen list, but gone from the file system
	NotRun      = "not-run"      // the batch stopped before it
	Skipped     = "skipped"      // a name in the inbox that is no file (a link to nothing, a link loop, a FIFO): Reason says which
	Stopped     = "stopped"      // stopped in its run (finished chunks checkpointed): the next run resumes it
)

// States are the states in the order the summary counts them.
var States = []string{Done, AlreadyDone, Settling, Busy, Failed, Quarantined, Missing, Skipped, Stopped, NotRun}

// Result is one entry's line of the summary.
type Result struct {
	Entry
	Key        string  `json:"key,omitempty"`
	State      string  `json:"state"`
	Failures   int     `json:"failures,omitempty"`    // failed runs recorded for its contents, this one included
	ExitStatus int     `json:"exit_status,omitempty"` // of its run, when it failed
	Reason     string  `json:"reason,omitempty"`
	Report     string  `json:"report,omitempty"` // its run report, when it ran to the end
	Seconds    float64 `json:"seconds,omitempty"`
}

// Summary is a batch run's report: every entry it listed (an array task: every entry it took)
// and what became of it.
type Summary struct {
	Version       int            `json:"version"`
	Outcome       string         `json:"outcome"` // all done, some failed, nothing to do, stopped, or the error that ended it
	ExitStatus    int            `json:"exit_status"`
	Started       time.Time      `json:"started"`
	Finished      time.Time      `json:"finished"`
	Host          string         `json:"host"`
	Ranks         int            `json:"ranks"`
	Slurm         slurm.Env      `json:"slurm"`
	BatchDir      string         `json:"batch_dir"`
	List          string         `json:"list,omitempty"` // the frozen list, inside a Slurm job
	TargetPattern string         `json:"target_pattern"`
	SourcePattern string         `json:"source_pattern,omitempty"`
	OutputPattern string         `json:"output_pattern"`
	Counts        map[string]int `json:"counts"`
	Entries       []Result       `json:"entries"`
	// Path is where the summary is written: report_path, else the batch folder's report.
	Path string `json:"-"`
	// inDir says Path is in the batch folder, and dirOK that the folder passed its check
	// (Dir.Make): a folder refused as another user's, or others', receives nothing.
	inDir, dirOK bool
	// log says why the summary or the metrics file could not be written.
	log *logging.Logger
}

// Outcomes of a batch, as the summary and the last log line say them.
const (
	OutcomeAllDone    = "all done"
	OutcomeSomeFailed = "some failed"
	OutcomeNothing    = "nothing to do"
	OutcomeStopped    = "stopped"
)

// SomeFailed is the batch's error when it ran to its end but a target failed: each failure is
// recorded in the batch folder and retried by the next run (until quarantined). With
// fail_on_quarantine, quarantined targets fail the batch too.
type SomeFailed struct {
	Failed      int
	Quarantined int // counted only with fail_on_quarantine
	Report      string
}

func (e *SomeFailed) Error() string {
	if e.Quarantined > 0 {
		return fmt.Sprintf("%d target(s) failed and %d are quarantined in this batch run (fail_on_quarantine: every target must end done): see %s", e.Failed, e.Quarantined, e.Report)
	}
	return fmt.Sprintf("%d target(s) failed in this batch run (recorded in the batch folder; a later run retries those not quarantined): see %s", e.Failed, e.Report)
}

// Options are what the command gives a batch besides its config.
type Options struct {
	Log      *logging.Logger
	Driver   driver.Options  // for each entry's run (SkipDone is set by the batch)
	ExitCode func(error) int // the process's exit code for an entry's error (cmd/facefusion's table)
	// WaitSettling: the run was started by hand, so a target still settling is waited for
	// (settleWait) instead of left for the next run, which a scheduled run has.
	WaitSettling bool
}

// decision is rank 0's word to every rank about the next entry: run Entry, or the batch ends
// (Last), and how.
type decision struct {
	Entry Entry
	Last  bool
	// How the batch ended, for the other ranks to end the same way (one exit code).
	Kind    fault.Kind  `json:",omitempty"`
	Err     string      `json:",omitempty"`
	Stopped bool        `json:",omitempty"`
	Next    driver.Next `json:",omitempty"`
	Failed  int         `json:",omitempty"`
	Quar    int         `json:",omitempty"`
	Report  string      `json:",omitempty"`
}

// Run runs the batch cfg describes on every rank of comm (all must call it). Rank 0 expands
// (or reads the frozen) list and decides entry by entry whether it runs (in a job array, it
// pulls the entries no task finished or holds, one at a time: Claims); each run is one
// driver.Run over every rank, with its own job folder and fingerprint, so a requeued batch
// resumes the target it stopped in and skips the finished.
func Run(ctx context.Context, comm collective.Comm, cfg job.Config, opt Options) (*Summary, error) {
	if comm.Rank() != 0 {
		return nil, follow(ctx, comm, cfg, opt)
	}
	b := &batch{cfg: cfg, opt: opt, comm: comm, dir: DirFor(cfg), failedNow: map[string]failedNow{}}
	if cfg.MetricsPath != "" { // each target's run writes the file, with the batch's figures
		b.opt.Driver.ExtraMetrics = func() []*dto.MetricFamily { return b.sum.families(cfg, -1) }
	}
	host, _ := os.Hostname()
	b.sum = &Summary{Version: 1, Started: time.Now().UTC(), Host: host, Ranks: comm.Size(), Slurm: slurm.FromEnv(),
		BatchDir: b.dir.Path, Path: summaryPath(cfg, b.dir), TargetPattern: cfg.TargetPattern, SourcePattern: cfg.SourcePattern, OutputPattern: cfg.OutputPattern,
		inDir: cfg.ReportPath == "", log: opt.Log}
	err := b.run(ctx)
	last := decision{Last: true}
	var stopped *driver.Stopped
	var some *SomeFailed
	switch {
	case errors.As(err, &stopped):
		last.Stopped, last.Next, last.Err = true, stopped.Next, stopped.Msg
	case errors.As(err, &some):
		last.Failed, last.Quar, last.Report = some.Failed, some.Quarantined, some.Report
	case err != nil:
		last.Kind, last.Err = fault.KindOf(err), err.Error()
	}
	if berr := b.tell(last); berr != nil && err == nil {
		err = berr
	}
	return b.sum, err
}

type batch struct {
	cfg       job.Config
	opt       Options
	comm      collective.Comm
	dir       Dir
	sum       *Summary
	progress  int                  // entries done in this run (a stop after some is worth a requeue)
	failedNow map[string]failedNow // keys that failed in this run
	metricsAt time.Time            // the batch's last write of the metrics file
}

// failedNow is a target that failed in this run, and its state (failed, or quarantined).
type failedNow struct{ target, state string }

// tell broadcasts rank 0's decision.
func (b *batch) tell(d decision) error {
	data, _ := json.Marshal(&d)
	if _, err := collective.BcastBytes(b.comm, 0, data); err != nil {
		return fault.AsInternal(fmt.Errorf("broadcasting the batch's next entry: %w", err))
	}
	return nil
}

// follow is a non-zero rank's batch: run what rank 0 decides, until it says the batch ended.
func follow(ctx context.Context, comm collective.Comm, cfg job.Config, opt Options) error {
	for {
		data, err := collective.BcastBytes(comm, 0, nil)
		if err != nil {
			return fault.AsInternal(fmt.Errorf("receiving the batch's next entry: %w", err))
		}
		var d decision
		if err := json.Unmarshal(data, &d); err != nil {
			return fault.AsInternal(fmt.Errorf("decoding the batch's next entry: %w", err))
		}
		if d.Last {
			switch {
			case d.Stopped:
				return &driver.Stopped{Msg: d.Err, Remote: true, Next: d.Next}
			case d.Failed > 0 || d.Quar > 0:
				return &SomeFailed{Failed: d.Failed, Quarantined: d.Quar, Report: d.Report}
			case d.Err != "":
				return &driver.RemoteError{Kind: d.Kind}
			}
			return nil
		}
		_, err = driver.Run(ctx, comm, entryConfig(cfg, d.Entry), runOptions(opt))
		var stopped *driver.Stopped
		if errors.As(err, &stopped) {
			// Rank 0 decides the batch's stop (and tells it with Last); wait for that word.
			continue
		}
	}
}

// entryConfig is the job of one entry: the batch's settings with the entry's paths. A job_dir
// given to the batch is a folder for every entry's job folder, each named after its output and
// a short hash of the output's path: outputs of one name in two folders (one target with
// several sources) must not share a job folder.
func entryConfig(cfg job.Config, e Entry) job.Config {
	c := cfg
	c.Batch = job.Batch{}
	c.ReportPath = "" // each target's report goes beside its output; report_path is the batch's summary
	c.SourcePaths, c.TargetPath, c.OutputPath = e.Sources, e.Target, e.Output
	if cfg.JobDir != "" {
		sum := sha256.Sum256([]byte(filepath.Clean(e.Output)))
		c.JobDir = filepath.Join(cfg.JobDir, fmt.Sprintf("%s-%x.job", filepath.Base(e.Output), sum[:4]))
	}
	return c
}

func runOptions(opt Options) driver.Options {
	o := opt.Driver
	o.SkipDone = true
	return o
}

func (b *batch) run(ctx context.Context) error {
	log := b.opt.Log
	if err := b.dir.Make(); err != nil {
		return fault.AsUsage(err)
	}
	b.sum.dirOK = true
	expand := func() ([]Entry, error) { return Expand(b.cfg) }
	var entries []Entry
	var claims *Claims
	var err error
	id := listID(b.sum.Slurm)
	switch {
	case id != "":
		entries, b.sum.List, err = b.dir.Frozen(id, b.cfg, expand)
	default:
		entries, err = expand()
	}
	if err != nil {
		return fault.AsUsage(err)
	}
	if err := checkRecords(b.cfg, b.sum.Path, entries); err != nil {
		return fault.AsUsage(err)
	}
	pos, count, ok, err := slurm.ArrayPosition()
	if err != nil {
		return fault.AsUsage(err)
	}
	if ok && id != "" {
		if claims, err = b.dir.Claims(id, log); err != nil {
			return fault.AsUsage(err)
		}
		free, held := claims.Pending(len(entries))
		log.Infof("batch: array task %d of %d pulls from the %d entries in %s: %d pending, %d running in other tasks, %d finished", pos+1, count, len(entries), b.sum.List, free, held, len(entries)-free-held)
	} else {
		log.Infof("batch: %d entries (%s × %s)", len(entries), orAll(b.cfg.SourcePattern), b.cfg.TargetPattern)
		b.sum.Entries = make([]Result, len(entries))
		for i, e := range entries {
			b.sum.Entries[i] = Result{Entry: e, State: NotRun}
		}
	}
	b.sum.save()
	if claims != nil {
		err = b.pull(ctx, entries, claims)
	} else {
		for i := range entries {
			if err = b.step(ctx, &b.sum.Entries[i], i, len(entries)); err != nil {
				break
			}
		}
	}
	if err != nil {
		return err
	}
	return b.end()
}

// step decides and runs entry r (i of n), then saves the summary (and, now and then, the
// metrics file).
func (b *batch) step(ctx context.Context, r *Result, i, n int) error {
	if ctx.Err() != nil {
		return b.stopped(ctx, nil)
	}
	err := b.one(ctx, r, i, n)
	b.sum.save()
	if time.Since(b.metricsAt) >= metricsEvery { // between targets too: a run of skips still shows
		b.sum.writeMetrics(b.cfg, -1)
		b.metricsAt = time.Now()
	}
	return err
}

// pull is an array task's batch: it claims the next entry of the list that no task has
// finished or holds, runs it, settles it, and again, until a pass over the list finds none (a
// dead task's entry is taken over on the way). The summary lists the entries this task took.
func (b *batch) pull(ctx context.Context, entries []Entry, claims *Claims) error {
	for took := true; took; {
		took = false
		for i, e := range entries {
			if ctx.Err() != nil {
				return b.stopped(ctx, nil)
			}
			cl, ok, err := claims.Take(i)
			if err != nil {
				b.opt.Log.Warnf("batch: entry %d of the list (%s): %v: left to the other tasks", i+1, describe(e), err)
				continue
			}
			if !ok {
				continue
			}
			took = true
			if cl.Prev != nil {
				b.opt.Log.Infof("batch: entry %d of the list (%s) was claimed by a task that is gone (%s; %s): taken over", i+1, describe(e), cl.Prev.Describe(), cl.Why)
			}
			b.sum.Entries = append(b.sum.Entries, Result{Entry: e, State: NotRun})
			r := &b.sum.Entries[len(b.sum.Entries)-1]
			if err := b.step(ctx, r, i, len(entries)); err != nil {
				cl.Release() // stopped, or a fault of this task's: another task (or a restart) takes it
				return err
			}
			if err := cl.Settle(r.State); err != nil {
				b.opt.Log.Warnf("batch: entry %d of the list (%s): %s, but the record of it could not be written (%v): another task may take it again", i+1, describe(e), r.State, err)
			}
		}
	}
	return nil
}

// checkRecords refuses, before any work, a summary or metrics path that would land on a
// target, a source or an output of the batch, or where the target pattern finds targets (the
// next run would take it for one), or in a folder that does not exist, or on the other.
func checkRecords(cfg job.Config, summary string, entries []Entry) error {
	records := []struct{ flag, path string }{{"--report-path (the batch's summary)", summary}, {"--metrics-path", cfg.MetricsPath}}
	for i, r := range records {
		if r.path == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(r.path)); err != nil || !st.IsDir() {
			if r.path != summary || cfg.ReportPath != "" { // the default summary's folder is the batch folder, made already
				return fmt.Errorf("%s %s: the folder %s does not exist: create it, or give a path in a folder that exists", r.flag, r.path, filepath.Dir(r.path))
			}
		}
		if matches(cfg.TargetPattern, r.path) {
			return fmt.Errorf("%s %s is where target_pattern %q finds targets: the next run would take it for one: put it in another folder", r.flag, r.path, cfg.TargetPattern)
		}
		if i == 1 && outpath.Same(r.path, summary) {
			return fmt.Errorf("%s %s is the batch's summary: give each its own file", r.flag, r.path)
		}
		for _, e := range entries {
			if e.Skip != "" {
				continue
			}
			for _, p := range append([]string{e.Target, e.Output}, e.Sources...) {
				if outpath.Same(r.path, p) {
					return fmt.Errorf("%s %s is %s, a file of the batch's %s: give the record another path", r.flag, r.path, p, describe(e))
				}
			}
		}
	}
	return nil
}

// listID names the frozen list of a job array: its tasks (and their restarts) share one list.
// Any other run lists the inbox afresh: a requeued job finds its finished targets done (done
// records, run reports) and its target in flight checkpointed, and scrontab runs every night's
// batch under one job id, which must not freeze the first night's inbox.
func listID(s slurm.Env) string {
	if s.ArrayJobID != "" {
		return "array-" + s.ArrayJobID
	}
	return ""
}

func orAll(p string) string {
	if p == "" {
		return "no source"
	}
	return p
}

// one decides and runs entry r (i of n). The error is the batch's end: a stop, or a fault
// every target would hit (a missing model, runtime or tool).
func (b *batch) one(ctx context.Context, r *Result, i, n int) error {
	log := b.opt.Log
	e := r.Entry
	tag := fmt.Sprintf("batch [%d/%d] %s", i+1, n, describe(e))
	skip := func(state, why string) error {
		r.State, r.Reason = state, why
		if state == Quarantined || state == Skipped {
			log.Warnf("%s: %s", tag, why)
		} else {
			log.Infof("%s: %s", tag, why)
		}
		return nil
	}
	if e.Skip != "" {
		return skip(Skipped, e.Skip+": not a file to process; skipped")
	}
	st, err := os.Stat(e.Target)
	if err != nil {
		return skip(Missing, "gone since the list was made: skipped")
	}
	// A time in the future (a writer whose clock is ahead) counts by its distance from now, so
	// a file far in the future is not left waiting for ever.
	if age := time.Since(st.ModTime()).Abs(); age < time.Duration(b.cfg.SettleTime)*time.Second {
		if state, why := b.settling(ctx, tag, e.Target, st, age); state != "" {
			return skip(state, why)
		}
	}
	if r.Key, err = Key(b.cfg, e); err != nil {
		if _, serr := os.Stat(e.Target); serr != nil {
			return skip(Missing, "gone since the list was made: skipped")
		}
		// A source or the target cannot be read: its failures are counted (and quarantined)
		// under a key of its settings and paths, since its contents cannot be.
		r.Key = UnreadableKey(b.cfg, e)
		if fails := b.dir.Failures(r.Key, true); len(fails) >= b.cfg.MaxFailures {
			return skip(Quarantined, fmt.Sprintf("quarantined after %d failed runs (last: %s): unreadable; fix its permissions, or remove %s to retry it", len(fails), fails[len(fails)-1].Reason, b.dir.failures(r.Key)))
		}
		return b.failed(r, fault.AsInput(err), tag, false) // its contents were never read: permissions fixed heal it
	}
	if d, ok := b.dir.Done(r.Key); ok {
		r.Report = report.Path(d.Output) // the run that made it wrote one there
		switch {
		case d.Output == e.Output:
			return skip(AlreadyDone, fmt.Sprintf("done already (%s, %s): skipped", d.Output, d.Finished.Format(time.RFC3339)))
		case d.Target == e.Target:
			return skip(AlreadyDone, fmt.Sprintf("done already as %s (%s; the output pattern changed since): skipped; remove %s to make it again", d.Output, d.Finished.Format(time.RFC3339), b.dir.done(r.Key)))
		}
		return skip(AlreadyDone, fmt.Sprintf("the same contents as %s, done already as %s: skipped", d.Target, d.Output))
	}
	if first, ok := b.failedNow[r.Key]; ok { // a copy of a target that failed a moment ago
		r.State, r.Reason = first.state, fmt.Sprintf("the same contents as %s, which failed in this run (%s): not tried twice", first.target, first.state)
		log.Warnf("%s: %s", tag, r.Reason)
		return nil
	}
	why, fails := b.dir.Quarantined(r.Key, b.cfg.MaxFailures)
	if r.Failures = fails; why != "" {
		return skip(Quarantined, why)
	}
	if err := os.MkdirAll(filepath.Dir(e.Output), 0o755); err != nil {
		err = fault.AsNoRoom(fault.AsInput(fmt.Errorf("output folder %s: %w", filepath.Dir(e.Output), err)), filepath.Dir(e.Output))
		if fault.KindOf(err) == fault.Environment { // a full disk
			return b.environment(r, err)
		}
		return b.failed(r, err, tag, false) // the output's folder, not the file
	}
	log.Infof("%s → %s", tag, safefs.Name(e.Output, safefs.PathLen))
	if err := b.tell(decision{Entry: e}); err != nil {
		return err
	}
	began := time.Now()
	_, err = driver.Run(ctx, b.comm, entryConfig(b.cfg, e), runOptions(b.opt))
	r.Seconds = time.Since(began).Seconds()
	var done *driver.AlreadyDone
	var stopped *driver.Stopped
	switch {
	case err == nil:
		r.State, r.Report = Done, outpath.ReportFile(entryConfig(b.cfg, e))
		b.progress++
		if merr := b.dir.MarkDone(r.Key, e); merr != nil {
			log.Warnf("%s: done, but its done record could not be written (%v): a later run finds its output by its run report", tag, merr)
		}
		return nil
	case errors.As(err, &done):
		r.State, r.Report = AlreadyDone, outpath.ReportFile(entryConfig(b.cfg, e))
		b.dir.MarkDone(r.Key, e)
		return skip(AlreadyDone, "its output exists, written by this same job: skipped")
	case errors.As(err, &stopped):
		r.State, r.Reason = Stopped, oneLine(err)
		return b.stopped(ctx, stopped)
	case ctx.Err() != nil:
		r.State = Stopped
		return b.stopped(ctx, nil)
	case fault.KindOf(err) == fault.Busy:
		r.State, r.Reason = Busy, err.Error()
		return nil // the line is printed; the running job goes on
	case fault.KindOf(err) == fault.Environment:
		return b.environment(r, err)
	}
	return b.failed(r, err, tag, fault.KindOf(err) == fault.Input)
}

// environment ends the batch at r's failure err, one every target would hit alike (a missing
// model, runtime or tool; a full file system or quota): not the target's failure, so it is
// neither recorded against it nor counted towards its quarantine.
func (b *batch) environment(r *Result, err error) error {
	r.State, r.Reason, r.ExitStatus = Failed, err.Error(), b.opt.ExitCode(err)
	b.sum.Outcome = err.Error()
	return err
}

// failed records r's failure against its contents; bad says it is the file's own (its run
// failed as bad input), which quarantines it at once.
func (b *batch) failed(r *Result, err error, tag string, bad bool) error {
	host, _ := os.Hostname()
	r.State, r.Reason, r.ExitStatus = Failed, oneLine(err), b.opt.ExitCode(err)
	f := Failure{Target: r.Target, Sources: r.Sources, Output: r.Output, ExitStatus: r.ExitStatus,
		Reason: r.Reason, BadInput: bad, Time: time.Now().UTC(), Host: host, SlurmJob: b.sum.Slurm.JobID}
	if bad { // the file's own fault: a retry would fail the same way
		r.State = Quarantined
	}
	b.failedNow[r.Key] = failedNow{r.Target, r.State}
	_, rerr := b.dir.AddFailure(r.Key, f)
	if rerr != nil {
		b.opt.Log.Warnf("%s: its failure could not be recorded: %v", tag, rerr)
		return nil
	}
	n := len(b.dir.Failures(r.Key, true)) // those that count towards its quarantine
	r.Failures = n
	if bad {
		b.opt.Log.Warnf("%s: failed as bad input (exit %d): quarantined at its first failure, not tried again: fix or replace the file (new contents are a new target), or remove %s to retry it", tag, r.ExitStatus, b.dir.failures(r.Key))
		return nil
	}
	if r.ExitStatus == fault.ExitUsage {
		b.opt.Log.Warnf("%s: failed (exit %d): the settings' fault, not the file's: fix them; it is tried again at every run and never quarantined", tag, r.ExitStatus)
		return nil
	}
	if n >= b.cfg.MaxFailures {
		b.opt.Log.Warnf("%s: failed (exit %d), %d of %d allowed failures: quarantined, not tried again", tag, r.ExitStatus, n, b.cfg.MaxFailures)
	} else {
		b.opt.Log.Warnf("%s: failed (exit %d), failure %d of %d allowed: a later run retries it", tag, r.ExitStatus, n, b.cfg.MaxFailures)
	}
	return nil
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }

// stopped ends a batch a signal or the job's clock stopped. A stop after whole targets were
// finished in this run is worth a requeue even if the target in flight had no new chunk.
func (b *batch) stopped(ctx context.Context, s *driver.Stopped) error {
	b.sum.Outcome = OutcomeStopped
	if s == nil { // between two targets: decided as a run's stop is, the targets finished counting as progress
		name := "a signal"
		var sig driver.Signal
		if errors.As(context.Cause(ctx), &sig) {
			name = string(sig)
		}
		next, why := driver.Decide("rank 0: "+name, b.progress, false, b.restarts(), b.cfg.MaxRestarts)
		msg := fmt.Sprintf("batch stopped by %s between two targets, %d finished in this run; ", name, b.progress)
		switch next {
		case driver.NoRequeue:
			msg += "not requeued: " + why
		case driver.Requeue:
			msg += "a requeue (or the same command again) goes on with the batch"
		default:
			msg += "rerun the same command to go on with the batch"
		}
		return &driver.Stopped{Msg: msg, Next: next}
	}
	if s.Next == driver.NoRequeue && b.progress > 0 && b.restarts() < b.cfg.MaxRestarts {
		b.opt.Log.Infof("batch: this run finished %d target(s) before the stop, so a requeue (exit 75) goes on with the batch", b.progress)
		return &driver.Stopped{Msg: s.Msg, Remote: s.Remote, Next: driver.Requeue}
	}
	return s
}

// restarts is the Slurm job's requeue count so far (SLURM_RESTART_COUNT; 0 outside Slurm).
func (b *batch) restarts() int {
	n, _ := strconv.Atoi(b.sum.Slurm.RestartCount)
	return n
}

// tally counts the entries by state into Counts.
func (s *Summary) tally() map[string]int {
	s.Counts = map[string]int{}
	for _, r := range s.Entries {
		s.Counts[r.State]++
	}
	return s.Counts
}

// end totals the run and chooses its outcome: every entry done, skipped or quarantined is a
// batch that succeeded, unless fail_on_quarantine counts the quarantined as failed.
func (b *batch) end() error {
	b.sum.tally()
	quarantined := 0
	if b.cfg.FailOnQuarantine {
		quarantined = b.sum.Counts[Quarantined]
	}
	switch {
	case b.sum.Counts[Failed] > 0 || quarantined > 0:
		b.sum.Outcome = OutcomeSomeFailed
		return &SomeFailed{Failed: b.sum.Counts[Failed], Quarantined: quarantined, Report: b.sum.Path}
	case b.sum.Counts[Done] > 0:
		b.sum.Outcome = OutcomeAllDone
	default:
		b.sum.Outcome = OutcomeNothing
	}
	return nil
}

// save writes the summary as it stands, so a killed batch leaves its last state. A summary
// whose folder is not there (a batch folder that could not be made, a --report-path refused by
// checkRecords) is not written: the error says so, once.
func (s *Summary) save() {
	s.Finished = time.Now().UTC()
	s.tally()
	if s.inDir && !s.dirOK {
		return
	}
	if st, err := os.Stat(filepath.Dir(s.Path)); err != nil || !st.IsDir() {
		return
	}
	data, _ := json.MarshalIndent(s, "", "  ")
	if err := lustre.WriteReadable(s.Path, append(data, '\n')); err != nil {
		s.log.Warnf("batch summary: %v", err)
	}
}

// summaryPath is where a batch's summary goes: report_path, else the batch folder's report.
func summaryPath(cfg job.Config, d Dir) string {
	env := slurm.FromEnv()
	if cfg.ReportPath == "" {
		return d.Report(env)
	}
	if env.ArrayJobID != "" { // each task its own: FILE-ARRAYJOB_TASK.EXT
		ext := filepath.Ext(cfg.ReportPath)
		return strings.TrimSuffix(cfg.ReportPath, ext) + "-" + env.ArrayJobID + "_" + env.ArrayTaskID + ext
	}
	return cfg.ReportPath
}

// families are the batch's figures for the metrics file: its entries by state, whether it
// runs, and (once it ended, status ≥ 0) its exit status. The output label is the output pattern.
func (s *Summary) families(cfg job.Config, status int) []*dto.MetricFamily {
	set := metrics.NewSet(metrics.OriginFromEnv(), cfg.OutputPattern)
	counts := s.tally()
	for _, st := range States {
		set.Gauge("facefusion_batch_entries", "entries of this batch run (an array task's: those it took) by state", float64(counts[st]), "state", st)
	}
	running := 1.0
	if status >= 0 {
		running = 0
		set.Gauge("facefusion_batch_exit_status", "the batch run's exit code (0 every entry done, skipped or quarantined, or nothing to do; 6 some failed; see docs/options.md, Exit codes)", float64(status))
	}
	set.Gauge("facefusion_batch_running", "1 while the batch runs, 0 once it ended", running)
	return set.Families()
}

// metricsEvery is how often the batch rewrites the metrics file between targets at most (each
// target's run rewrites it on its own cadence): a run over a thousand done targets is not a
// thousand renames on the file system's metadata server.
const metricsEvery = 5 * time.Second

// writeMetrics writes the metrics file (when asked for): the batch's figures (status -1 while it
// runs) and those of the last target that ran, from its run report.
func (s *Summary) writeMetrics(cfg job.Config, status int) {
	if cfg.MetricsPath == "" {
		return
	}
	fams := [][]*dto.MetricFamily{s.families(cfg, status)}
	for i := len(s.Entries) - 1; i >= 0; i-- {
		// A target quarantined in this run (it has an exit status) ran too.
		if st := s.Entries[i].State; st == Done || st == Failed || st == Stopped || (st == Quarantined && s.Entries[i].ExitStatus != 0) {
			if rep, ok, _ := report.Read(s.Entries[i].Output); ok {
				fams = append(fams, metrics.Report(metrics.OriginFromEnv(), rep, time.Now()))
				break
			}
		}
	}
	if err := metrics.Write(cfg.MetricsPath, fams...); err != nil {
		s.log.Warnf("batch metrics %s: %v", cfg.MetricsPath, err)
	}
}

// Finish records the process's exit status in the summary and writes it a last time, with the
// metrics file: the batch's figures and the last target's that ran (rank 0).
func (s *Summary) Finish(cfg job.Config, status int, err error) {
	s.ExitStatus = status
	if err != nil && s.Outcome == "" {
		s.Outcome = oneLine(err)
	}
	s.writeMetrics(cfg, status)
	s.save()
}

// settleWaitFactor bounds a wait for a target to settle: a file that keeps changing for this
// many settle times is left for the next run rather than holding the batch for ever.
var settleWaitFactor = 10

// settling decides a target modified age ago, within settle_time: a scheduled run leaves it
// for the next; one started by hand waits for it (settleWait). state is "" to run it.
func (b *batch) settling(ctx context.Context, tag, target string, st os.FileInfo, age time.Duration) (state, why string) {
	if !b.opt.WaitSettling {
		return Settling, fmt.Sprintf("modified %.0f s ago (settle_time %d s): it may still be being copied; left for the next run", age.Seconds(), b.cfg.SettleTime)
	}
	return b.settleWait(ctx, tag, target, st, age)
}

// settleWait waits until target (st, modified age ago) has kept its size and modification
// time for settle_time. state is "" once it has settled; else the state and reason to skip it
// with: still changing at the bound, gone, or the run stopped while it waited.
func (b *batch) settleWait(ctx context.Context, tag, target string, st os.FileInfo, age time.Duration) (state, why string) {
	settle := time.Duration(b.cfg.SettleTime) * time.Second
	limit := time.Duration(settleWaitFactor) * settle
	b.opt.Log.Infof("%s: modified %.0f s ago (settle_time %d s): waiting until its size and time stay unchanged for %d s (at most %.0f s)",
		tag, age.Seconds(), b.cfg.SettleTime, b.cfg.SettleTime, limit.Seconds())
	poll := min(max(settle/10, 100*time.Millisecond), time.Second)
	start := time.Now()
	changed := start.Add(-age) // when it last changed, as far as this wait has seen
	for time.Since(changed) < settle {
		if time.Since(start) >= limit {
			return Settling, fmt.Sprintf("still changing after %.0f s (%d × settle_time): left for the next run", limit.Seconds(), settleWaitFactor)
		}
		select {
		case <-ctx.Done():
			return Settling, "the run stopped while it settled: left for the next run"
		case <-time.After(poll):
		}
		now, err := os.Stat(target)
		if err != nil {
			return Missing, "gone while it settled: skipped"
		}
		if now.Size() != st.Size() || !now.ModTime().Equal(st.ModTime()) {
			st, changed = now, time.Now()
		}
	}
	b.opt.Log.Infof("%s: settled after %.0f s", tag, time.Since(start).Seconds())
	return "", ""
}
