package batch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// pullAll is one array task's loop over a list of n (as batch.pull's): claim the next entry
// no task finished or holds, "run" it, settle it, until a pass takes none.
func pullAll(t *testing.T, c *Claims, n int, ran func(int)) {
	for took := true; took; {
		took = false
		for i := 0; i < n; i++ {
			cl, ok, err := c.Take(i)
			if err != nil {
				t.Errorf("take %d: %v", i, err)
				continue
			}
			if !ok {
				continue
			}
			took = true
			ran(i)
			if err := cl.Settle(Done); err != nil {
				t.Errorf("settle %d: %v", i, err)
			}
		}
	}
}

// Tasks of an array racing on one state folder (each with its own Claims, as each task's
// process has) run every entry exactly once between them, and after them nothing is pending.
func TestClaimsPullRace(t *testing.T) {
	d := Dir{filepath.Join(t.TempDir(), "state")}
	if err := d.Make(); err != nil {
		t.Fatal(err)
	}
	const n, tasks = 40, 4
	var mu sync.Mutex
	runs := map[int]int{}
	by := map[int]int{}
	var wg sync.WaitGroup
	for k := 0; k < tasks; k++ {
		c, err := d.Claims("array-7", logging.New(os.Stderr, logging.Warn))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			pullAll(t, c, n, func(i int) { mu.Lock(); runs[i]++; by[k]++; mu.Unlock() })
		}(k)
	}
	wg.Wait()
	for i := 0; i < n; i++ {
		if runs[i] != 1 {
			t.Errorf("entry %d ran %d times, want once", i, runs[i])
		}
	}
	c, _ := d.Claims("array-7", logging.New(os.Stderr, logging.Warn))
	if free, held := c.Pending(n); free != 0 || held != 0 {
		t.Errorf("after the tasks: %d pending, %d held; want none", free, held)
	}
	if _, ok, _ := c.Take(3); ok {
		t.Error("a settled entry was taken again")
	}
	t.Logf("entries per task: %v", by)
}

// An entry held by a live task is left to it; one held by a task that is gone (its process
// ended) is taken over, naming it.
func TestClaimsTakeOver(t *testing.T) {
	d := Dir{filepath.Join(t.TempDir(), "state")}
	d.Make()
	c, err := d.Claims("array-8", logging.New(os.Stderr, logging.Warn))
	if err != nil {
		t.Fatal(err)
	}
	live, ok, err := c.Take(0)
	if err != nil || !ok {
		t.Fatalf("take 0: %v %v", ok, err)
	}
	if _, ok, _ := c.Take(0); ok {
		t.Error("an entry held by a live task was taken")
	}
	if free, held := c.Pending(2); free != 1 || held != 1 {
		t.Errorf("pending: %d free, %d held; want 1 and 1", free, held)
	}
	live.Release()
	if _, ok := c.Settled(0); ok {
		t.Error("a released entry is settled")
	}

	// A task killed while it held entry 1: its process is gone.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	dead := lustre.Me()
	dead.PID, dead.PIDStart = cmd.ProcessState.Pid(), "1"
	os.Mkdir(c.entry(1), 0o700)
	if _, _, err := (&lustre.JobDir{Path: c.entry(1)}).TakeClaim(dead); err != nil {
		t.Fatal(err)
	}
	cl, ok, err := c.Take(1)
	if err != nil || !ok || cl.Prev == nil || cl.Prev.Token != dead.Token || !strings.Contains(cl.Why, "gone") {
		t.Fatalf("a dead task's entry: taken %v (%v), claim %+v", ok, err, cl)
	}
	cl.Settle(Failed)
	if s, ok := c.Settled(1); !ok || s.State != Failed {
		t.Errorf("settled record: %+v %v", s, ok)
	}
}

// A task of an array is idle, before any rank starts, when its array's frozen list has no
// entry left that is not finished or held by a live task; outside an array, or before the
// list is frozen, it is not. The ranks of one launch agree on the first one's word.
func TestIdle(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, "in/a.mp4", "in/b.mp4")
	cfg := batchConfig(dir, "", "in/*.mp4", "out/{target_name}.mkv")
	cfg.SettleTime = 0
	for _, k := range []string{"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "SLURM_ARRAY_JOB_ID", "SLURM_STEP_ID", "SLURM_RESTART_COUNT"} {
		t.Setenv(k, "") // restored after the test
		os.Unsetenv(k)
	}
	if idle, _ := Idle(cfg); idle {
		t.Error("idle outside an array")
	}
	t.Setenv("SLURM_ARRAY_JOB_ID", "55")
	t.Setenv("SLURM_ARRAY_TASK_ID", "1")
	t.Setenv("SLURM_JOB_ID", "57")
	if idle, _ := Idle(cfg); idle {
		t.Error("idle before the list is frozen")
	}
	d := DirFor(cfg)
	if err := d.Make(); err != nil {
		t.Fatal(err)
	}
	entries, _, err := d.Frozen("array-55", cfg, func() ([]Entry, error) { return Expand(cfg) })
	if err != nil || len(entries) != 2 {
		t.Fatalf("frozen: %v %v", entries, err)
	}
	c, _ := d.Claims("array-55", logging.New(os.Stderr, logging.Warn))
	first, _, _ := c.Take(0)
	first.Settle(Done)
	if idle, _ := Idle(cfg); idle {
		t.Error("idle with an entry pending")
	}
	second, _, _ := c.Take(1)
	idle, why := Idle(cfg)
	if !idle || !strings.Contains(why, "running in other tasks (1)") || !strings.Contains(why, "before starting the ranks") {
		t.Errorf("every entry finished or held: idle %v, %q", idle, why)
	}
	second.Settle(Done)

	// A launch of several ranks: its first rank's word holds for all.
	t.Setenv("PMIX_RANK", "0")
	t.Setenv("SLURM_STEP_ID", "0")
	if idle, _ := Idle(cfg); !idle {
		t.Error("the first rank of a launch with nothing to do does not exit")
	}
	t.Setenv("SLURM_STEP_ID", "1")
	os.Remove(c.settled(1))
	if idle, _ := Idle(cfg); idle {
		t.Error("a launch with an entry pending is idle")
	}
	second, _, _ = c.Take(1)
	second.Settle(Done)
	if idle, _ := Idle(cfg); idle {
		t.Error("a later rank of a launch that starts exits on its own: the launch would hang")
	}
	t.Setenv("SLURM_STEP_ID", "")
	if idle, _ := Idle(cfg); idle {
		t.Error("idle in a launch of several ranks that cannot be named")
	}
}

// A bad-input failure quarantines its target at once; other failures (an exit 3 that is not
// the contents' fault, such as an unreadable file, included) only at max_failures.
func TestQuarantined(t *testing.T) {
	d := Dir{filepath.Join(t.TempDir(), "state")}
	d.Make()
	d.AddFailure("k1", Failure{ExitStatus: 1, Reason: "ffmpeg failed"})
	if why, n := d.Quarantined("k1", 3); why != "" || n != 1 {
		t.Errorf("after one runtime failure: %q, %d", why, n)
	}
	d.AddFailure("k1", Failure{ExitStatus: 1, Reason: "ffmpeg failed"})
	d.AddFailure("k1", Failure{ExitStatus: 1, Reason: "ffmpeg failed"})
	if why, _ := d.Quarantined("k1", 3); !strings.Contains(why, "after 3 failed runs") {
		t.Errorf("after three runtime failures: %q", why)
	}
	d.AddFailure("k2", Failure{ExitStatus: 3, Reason: "moov atom not found", BadInput: true})
	if why, _ := d.Quarantined("k2", 3); !strings.Contains(why, "first failure, as bad input") || !strings.Contains(why, "moov atom") || !strings.Contains(why, filepath.Join("failed", "k2")) {
		t.Errorf("after one bad-input failure: %q", why)
	}
	d.AddFailure("k3", Failure{ExitStatus: 3, Reason: "permission denied"}) // exit 3, not the contents' fault
	if why, _ := d.Quarantined("k3", 3); why != "" {
		t.Errorf("an input failure that is not bad input quarantined at once: %q", why)
	}
}
