package dist

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/batch"
	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/slurmtest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// batch-run as Slurm runs it: `sbatch --array` over the one batch script with no wrapper, and
// two batch jobs over one inbox at once (e2e/batchrun has the same without Slurm, and a
// rank killed mid-target under mpirun). Every target is a 64x48 clip with its own metadata tag
// (identical files are one target by content), passed through losslessly (ffv1), so an output
// is right when its frames are a single run's, or its target's.
func TestBatchSlurm(t *testing.T) {
	// Not parallel with the other Slurm tests: they wait for the machine's cluster lock in a
	// parallel slot each, and with every slot taken so, this test's parallel subtests would
	// never get one while it holds the lock (a deadlock, seen in make test with two slots).
	// Run first, alone, its two subtests have the slots.
	// Room for both subtests' jobs at once: three array tasks of 1×2 CPUs, two jobs of 2×2.
	c := slurmtest.Start(t, slurmtest.Options{CPUs: 16})
	env := slices.Clip(append(clitest.LaunchEnv(t), "SLURM_CONF="+c.Conf()))
	script := filepath.Join(testenv.Root(t), "sbatch", "facefusion.sbatch")

	// submit sbatches the script over a batch whose targets are inbox/*.mp4 (in chunks of 8
	// frames), from a submit folder holding bin/facefusion and batch.toml; it returns the job
	// id (an array's id).
	submit := func(t *testing.T, ctx context.Context, sub, inbox string, extraEnv []string, args ...string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(sub, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(clitest.Bin, filepath.Join(sub, "bin", "facefusion")); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, "batch.toml"), []byte(batchTOML(inbox)), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := c.Command(ctx, "sbatch", append(append([]string{"--parsable"}, args...), script, "batch.toml")...)
		cmd.Env = append(env, extraEnv...)
		cmd.Dir = sub
		r := clitest.RunCmd(t, ctx, cmd)
		if r.Code != 0 {
			t.Fatalf("sbatch %v: exit %d\n%s%s\n%s", args, r.Code, r.Stdout, r.Stderr, c.Logs())
		}
		id, _, _ := strings.Cut(strings.TrimSpace(r.Stdout), ";")
		return id
	}
	show := func(ctx context.Context, id string) string {
		cmd := c.Command(ctx, "scontrol", "show", "job", "-o", id)
		cmd.Env = env
		out, _ := cmd.Output()
		return string(out)
	}
	// ended waits until job id (a job, or an array task A_T) has ended, and returns what
	// scontrol says of it then.
	ended := func(t *testing.T, ctx context.Context, id, log string) string {
		t.Helper()
		for {
			s := show(ctx, id)
			switch st := jobField(s, "JobState"); st {
			case "", "PENDING", "RUNNING", "COMPLETING", "CONFIGURING", "REQUEUED":
			default:
				return s
			}
			if ctx.Err() != nil {
				t.Fatalf("job %s never ended:\n%s\n%s", id, clitest.ReadFile(log), c.Logs())
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	completed := func(t *testing.T, ctx context.Context, id, log, restarts string) {
		t.Helper()
		s := ended(t, ctx, id, log)
		if jobField(s, "JobState") != "COMPLETED" || jobField(s, "ExitCode") != "0:0" || jobField(s, "Restarts") != restarts {
			t.Fatalf("job %s ended %s, exit code %s, restarts %s; want COMPLETED, 0:0, %s\n%s", id,
				jobField(s, "JobState"), jobField(s, "ExitCode"), jobField(s, "Restarts"), restarts, clitest.ReadFile(log))
		}
	}

	// Three targets, three tasks that pull them from one frozen list. Each output is frame-exact
	// to a single run of its target, that is to the target's frames. c (2 chunks; the only target
	// with a frame 12) is held at frame 12 in whichever task pulled it, and that task is sent
	// USR1: the script requeues that task alone, by ARRAYJOB_TASK (Slurm gives the array's own
	// job id to the last task, and `scontrol requeue` of that id requeued every task), and its
	// restart pulls c again (released at the stop, finished by no one) and resumes it, while the
	// other tasks stay done.
	t.Run("array", func(t *testing.T) {
		t.Parallel()
		ctx := clitest.HangGuard(t)
		dir := t.TempDir()
		inbox := filepath.Join(dir, "inbox")
		targets := inboxOf(t, inbox, map[string]int{"a": 8, "b": 8, "c": 16})
		sub := filepath.Join(dir, "submit")
		id := submit(t, ctx, sub, inbox, []string{"FACEFUSION_TEST_PAUSE_AT=frames-12," + filepath.Join(dir, "paused")},
			"--array=0-2", "-n", "1", "-o", "log-%A_%a.out")
		log := func(task int) string { return filepath.Join(sub, fmt.Sprintf("log-%s_%d.out", id, task)) }
		// A single run's frames are its target's (lossless, unchanged: CheckFrames holds every
		// single run of the e2e packages to that), so the targets' own frames are the reference.
		singles := map[string][]string{}
		for name, target := range targets {
			singles[name] = clitest.FrameHashes(t, target)
		}
		held := -1
		for held < 0 {
			for task := 0; task < 3; task++ {
				if strings.Contains(clitest.ReadFile(log(task)), "test pause at frames-12") {
					held = task
				}
			}
			if ctx.Err() != nil {
				t.Fatalf("no task paused in c:\n%s\n%s\n%s\n%s", clitest.ReadFile(log(0)), clitest.ReadFile(log(1)), clitest.ReadFile(log(2)), c.Logs())
			}
			time.Sleep(200 * time.Millisecond)
		}
		heldID := fmt.Sprintf("%s_%d", id, held)
		// The requeue of the task that holds the array's own id is the one that went wrong.
		t.Logf("task %d pulled c; it holds the array's id: %v", held, jobField(show(ctx, heldID), "JobId") == id)
		var others []int
		for task := 0; task < 3; task++ {
			if task != held {
				others = append(others, task)
				completed(t, ctx, fmt.Sprintf("%s_%d", id, task), log(task), "0")
			}
		}
		cmd := c.Command(ctx, "scancel", "-b", "-s", "USR1", heldID)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("scancel: %v %s", err, out)
		}
		// The requeued task waits out the credential lifetime before it may start again:
		// released a few seconds after the requeue (see TestResumeSlurm's finished).
		var pending time.Time
		for released := false; !released; time.Sleep(250 * time.Millisecond) {
			s := show(ctx, heldID)
			if jobField(s, "JobState") == "PENDING" && jobField(s, "Restarts") == "1" && pending.IsZero() {
				pending = time.Now()
			}
			if !pending.IsZero() && time.Since(pending) > 3*time.Second {
				cmd := c.Command(ctx, "scontrol", "update", "JobId="+heldID, "StartTime=now")
				cmd.Env = env
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("scontrol update StartTime=now: %v %s", err, out)
				}
				released = true
			}
			if st := jobField(s, "JobState"); ctx.Err() != nil || (st != "RUNNING" && st != "PENDING" && st != "COMPLETING" && st != "REQUEUED" && st != "CONFIGURING") {
				t.Fatalf("task %d was not requeued (%s):\n%s", held, st, clitest.ReadFile(log(held)))
			}
		}
		completed(t, ctx, heldID, log(held), "1")
		// The other tasks were not requeued with it.
		for _, task := range others {
			if r := jobField(show(ctx, fmt.Sprintf("%s_%d", id, task)), "Restarts"); r != "0" {
				t.Errorf("task %s_%d restarted %s times with task %d's requeue, want 0:\n%s", id, task, r, held, clitest.ReadFile(log(task)))
			}
		}
		text := clitest.ReadFile(log(held))
		for _, want := range []string{"batch-run --config batch.toml", "srun exited with status 75", "requeueing job " + heldID, "(restart 1)", "srun exited with status 0"} {
			if !strings.Contains(text, want) {
				t.Errorf("task %d's log does not say %q:\n%s", held, want, text)
			}
		}
		// USR1 came with the job's whole limit ahead: the chunk in flight was finished first, so
		// the restart finds both of c's chunks and does none again.
		if m := clitest.VerifiedLine.FindStringSubmatch(text); m == nil || m[1] != "2" || !strings.Contains(text, "finishing chunk 1 first") {
			t.Errorf("task %d's stop did not finish the chunk in flight, or its restart did not resume c with both chunks:\n%s", held, text)
		}
		outbox := filepath.Join(dir, "outbox")
		for name := range targets {
			out := filepath.Join(outbox, name+".mkv")
			if got := clitest.FrameHashes(t, out); !slices.Equal(got, singles[name]) {
				t.Errorf("%s.mkv: %d frames not equal to a single run's %d", name, len(got), len(singles[name]))
			}
			if want := map[bool]int{true: 2, false: 1}[name == "c"]; clitest.Attempts(t, out) != want {
				t.Errorf("%s: %d attempts, want %d", out, clitest.Attempts(t, out), want)
			}
		}
		// Each task's summary lists the entries it pulled, all done; a task that found nothing
		// pending exited before its ranks started and wrote none. The held task's restart pulled c.
		doneBy := map[string]int{}
		for task := 0; task < 3; task++ {
			path := filepath.Join(outbox, ".facefusion-batch", fmt.Sprintf("report-%s_%d.json", id, task))
			if _, err := os.Stat(path); err != nil && task != held {
				if !strings.Contains(clitest.ReadFile(log(task)), "nothing to do") {
					t.Errorf("task %d wrote no summary and does not say it had nothing to do:\n%s", task, clitest.ReadFile(log(task)))
				}
				continue
			}
			s := clitest.ReadSummary(t, path)
			for _, e := range s.Entries {
				if e.State != batch.Done {
					t.Errorf("task %d: %s is %s (%s), want done", task, e.Target, e.State, e.Reason)
				}
				doneBy[e.Target]++
			}
			if s.ExitStatus != 0 || s.Slurm.ArrayJobID != id {
				t.Errorf("task %d's summary: exit %d, array %s; want 0, %s", task, s.ExitStatus, s.Slurm.ArrayJobID, id)
			}
			if task == held && (len(s.Entries) != 1 || s.Entries[0].Target != targets["c"]) {
				t.Errorf("task %d's restart took %+v, want c alone", task, s.Entries)
			}
		}
		if doneBy[targets["c"]] != 1 {
			t.Errorf("c was done in %d summaries, want 1", doneBy[targets["c"]])
		}
		var list struct{ Entries []batch.Entry }
		if err := json.Unmarshal([]byte(clitest.ReadFile(filepath.Join(outbox, ".facefusion-batch", "lists", "array-"+id+".json"))), &list); err != nil || len(list.Entries) != 3 {
			t.Errorf("the frozen list of array %s: %v, %d entries, want 3", id, err, len(list.Entries))
		}
	})

	// Two batch jobs over one inbox of three at once, a plain one and an array of one task: each
	// target is done by exactly one of them, once. Each has its own summary.
	t.Run("two-jobs", func(t *testing.T) {
		t.Parallel()
		ctx := clitest.HangGuard(t)
		dir := t.TempDir()
		inbox := filepath.Join(dir, "inbox")
		targets := inboxOf(t, inbox, map[string]int{"a": 8, "b": 8, "c": 8})
		sub := filepath.Join(dir, "submit")
		plain := submit(t, ctx, sub, inbox, nil, "-n", "2", "-o", "plain.out")
		array := submit(t, ctx, sub, inbox, nil, "-n", "2", "--array=0", "-o", "array.out")
		completed(t, ctx, plain, filepath.Join(sub, "plain.out"), "0")
		completed(t, ctx, array+"_0", filepath.Join(sub, "array.out"), "0")
		bdir := filepath.Join(dir, "outbox", ".facefusion-batch")
		doneBy := map[string][]string{}
		for job, path := range map[string]string{"plain": filepath.Join(bdir, "report-"+plain+".json"), "array": filepath.Join(bdir, "report-"+array+"_0.json")} {
			s := clitest.ReadSummary(t, path)
			if len(s.Entries) != 3 {
				t.Errorf("%s job's summary lists %d targets, want 3", job, len(s.Entries))
			}
			for _, r := range s.Entries {
				switch r.State {
				case batch.Done:
					doneBy[r.Target] = append(doneBy[r.Target], job)
				case batch.AlreadyDone, batch.Busy:
				default:
					t.Errorf("%s job: %s is %s (%s)", job, r.Target, r.State, r.Reason)
				}
			}
		}
		t.Logf("done by: %v", doneBy)
		for name, target := range targets {
			if len(doneBy[target]) != 1 {
				t.Errorf("%s was done by %v, want exactly one job", target, doneBy[target])
			}
			out := filepath.Join(dir, "outbox", name+".mkv")
			if n := clitest.Attempts(t, out); n != 1 {
				t.Errorf("%s's run report has %d attempts, want 1 (written once)", out, n)
			}
			if got, want := clitest.FrameHashes(t, out), clitest.FrameHashes(t, target); !slices.Equal(got, want) {
				t.Errorf("%s's frames are not its target's", out)
			}
		}
	})
}

// batchTOML is a batch over inbox/*.mp4 into the outbox beside it, passed through losslessly
// in chunks of 8 frames, taking every target at once (settle_time 0).
func batchTOML(inbox string) string {
	return fmt.Sprintf("target_pattern = %q\noutput_pattern = %q\nprocessors = [\"none\"]\noutput_video_encoder = \"ffv1\"\nchunk_frames = 8\nsettle_time = 0\n",
		filepath.Join(inbox, "*.mp4"), filepath.Join(filepath.Dir(inbox), "outbox", "{target_name}.mkv"))
}

// inboxOf makes inbox/NAME.mp4 of frames[NAME] frames for each name (clitest.BatchClip, each its own
// file) and returns their paths by name.
func inboxOf(t *testing.T, inbox string, frames map[string]int) map[string]string {
	t.Helper()
	if err := os.MkdirAll(inbox, 0o755); err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{}
	for name, n := range frames {
		paths[name] = filepath.Join(inbox, name+".mp4")
		clitest.BatchClip(t, paths[name], n, name)
	}
	return paths
}

// jobField is KEY's value in one line of `scontrol show job -o`.
func jobField(show, key string) string {
	m := regexp.MustCompile(`\b` + regexp.QuoteMeta(key) + `=(\S+)`).FindStringSubmatch(show)
	if m == nil {
		return ""
	}
	return m[1]
}
