package dist

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/slurmtest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// A batch job's life on a real Slurm cluster, through sbatch/facefusion.sbatch. Only the
// program's own stop (Slurm's USR1 warning, or its own clock, after progress and below
// max_restarts: exit 75) makes the script requeue the job. A stop that a requeue would not help
// exits 76 and stays down. SIGTERM is Slurm's: scancel ends the job CANCELLED for good, and
// `scontrol requeue` and preemption bring it back exactly once, by Slurm's hand alone. Each
// restart resumes and its output is the target's frames. SIGTERM to an interactive srun's tasks
// gives exit 130 and a manifest status reads.
func TestResumeSlurm(t *testing.T) {
	t.Parallel() // two at a time, after the rest: see main_test.go
	// Room for every subtest's job at once (2 tasks of 2 CPUs each); the preemption subtest
	// asks for the whole node, so it runs first and alone.
	const cpus = 32
	c := slurmtest.Start(t, slurmtest.Options{CPUs: cpus})
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	clitest.BframeClip(t, in, 40) // 4 chunks of 10: 2 a rank on 2 ranks (the length the other tests use: one clip)
	want := clitest.FrameHashes(t, in)
	// Clipped: the subtests run in parallel and each appends its own variables to a copy.
	env := slices.Clip(append(clitest.LaunchEnv(t), "SLURM_CONF="+c.Conf()))
	script := filepath.Join(testenv.Root(t), "sbatch", "facefusion.sbatch")
	slurm := func(t *testing.T, args ...string) string {
		cmd := c.Command(clitest.HangGuard(t), args[0], args[1:]...)
		cmd.Env = env
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v %s", strings.Join(args, " "), err, b)
		}
		return string(b)
	}

	field := func(show, key string) string {
		m := regexp.MustCompile(`\b` + key + `=(\S+)`).FindStringSubmatch(show)
		if m == nil {
			return ""
		}
		return m[1]
	}
	show := func(id string) string {
		cmd := c.Command(clitest.HangGuard(t), "scontrol", "show", "job", "-o", id)
		cmd.Env = env
		out, _ := cmd.Output()
		return string(out)
	}
	state := func(id string) (string, string) {
		s := show(id)
		return field(s, "JobState"), field(s, "Restarts")
	}
	// submit starts the batch script with sbatch's args (by default -n 2) and the job file's
	// extra keys, holds one rank at pause once (the marker keeps a restart from pausing again),
	// and returns once a rank is held there. Every job asks for exactly the tasks it is given
	// -n for, with the script's 2 CPUs each.
	submit := func(t *testing.T, name, pause, keys string, args ...string) (id, log, out string) {
		sub := t.TempDir()
		os.Mkdir(filepath.Join(sub, "bin"), 0o755)
		if err := os.Symlink(clitest.Bin, filepath.Join(sub, "bin", "facefusion")); err != nil {
			t.Fatal(err)
		}
		out = filepath.Join(dir, name+".mkv")
		toml := fmt.Sprintf("target_path = %q\noutput_path = %q\nprocessors = [\"none\"]\noutput_video_encoder = \"ffv1\"\nchunk_frames = 10\n%s", in, out, keys)
		if err := os.WriteFile(filepath.Join(sub, "job.toml"), []byte(toml), 0o644); err != nil {
			t.Fatal(err)
		}
		log = filepath.Join(sub, "job.out")
		tasks := "2"
		if len(args) >= 2 && args[0] == "-n" {
			tasks = args[1]
		} else {
			args = append([]string{"-n", tasks}, args...)
		}
		cmd := c.Command(clitest.HangGuard(t), "sbatch", append(append([]string{"--parsable", "-o", log}, args...), script, "job.toml")...)
		cmd.Env = append(env, "FACEFUSION_TEST_PAUSE_AT="+pause+","+filepath.Join(sub, "paused"))
		cmd.Dir = sub
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("sbatch: %v", err)
		}
		id = strings.TrimSpace(string(b))
		ctx := clitest.HangGuard(t)
		for !strings.Contains(clitest.ReadFile(log), "test pause at "+pause) {
			if ctx.Err() != nil || strings.Contains(clitest.ReadFile(log), "srun exited") {
				t.Fatalf("job %s never paused:\n%s\n%s", id, clitest.ReadFile(log), c.Logs())
			}
			time.Sleep(200 * time.Millisecond)
		}
		s := show(id)
		n, _ := strconv.Atoi(tasks)
		if field(s, "NumTasks") != tasks || field(s, "NumCPUs") != strconv.Itoa(2*n) {
			t.Errorf("sbatch -n %s gave NumTasks=%s NumCPUs=%s, want %s and %d (the script's 2 CPUs per task)", tasks, field(s, "NumTasks"), field(s, "NumCPUs"), tasks, 2*n)
		}
		return id, log, out
	}
	// finished waits for the job to end and checks it restarted exactly once and resumed.
	finished := func(t *testing.T, id, log, out string) {
		ctx := clitest.HangGuard(t)
		released := false
		var pending time.Time
		for {
			st, restarts := state(id)
			if st == "PENDING" && restarts == "1" && pending.IsZero() {
				pending = time.Now()
			}
			if !pending.IsZero() && time.Since(pending) > 3*time.Second && !released {
				// A requeued job waits out the credential lifetime (120 s on the test cluster)
				// before it may start again; a real cluster waits too. Release it early, but
				// not in the same second as the revocation of the old credential (slurmd
				// compares whole seconds and would kill the restart).
				cmd := c.Command(ctx, "scontrol", "update", "JobId="+id, "StartTime=now")
				cmd.Env = env
				if b, err := cmd.CombinedOutput(); err != nil {
					t.Logf("scontrol update StartTime=now: %v %s", err, b)
				}
				released = true
			}
			if st == "COMPLETED" {
				if restarts != "1" {
					t.Errorf("job %s restarted %s times, want 1:\n%s", id, restarts, clitest.ReadFile(log))
				}
				break
			}
			if st == "FAILED" || st == "CANCELLED" || st == "TIMEOUT" || ctx.Err() != nil {
				t.Fatalf("job %s is %s:\n%s\n%s", id, st, clitest.ReadFile(log), c.Logs())
			}
			time.Sleep(500 * time.Millisecond)
		}
		text := clitest.ReadFile(log)
		if !strings.Contains(text, "(restart 1)") || !clitest.VerifiedLine.MatchString(text) || !strings.Contains(text, "srun exited with status 0") {
			t.Errorf("the log does not show a resumed restart:\n%s", text)
		}
		clitest.CheckFrames(t, out, want)
	}
	// stays waits for the job to end in one of the states ok, then checks for a while that it
	// does not come back. The script requeues before it exits, Slurm within a second or two.
	stays := func(t *testing.T, id, log string, watch time.Duration, ok ...string) string {
		ctx := clitest.HangGuard(t)
		st, restarts := state(id)
		for st == "PENDING" || st == "RUNNING" || st == "COMPLETING" || st == "SIGNALING" {
			if ctx.Err() != nil || restarts != "0" {
				t.Fatalf("job %s never ended (%s, Restarts=%s):\n%s\n%s", id, st, restarts, clitest.ReadFile(log), c.Logs())
			}
			time.Sleep(250 * time.Millisecond)
			st, restarts = state(id)
		}
		end := st
		for deadline := time.Now().Add(watch); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
			if st, restarts = state(id); st != end || restarts != "0" {
				t.Fatalf("job %s came back: %s, Restarts=%s after it ended %s:\n%s", id, st, restarts, end, clitest.ReadFile(log))
			}
		}
		for _, s := range ok {
			if end == s {
				return end
			}
		}
		t.Fatalf("job %s ended %s, want one of %v:\n%s", id, end, ok, clitest.ReadFile(log))
		return end
	}
	mustSay := func(t *testing.T, log string, lines ...string) {
		t.Helper()
		text := clitest.ReadFile(log)
		for _, l := range lines {
			if !strings.Contains(text, l) {
				t.Errorf("the job log does not say %q:\n%s", l, text)
			}
		}
	}
	mustNotSay := func(t *testing.T, log string, words ...string) {
		t.Helper()
		text := clitest.ReadFile(log)
		for _, w := range words {
			if strings.Contains(text, w) {
				t.Errorf("the job log says %q:\n%s", w, text)
			}
		}
	}
	const slurmDecides = "Slurm decides whether job"

	// Preemption with a GraceTime (the test cluster's debug partition: PreemptMode=REQUEUE,
	// GraceTime=10) sends TERM to the ranks only; the script waits for the grace time to end
	// so that Slurm requeues the job, and never requeues it itself.
	t.Run("preempted", func(t *testing.T) {
		id, log, out := submit(t, "preempted", "chunk-1", "")
		slurm(t, "sbatch", "--parsable", "-p", "high", "-n", "1", "-c", strconv.Itoa(cpus), "-o", "/dev/null", "--wrap", "sleep 1")
		finished(t, id, log, out)
		mustSay(t, log, "srun exited with status 130", "is being preempted: waiting for Slurm", slurmDecides)
		mustNotSay(t, log, "requeueing", "resubmit", "submit the same job file")
	})

	// The other stops run at the same time: each is mostly waiting (paused ranks, Slurm's
	// requeue, the own clock), and each job has its own folder, log and output.
	t.Run("stops", func(t *testing.T) {
		t.Run("scancel", func(t *testing.T) {
			t.Parallel()
			id, log, out := submit(t, "scancel", "chunk-1", "")
			slurm(t, "scancel", id)
			stays(t, id, log, 10*time.Second, "CANCELLED")
			mustSay(t, log, "srun exited with status 130", slurmDecides)
			mustNotSay(t, log, "requeueing", "resubmit", "submit the same job file")
			clitest.MustNotExist(t, out)
		})

		// Requeued while the only rank is 8 frames into its first chunk of 10: Slurm's TERM
		// reaches the rank and its ffmpeg children (which block it), and the 2 frames left fit
		// in KillWait (5 s on the test cluster) less the margin: the chunk is finished and
		// checkpointed before Slurm's KILL, and the restart resumes after it.
		t.Run("scontrol-requeue", func(t *testing.T) {
			t.Parallel()
			id, log, out := submit(t, "requeue", "frames-8", "", "-n", "1")
			slurm(t, "scontrol", "requeue", id)
			finished(t, id, log, out)
			mustSay(t, log, "srun exited with status 130", slurmDecides, "rank 0: stop by SIGTERM: finishing chunk 0 first",
				"cancelled by SIGTERM (rank 0): 1 of 4 chunk(s) (10 of 40 frames) are checkpointed")
			mustNotSay(t, log, "requeueing", "resubmit", "submit the same job file")
		})

		t.Run("usr1-to-batch-script", func(t *testing.T) {
			t.Parallel()
			id, log, out := submit(t, "usr1", "chunk-1", "")
			slurm(t, "scancel", "-b", "-s", "USR1", id)
			finished(t, id, log, out)
			mustSay(t, log, "srun exited with status 75", "requeueing job "+id, "the batch script requeues the job (restart 1 of at most 10)")
		})

		// USR1 while the only rank is half-way into its first chunk, with two hours left: srun's
		// USR1 reaches the rank's ffmpeg children too, which block it, so the rank finishes
		// the chunk and checkpoints it, and the job is requeued and completes. (A warning too
		// late to finish anything is not requeued: TestDecide, and cmd/facefusion/e2e/resume's
		// TestUsr1FinishesTheChunkInFlight/too-late.)
		t.Run("usr1-mid-chunk", func(t *testing.T) {
			t.Parallel()
			id, log, out := submit(t, "usr1-mid", "frames-4", "", "-n", "1")
			slurm(t, "scancel", "-b", "-s", "USR1", id)
			finished(t, id, log, out)
			mustSay(t, log, "rank 0: stop by SIGUSR1: finishing chunk 0 first", "srun exited with status 75", "requeueing job "+id)
		})

		t.Run("max-restarts-reached", func(t *testing.T) {
			t.Parallel()
			id, log, _ := submit(t, "capped", "chunk-1", "max_restarts = 0\n")
			slurm(t, "scancel", "-b", "-s", "USR1", id)
			stays(t, id, log, 3*time.Second, "FAILED", "COMPLETED")
			mustSay(t, log, "srun exited with status 76", "(max_restarts 0)")
			mustNotSay(t, log, "requeueing")
		})

		// The job's own clock: a 2-minute job that stops 90 s before its limit stops by itself
		// about 30 s in, with no signal from anyone (--signal@0 turns Slurm's warning off), and
		// is requeued like one that got the warning. Its rank 0 holds at its second chunk, so
		// the attempt has finished one, however slowly the jobs beside it start.
		t.Run("own-clock", func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			id, log, out := submit(t, "clock", "chunk-1", "stop_margin = 90\n", "--time=2", "--signal=B:USR1@0")
			ctx := clitest.HangGuard(t)
			for !strings.Contains(clitest.ReadFile(log), "srun exited with status") {
				if ctx.Err() != nil || time.Since(start) > 70*time.Second {
					t.Fatalf("job %s did not stop by itself within 70 s:\n%s", id, clitest.ReadFile(log))
				}
				time.Sleep(200 * time.Millisecond)
			}
			if took := time.Since(start); took < 20*time.Second {
				t.Errorf("job %s stopped after %s, before its own clock ran out (about 30 s)", id, took)
			}
			// The script asks Slurm about the job (scontrol) before it requeues: give it time.
			for wait := time.Now(); !strings.Contains(clitest.ReadFile(log), "requeueing job "+id) && time.Since(wait) < 20*time.Second; {
				time.Sleep(200 * time.Millisecond)
			}
			mustSay(t, log, "srun exited with status 75", "stopped by its own clock (stop_margin 90 s", "requeueing job "+id)
			mustNotSay(t, log, "SIGUSR1", "SIGTERM")
			finished(t, id, log, out)
		})

		// TERM to the step of an interactive srun while its rank is 8 frames into its first
		// chunk of 10: every process of the step gets it (proctrack/linuxproc), the rank's
		// ffmpeg children block it, and the rank finishes the chunk within KillWait and exits
		// 130 with it checkpointed.
		t.Run("sigterm-srun", func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(dir, "srun.mkv")
			p := clitest.StartPausedEnv(t, "frames-8", []string{"SLURM_CONF=" + c.Conf()},
				append([]string{"srun", "-J", "ffterm", "-n", "1", "--mpi=pmix", clitest.Bin}, clitest.PassThroughArgs(in, out, 10)...)...)
			// TERM to the job's tasks, as preemption does (srun itself would kill them on TERM).
			slurm(t, "scancel", "-s", "TERM", "-n", "ffterm")
			if code := p.Wait(t); code != fault.ExitCancelled {
				t.Fatalf("srun exit %d, want %d\n%s", code, fault.ExitCancelled, p.Output())
			}
			if !strings.Contains(p.Output(), "stop by SIGTERM: finishing chunk 0 first") {
				t.Errorf("no line on the chunk in flight being finished:\n%s", p.Output())
			}
			clitest.MustNotExist(t, out)
			st := clitest.Run(t, "status", out+".job")
			if st.Code != 0 || !strings.Contains(st.Stdout, "state:      checkpointed") || !regexp.MustCompile(`chunks:\s+1 done, 3 pending, of 4`).MatchString(st.Stdout) {
				t.Fatalf("status: exit %d, want chunk 0 checkpointed\n%s%s\n%s", st.Code, st.Stdout, st.Stderr, p.Output())
			}
		})
	})
}
