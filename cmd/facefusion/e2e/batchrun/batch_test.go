package batchrun

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/batch"
	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// facefusion batch-run outside Slurm, end to end on tiny clips without a swapper: failures,
// retries and quarantine; settling files, re-delivered copies and outputs from elsewhere; two
// runs at once over one inbox; a rank killed mid-target under mpirun.

// passBatch is a batch-run in dir that changes no pixel and encodes losslessly.
func passBatch(t *testing.T, dir string, args ...string) clitest.Result {
	t.Helper()
	return clitest.RunIn(t, dir, append([]string{"batch-run", "--processors", "none", "--output-video-encoder", "ffv1"}, args...)...)
}

// wantStates checks each target's state (by base name) and that there are no others.
func wantStates(t *testing.T, what string, s *batch.Summary, want map[string]string) {
	t.Helper()
	got := clitest.States(s)
	if len(got) != len(want) {
		t.Errorf("%s: %d entries, want %d: %+v", what, len(got), len(want), s.Entries)
	}
	for name, st := range want {
		if got[name].State != st {
			t.Errorf("%s: %s is %q (%s), want %q", what, name, got[name].State, got[name].Reason, st)
		}
	}
}

// An inbox of two videos and a truncated MP4 (cut short, so it has no moov atom) with a copy:
// the first run makes two outputs and quarantines the truncated file at its first failure,
// as bad input (exit 3 in its record; its copy, the same contents, is not tried), and exits 0
// with the summary and the metrics counting both; no later run tries it again, and
// --fail-on-quarantine makes the quarantined target fail the batch (exit 6). The inputs are
// never moved or changed.
func TestBatchFailuresAndQuarantine(t *testing.T) {
	dir := t.TempDir()
	clitest.BatchClip(t, filepath.Join(dir, "inbox/a.mkv"), 10, "a")
	clitest.BatchClip(t, filepath.Join(dir, "inbox/b.mkv"), 10, "b")
	clitest.BatchClip(t, filepath.Join(dir, "whole.mp4"), 10, "c")
	whole, err := os.ReadFile(filepath.Join(dir, "whole.mp4"))
	if err != nil {
		t.Fatal(err)
	}
	cut := whole[:len(whole)/2] // ffmpeg writes the moov atom at the end: cut off with the rest
	os.WriteFile(filepath.Join(dir, "inbox/c.mp4"), cut, 0o644)
	os.WriteFile(filepath.Join(dir, "inbox/d.mp4"), cut, 0o644) // a second copy of the truncated file
	before := map[string]string{}
	stamps := map[string]time.Time{}
	inputs := []string{"a.mkv", "b.mkv", "c.mp4", "d.mp4"}
	for _, n := range inputs {
		p := filepath.Join(dir, "inbox", n)
		before[n] = clitest.FileMD5(t, p)
		st, _ := os.Stat(p)
		stamps[n] = st.ModTime()
	}
	args := []string{"-t", "inbox/*", "-o", "outbox/{target_name}.mkv", "--settle-time", "0"}
	summary := filepath.Join(dir, "outbox/.facefusion-batch/report.json")

	prom := filepath.Join(dir, "batch.prom")
	r := passBatch(t, dir, append(args, "--metrics-path", prom)...)
	if r.Code != 0 {
		t.Fatalf("first run: exit %d, want 0 (two done, the truncated file quarantined)\n%s", r.Code, r.Stderr)
	}
	// The metrics file, as Prometheus reads it: the batch's entries by state and its exit
	// status, and the figures of the last target that ran (c, failed with exit 3).
	fams := clitest.ParseMetrics(t, prom)
	for state, want := range map[string]float64{batch.Done: 2, batch.Quarantined: 2, batch.Failed: 0, batch.AlreadyDone: 0} {
		if got := clitest.MetricValue(t, fams, "facefusion_batch_entries", "state", state); got != want {
			t.Errorf("facefusion_batch_entries{state=%q} = %v, want %v", state, got, want)
		}
	}
	if got := clitest.MetricValue(t, fams, "facefusion_batch_exit_status"); got != 0 {
		t.Errorf("facefusion_batch_exit_status = %v, want 0", got)
	}
	if got := clitest.MetricValue(t, fams, "facefusion_exit_status", "output", "c.mkv"); got != 3 {
		t.Errorf("the last target's facefusion_exit_status = %v, want 3", got)
	}
	if got := clitest.Printed(r); strings.Join(got, " ") != "outbox/a.mkv outbox/b.mkv" {
		t.Errorf("first run printed %q, want the two outputs", got)
	}
	for _, n := range []string{"a", "b"} {
		clitest.CheckFramesOf(t, filepath.Join(dir, "outbox", n+".mkv"), filepath.Join(dir, "inbox", n+".mkv"))
	}
	clitest.MustNotExist(t, filepath.Join(dir, "outbox/c.mkv"))
	s := clitest.ReadSummary(t, summary)
	wantStates(t, "first run", s, map[string]string{"a.mkv": batch.Done, "b.mkv": batch.Done, "c.mp4": batch.Quarantined, "d.mp4": batch.Quarantined})
	// The copy is not tried again in the run its twin failed in, nor counted twice.
	if d := clitest.States(s)["d.mp4"]; !strings.Contains(d.Reason, "which failed in this run") || d.Failures != 0 {
		t.Errorf("the truncated file's copy: %+v, want it named as the same contents, not recorded", d)
	}
	c := clitest.States(s)["c.mp4"]
	if c.ExitStatus != 3 || c.Failures != 1 || !strings.Contains(c.Reason, "inbox/c.mp4") || c.Key == "" {
		t.Errorf("the truncated target's line: %+v, want exit 3 (bad input), failure 1, a reason naming it", c)
	}
	if s.Outcome != batch.OutcomeAllDone || s.ExitStatus != 0 || s.Counts[batch.Done] != 2 || s.Counts[batch.Quarantined] != 2 {
		t.Errorf("summary: outcome %q, exit %d, counts %v", s.Outcome, s.ExitStatus, s.Counts)
	}
	var rec batch.Failure
	data, err := os.ReadFile(filepath.Join(dir, "outbox/.facefusion-batch/failed", c.Key, "attempt-1.json"))
	if err != nil || json.Unmarshal(data, &rec) != nil || rec.ExitStatus != 3 || !rec.BadInput || rec.Reason != c.Reason {
		t.Errorf("failure record: %+v (%v), want exit 3, bad input and the summary's reason", rec, err)
	}
	if !strings.Contains(r.Stderr, "quarantined at its first failure") || !strings.Contains(r.Stderr, "all done (2 done, 2 quarantined)") {
		t.Errorf("no line saying the truncated file is quarantined, or no count of it:\n%s", r.Stderr)
	}

	// --fail-on-quarantine: every target must end done.
	r = passBatch(t, dir, append(args, "--fail-on-quarantine")...)
	if r.Code != 6 || len(clitest.Printed(r)) != 0 || !strings.Contains(r.Stderr, "fail_on_quarantine") {
		t.Fatalf("second run (--fail-on-quarantine): exit %d, printed %q; want 6, nothing done and the flag named\n%s", r.Code, clitest.Printed(r), r.Stderr)
	}
	s = clitest.ReadSummary(t, summary)
	wantStates(t, "second run", s, map[string]string{"a.mkv": batch.AlreadyDone, "b.mkv": batch.AlreadyDone, "c.mp4": batch.Quarantined, "d.mp4": batch.Quarantined})
	if why := clitest.States(s)["c.mp4"].Reason; !strings.Contains(why, "first failure, as bad input") || !strings.Contains(why, "to retry it") {
		t.Errorf("second run: the quarantine line %q does not say why and how to retry", why)
	}
	for _, n := range []string{"a", "b"} {
		if k := clitest.Attempts(t, filepath.Join(dir, "outbox", n+".mkv")); k != 1 {
			t.Errorf("%s.mkv was made again: its report has %d attempts", n, k)
		}
	}

	// --report-path is the batch's summary; each target's report stays beside its output.
	custom := filepath.Join(dir, "summary.json")
	r = passBatch(t, dir, append(args, "--report-path", custom)...)
	if r.Code != 0 {
		t.Fatalf("third run: exit %d, want 0 (nothing to do)\n%s", r.Code, r.Stderr)
	}
	s = clitest.ReadSummary(t, custom)
	if a := clitest.States(s)["a.mkv"]; a.Report != filepath.Join("outbox", "a.mkv.report.json") {
		t.Errorf("with --report-path, a target's report is named %q, want the one beside its output", a.Report)
	}
	if s.Outcome != batch.OutcomeNothing || s.Counts[batch.Quarantined] != 2 {
		t.Errorf("third run: outcome %q, counts %v", s.Outcome, s.Counts)
	}
	if fs, _ := filepath.Glob(filepath.Join(dir, "outbox/.facefusion-batch/failed", c.Key, "*")); len(fs) != 1 {
		t.Errorf("a quarantined target was tried again: %d failure records, want 1", len(fs))
	}

	for _, n := range inputs {
		p := filepath.Join(dir, "inbox", n)
		st, err := os.Stat(p)
		if err != nil || clitest.FileMD5(t, p) != before[n] || !st.ModTime().Equal(stamps[n]) {
			t.Errorf("input %s was moved or changed (%v)", p, err)
		}
	}
}

// A target written just now is left to settle; once old enough it is taken. A re-delivered
// copy under another name is the work of the first (already-done, naming it). An output that
// is there from elsewhere fails its target (exit 2, naming the file) while the others go on;
// with --force it is overwritten.
func TestBatchSettleCopyAndForeignOutput(t *testing.T) {
	dir := t.TempDir()
	inbox := filepath.Join(dir, "inbox")
	clitest.BatchClip(t, filepath.Join(inbox, "a.mp4"), 10, "a")
	data, _ := os.ReadFile(filepath.Join(inbox, "a.mp4"))
	os.WriteFile(filepath.Join(inbox, "b copy of a.mp4"), data, 0o644)
	clitest.BatchClip(t, filepath.Join(inbox, "x.mp4"), 10, "x")
	old := time.Now().Add(-time.Hour)
	for _, n := range []string{"a.mp4", "b copy of a.mp4", "x.mp4"} {
		os.Chtimes(filepath.Join(inbox, n), old, old)
	}
	clitest.BatchClip(t, filepath.Join(inbox, "fresh.mp4"), 10, "fresh") // just written
	foreign := filepath.Join(dir, "out/x.mkv")
	os.MkdirAll(filepath.Dir(foreign), 0o755)
	os.WriteFile(foreign, []byte("someone else's file"), 0o644)
	args := []string{"-t", "inbox/*", "-o", "out/{target_name}.mkv", "--settle-time", "600"}
	summary := filepath.Join(dir, "out/.facefusion-batch/report.json")

	r := passBatch(t, dir, args...)
	if r.Code != 6 {
		t.Fatalf("exit %d, want 6 (x failed)\n%s", r.Code, r.Stderr)
	}
	s := clitest.ReadSummary(t, summary)
	wantStates(t, "first run", s, map[string]string{"a.mp4": batch.Done, "b copy of a.mp4": batch.AlreadyDone,
		"fresh.mp4": batch.Settling, "x.mp4": batch.Failed})
	if why := clitest.States(s)["b copy of a.mp4"].Reason; !strings.Contains(why, "inbox/a.mp4") || !strings.Contains(why, "out/a.mkv") {
		t.Errorf("the copy's line %q does not name the first delivery and its output", why)
	}
	x := clitest.States(s)["x.mp4"]
	if x.ExitStatus != 2 || !strings.Contains(x.Reason, "out/x.mkv") || !strings.Contains(x.Reason, "--force") {
		t.Errorf("the target whose output is someone else's: %+v, want exit 2 naming out/x.mkv and --force", x)
	}
	if x.Failures != 0 || !strings.Contains(r.Stderr, "never quarantined") {
		t.Errorf("a usage failure (exit 2) counted towards quarantine: failures %d\n%s", x.Failures, r.Stderr)
	}

	if b, _ := os.ReadFile(foreign); string(b) != "someone else's file" {
		t.Error("the foreign output was overwritten without --force")
	}
	clitest.MustNotExist(t, filepath.Join(dir, "out/fresh.mkv"))
	clitest.MustNotExist(t, filepath.Join(dir, "out/b copy of a.mkv"))

	// An hour later (the clock set back on the file), with --force.
	os.Chtimes(filepath.Join(inbox, "fresh.mp4"), old, old)
	r = passBatch(t, dir, append(args, "--force")...)
	if r.Code != 0 {
		t.Fatalf("second run: exit %d\n%s", r.Code, r.Stderr)
	}
	wantStates(t, "second run", clitest.ReadSummary(t, summary), map[string]string{"a.mp4": batch.AlreadyDone, "b copy of a.mp4": batch.AlreadyDone,
		"fresh.mp4": batch.Done, "x.mp4": batch.Done})
	clitest.CheckFramesOf(t, filepath.Join(dir, "out/fresh.mkv"), filepath.Join(inbox, "fresh.mp4"))
	clitest.CheckFramesOf(t, foreign, filepath.Join(inbox, "x.mp4"))
}

// Two batch runs started together over one inbox (cron firing twice) process every target
// exactly once between them: their done sets are disjoint and complete, each output was made by
// one attempt, and both exit 0. Three targets of 10 frames: more than the two runs, so at least
// one run claims a target after the other has claimed some (a fourth target added its runs of
// ffmpeg and the checks of its frames, and no path of its own).
func TestBatchTwoAtOnce(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for _, n := range []string{"t1", "t2", "t3"} {
		clitest.BatchClip(t, filepath.Join(dir, "inbox", n+".mp4"), 10, n)
		want = append(want, "out/"+n+".mkv")
	}
	args := []string{"-t", "inbox/*.mp4", "-o", "out/{target_name}.mkv", "--settle-time", "0"}
	var runs [2]clitest.Result
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func(i int) { defer wg.Done(); runs[i] = passBatch(t, dir, args...) }(i)
	}
	wg.Wait()
	var all []string
	for i, r := range runs {
		if r.Code != 0 {
			t.Errorf("run %d: exit %d\n%s", i, r.Code, r.Stderr)
		}
		all = append(all, clitest.Printed(r)...)
	}
	sort.Strings(all)
	if strings.Join(all, " ") != strings.Join(want, " ") {
		t.Fatalf("the two runs did %q and %q, want each of %q once", clitest.Printed(runs[0]), clitest.Printed(runs[1]), want)
	}
	for _, o := range want {
		if n := clitest.Attempts(t, filepath.Join(dir, o)); n != 1 {
			t.Errorf("%s: %d attempts, want 1", o, n)
		}
		clitest.CheckFramesOf(t, filepath.Join(dir, o), filepath.Join(dir, "inbox", strings.TrimSuffix(filepath.Base(o), ".mkv")+".mp4"))
	}
	t.Logf("run 0 did %d, run 1 did %d", len(clitest.Printed(runs[0])), len(clitest.Printed(runs[1])))
}

// A rank killed mid-target in a batch under mpirun: the rerun skips the target finished before
// the kill, resumes the killed one (its report shows the two attempts) and does the rest.
func TestBatchRankKilledResumes(t *testing.T) {
	dir := t.TempDir()
	// a has 2 chunks of 5, b 4: only b has a chunk 3 (rank 1's second) to be killed at.
	clitest.BatchClip(t, filepath.Join(dir, "inbox/a.mp4"), 10, "a")
	clitest.BatchClip(t, filepath.Join(dir, "inbox/b.mp4"), 20, "b")
	clitest.BatchClip(t, filepath.Join(dir, "inbox/c.mp4"), 10, "c")
	args := []string{"batch-run", "--processors", "none", "--output-video-encoder", "ffv1",
		"-t", filepath.Join(dir, "inbox/*.mp4"), "-o", filepath.Join(dir, "out/{target_name}.mkv"), "--settle-time", "0", "--chunk-frames", "5"}
	p := clitest.StartPaused(t, "chunk-3", clitest.MpirunArgv(2, args...)...)
	syscall.Kill(p.PID, syscall.SIGKILL)
	if code := p.Wait(t); code == 0 {
		t.Fatalf("the killed batch exited 0\n%s", p.Output())
	}
	if clitest.Attempts(t, filepath.Join(dir, "out/a.mkv")) != 1 {
		t.Fatal("a.mkv was not finished before the kill")
	}
	clitest.MustNotExist(t, filepath.Join(dir, "out/b.mkv"))

	r := clitest.Mpirun(t, clitest.HangGuard(t), 2, args...)
	if r.Code != 0 {
		t.Fatalf("rerun: exit %d\n%s", r.Code, r.Stderr)
	}
	if got := clitest.Printed(r); len(got) != 2 || !strings.HasSuffix(got[0], "b.mkv") || !strings.HasSuffix(got[1], "c.mkv") {
		t.Errorf("rerun did %q, want b.mkv and c.mkv", got)
	}
	s := clitest.ReadSummary(t, filepath.Join(dir, "out/.facefusion-batch/report.json"))
	wantStates(t, "rerun", s, map[string]string{"a.mp4": batch.AlreadyDone, "b.mp4": batch.Done, "c.mp4": batch.Done})
	if n := clitest.Attempts(t, filepath.Join(dir, "out/b.mkv")); n != 2 {
		t.Errorf("b.mkv's report has %d attempts, want 2 (the killed one resumed)", n)
	}
	if !strings.Contains(r.Stderr, "resuming") {
		t.Errorf("the rerun did not resume b:\n%s", r.Stderr)
	}
	for _, n := range []string{"a", "b", "c"} {
		clitest.CheckFramesOf(t, filepath.Join(dir, "out", n+".mkv"), filepath.Join(dir, "inbox", n+".mp4"))
	}
}

// A batch folder that cannot be made is one line naming it and --batch-dir (exit 2), before
// any target is looked at; nothing is written.
func TestBatchDirUnusable(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "state"), []byte("a file"), 0o644)
	r := passBatch(t, dir, "-t", "inbox/*.mp4", "-o", "out/{target_name}.mkv", "--batch-dir", "state", "--settle-time", "0")
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	if r.Code != 2 || len(lines) != 1 || !strings.Contains(lines[0], "batch folder state") || !strings.Contains(lines[0], "--batch-dir") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and one line naming the batch folder and --batch-dir", r.Code, r.Stderr)
	}
}

// A plain Slurm job lists the inbox afresh at every run: scrontab runs each night's batch under
// one job id, which must not freeze the first night's inbox. An array that is not one range is
// refused; a fault every target would hit ends the batch (exit 4) without recording failures.
func TestBatchSlurmJobListsAfresh(t *testing.T) {
	dir := t.TempDir()
	clitest.BatchClip(t, filepath.Join(dir, "inbox/a.mkv"), 5, "a")
	args := []string{"-t", "inbox/*.mkv", "-o", "outbox/{target_name}.mkv", "--settle-time", "0", "--stop-margin", "0"}
	t.Setenv("SLURM_JOB_ID", "990001")
	if r := passBatch(t, dir, args...); r.Code != 0 || strings.Join(clitest.Printed(r), " ") != "outbox/a.mkv" {
		t.Fatalf("first night: exit %d, printed %q\n%s", r.Code, clitest.Printed(r), r.Stderr)
	}
	clitest.BatchClip(t, filepath.Join(dir, "inbox/b.mkv"), 5, "b")
	if r := passBatch(t, dir, args...); r.Code != 0 || strings.Join(clitest.Printed(r), " ") != "outbox/b.mkv" {
		t.Fatalf("second night under the same job id: exit %d, printed %q; want the new target done\n%s", r.Code, clitest.Printed(r), r.Stderr)
	}
	if s := clitest.ReadSummary(t, filepath.Join(dir, "outbox/.facefusion-batch/report-990001.json")); s.Counts[batch.Done] != 1 || s.Counts[batch.AlreadyDone] != 1 {
		t.Errorf("second night's summary: %v, want 1 done and 1 already done", s.Counts)
	}

	// --array=0,2,3: not one range, refused before any work.
	for k, v := range map[string]string{"SLURM_ARRAY_JOB_ID": "990002", "SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "0",
		"SLURM_ARRAY_TASK_MAX": "3", "SLURM_ARRAY_TASK_STEP": "1", "SLURM_ARRAY_TASK_COUNT": "3"} {
		t.Setenv(k, v)
	}
	if r := passBatch(t, dir, args...); r.Code != 2 || !strings.Contains(r.Stderr, "one range") {
		t.Errorf("an irregular array: exit %d, want 2 and a line asking for one range\n%s", r.Code, r.Stderr)
	}
	t.Setenv("SLURM_ARRAY_JOB_ID", "")
	t.Setenv("SLURM_ARRAY_TASK_ID", "")

	// An output of this same job found by its run report alone (the batch folder gone) is
	// already done, also as the first target that reaches the run step, in a job that loads
	// models (its fingerprint needs the runtime loaded).
	face := testenv.Sample(t, "grace_hopper.jpg")
	swap := filepath.Join(dir, "swap")
	clitest.BatchClip(t, filepath.Join(swap, "inbox/s.mkv"), 5, "s")
	swapArgs := []string{"batch-run", "-s", face, "-t", "inbox/*.mkv", "-o", "outbox/{target_name}.mkv", "--settle-time", "0", "--stop-margin", "0"}
	if r := clitest.RunIn(t, swap, swapArgs...); r.Code != 0 || len(clitest.Printed(r)) != 1 {
		t.Fatalf("a swap batch: exit %d, printed %q\n%s", r.Code, clitest.Printed(r), r.Stderr)
	}
	if err := os.RemoveAll(filepath.Join(swap, "outbox/.facefusion-batch")); err != nil {
		t.Fatal(err)
	}
	if r := clitest.RunIn(t, swap, swapArgs...); r.Code != 0 || !strings.Contains(r.Stderr, "written by this same job") {
		t.Errorf("the swap batch again without its batch folder: exit %d, want 0 and the output found done\n%s", r.Code, r.Stderr)
	}

	// No models where --models-dir points: every target would fail alike.
	clitest.BatchClip(t, filepath.Join(dir, "inbox/c.mkv"), 5, "c")
	r := clitest.RunIn(t, dir, "batch-run", "-s", face, "-t", "inbox/c.mkv", "-o", "outbox/{target_name}.mkv", "--settle-time", "0",
		"--stop-margin", "0", "--models-dir", t.TempDir())
	if r.Code != 4 {
		t.Errorf("models missing: exit %d, want 4\n%s", r.Code, r.Stderr)
	}
	if fs, _ := filepath.Glob(filepath.Join(dir, "outbox/.facefusion-batch/failed/*")); len(fs) != 0 {
		t.Errorf("a fault of the environment was recorded against targets: %v", fs)
	}
}

// An output folder on a full file system (or quota) is no target's fault: the batch ends at the
// first target (exit 4, saying where to free room) without recording a failure, so that no run
// of it, however many, quarantines the target; once there is room, the next run makes it.
func TestBatchFullDisk(t *testing.T) {
	dir := t.TempDir()
	clitest.BatchClip(t, filepath.Join(dir, "inbox/a.mkv"), 10, "a")
	clitest.BatchClip(t, filepath.Join(dir, "inbox/b.mkv"), 10, "b")
	outbox := filepath.Join(dir, "outbox")
	testenv.Tmpfs(t, outbox, 16<<10) // room for the job folder's records, not for a segment
	args := []string{"-t", "inbox/*.mkv", "-o", "outbox/{target_name}.mkv", "--batch-dir", "state", "--settle-time", "0", "--max-failures", "2"}
	for run := 1; run <= 3; run++ {
		r := passBatch(t, dir, args...)
		if r.Code != 4 || !strings.Contains(r.Stderr, "no space left on device") || !strings.Contains(r.Stderr, "free room") {
			t.Fatalf("run %d on a full disk: exit %d, want 4 naming the cause and what to do\n%s", run, r.Code, r.Stderr)
		}
		if recs, _ := filepath.Glob(filepath.Join(dir, "state/failed/*/*")); len(recs) != 0 {
			t.Errorf("run %d: a full disk was recorded as a target's failure: %v", run, recs)
		}
		s := clitest.ReadSummary(t, filepath.Join(dir, "state/report.json"))
		if s.Counts[batch.Quarantined] != 0 || s.ExitStatus != 4 {
			t.Errorf("run %d: summary exit %d, counts %v; want exit 4 and nothing quarantined", run, s.ExitStatus, s.Counts)
		}
	}
	testenv.GrowTmpfs(t, outbox, 64<<20)
	r := passBatch(t, dir, args...)
	if r.Code != 0 || strings.Join(clitest.Printed(r), " ") != "outbox/a.mkv outbox/b.mkv" {
		t.Fatalf("with room: exit %d, printed %q; want both made\n%s", r.Code, clitest.Printed(r), r.Stderr)
	}
}
