package batchrun

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/batch"
	"github.com/facefusion-hpc/facefusion/internal/clitest"
)

// arrayTask is task k of an array of n (SLURM_ARRAY_JOB_ID array) running the batch in dir,
// as Slurm's environment tells a task, each with its own job id.
func arrayTask(t *testing.T, dir, array string, k, n int, args ...string) clitest.Result {
	t.Helper()
	cmd := clitest.Command(t, append([]string{"batch-run", "--processors", "none", "--output-video-encoder", "ffv1"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Env, "SLURM_ARRAY_JOB_ID="+array, fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d", k), "SLURM_ARRAY_TASK_MIN=0",
		fmt.Sprintf("SLURM_ARRAY_TASK_MAX=%d", n-1), "SLURM_ARRAY_TASK_STEP=1", fmt.Sprintf("SLURM_ARRAY_TASK_COUNT=%d", n),
		fmt.Sprintf("SLURM_JOB_ID=%s%d", array, k))
	return clitest.Exec(t, cmd)
}

// The tasks of an array pull from one frozen list: two tasks started together over five
// targets do each exactly once between them (each task's summary lists the entries it took,
// the two disjoint and complete), and a third task started after them finds nothing pending
// and exits 0 at once, before any rank starts, saying why. (The tasks used to take fixed
// strides of the list, done entries included, so that a task could idle while another worked.)
func TestBatchArrayPulls(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for _, n := range []string{"t1", "t2", "t3", "t4", "t5"} {
		clitest.BatchClip(t, filepath.Join(dir, "inbox", n+".mp4"), 5, n)
		want = append(want, "out/"+n+".mkv")
	}
	args := []string{"-t", "inbox/*.mp4", "-o", "out/{target_name}.mkv", "--settle-time", "0"}
	const array = "880001"
	var runs [2]clitest.Result
	var wg sync.WaitGroup
	for k := range runs {
		wg.Add(1)
		go func(k int) { defer wg.Done(); runs[k] = arrayTask(t, dir, array, k, 3, args...) }(k)
	}
	wg.Wait()
	var all, listed []string
	for k, r := range runs {
		if r.Code != 0 || !strings.Contains(r.Stderr, fmt.Sprintf("array task %d of 3 pulls from the 5 entries", k+1)) {
			t.Errorf("task %d: exit %d\n%s", k, r.Code, r.Stderr)
		}
		all = append(all, clitest.Printed(r)...)
		s := clitest.ReadSummary(t, filepath.Join(dir, "out/.facefusion-batch", fmt.Sprintf("report-%s_%d.json", array, k)))
		for _, e := range s.Entries {
			if e.State != batch.Done {
				t.Errorf("task %d: %s is %s (%s), want done", k, e.Target, e.State, e.Reason)
			}
			listed = append(listed, e.Output)
		}
	}
	sort.Strings(all)
	sort.Strings(listed)
	if strings.Join(all, " ") != strings.Join(want, " ") || strings.Join(listed, " ") != strings.Join(want, " ") {
		t.Fatalf("the two tasks did %q and %q (summaries: %q), want each of %q once", clitest.Printed(runs[0]), clitest.Printed(runs[1]), listed, want)
	}
	for _, o := range want {
		if n := clitest.Attempts(t, filepath.Join(dir, o)); n != 1 {
			t.Errorf("%s: %d attempts, want 1", o, n)
		}
	}
	t.Logf("task 0 did %d, task 1 did %d", len(clitest.Printed(runs[0])), len(clitest.Printed(runs[1])))

	late := arrayTask(t, dir, array, 2, 3, args...)
	if late.Code != 0 || len(clitest.Printed(late)) != 0 || !strings.Contains(late.Stderr, "nothing to do") || !strings.Contains(late.Stderr, "before starting the ranks") {
		t.Errorf("a task started after the others: exit %d, printed %q; want 0, nothing, and why it exits\n%s", late.Code, clitest.Printed(late), late.Stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "out/.facefusion-batch", "report-"+array+"_2.json")); err == nil {
		t.Error("the idle task wrote a summary: it should have exited before the batch started")
	}
}

// A task of an array killed in the middle of a target leaves its claim on that entry; the
// claim's process is gone, so the next task to pull takes the entry over (saying whose it was)
// and resumes it from its checkpoint, then goes on with the rest.
func TestBatchArrayKilledTaskTakenOver(t *testing.T) {
	dir := t.TempDir()
	// b alone has a second chunk (chunk 1) to be killed at.
	clitest.BatchClip(t, filepath.Join(dir, "inbox/a.mp4"), 5, "a")
	clitest.BatchClip(t, filepath.Join(dir, "inbox/b.mp4"), 10, "b")
	clitest.BatchClip(t, filepath.Join(dir, "inbox/c.mp4"), 5, "c")
	// Absolute patterns: the paused run starts in the test's folder.
	args := []string{"-t", filepath.Join(dir, "inbox/*.mp4"), "-o", filepath.Join(dir, "out/{target_name}.mkv"), "--settle-time", "0", "--chunk-frames", "5"}
	const array = "880002"
	env := append(clitest.Command(t).Env, "SLURM_ARRAY_JOB_ID="+array, "SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_TASK_MIN=0",
		"SLURM_ARRAY_TASK_MAX=1", "SLURM_ARRAY_TASK_STEP=1", "SLURM_ARRAY_TASK_COUNT=2", "SLURM_JOB_ID="+array+"0")
	argv := append([]string{clitest.Bin, "batch-run", "--processors", "none", "--output-video-encoder", "ffv1"}, args...)
	p := clitest.StartPausedEnv(t, "chunk-1", env, argv...)
	syscall.Kill(p.PID, syscall.SIGKILL)
	if code := p.Wait(t); code == 0 {
		t.Fatalf("the killed task exited 0\n%s", p.Output())
	}
	clitest.MustNotExist(t, filepath.Join(dir, "out/b.mkv"))

	r := arrayTask(t, dir, array, 1, 2, args...)
	if r.Code != 0 || !strings.Contains(r.Stderr, "taken over") || !strings.Contains(r.Stderr, "resuming") {
		t.Fatalf("the other task: exit %d; want 0, the killed task's entry taken over and resumed\n%s", r.Code, r.Stderr)
	}
	if got := strings.Join(clitest.Printed(r), " "); got != filepath.Join(dir, "out/b.mkv")+" "+filepath.Join(dir, "out/c.mkv") {
		t.Errorf("the other task did %q, want b and c", got)
	}
	if n := clitest.Attempts(t, filepath.Join(dir, "out/b.mkv")); n != 2 {
		t.Errorf("b.mkv's report has %d attempts, want 2 (the killed one resumed)", n)
	}
	for _, n := range []string{"a", "b", "c"} {
		clitest.CheckFramesOf(t, filepath.Join(dir, "out", n+".mkv"), filepath.Join(dir, "inbox", n+".mp4"))
	}
}
