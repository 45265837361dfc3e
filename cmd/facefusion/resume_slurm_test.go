package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/slurmtest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// Preemption on a real Slurm cluster: `scontrol requeue` of a running batch job, and Slurm's
// early warning (USR1 to the batch script, which forwards it and requeues the job itself),
// both restart the job with SLURM_RESTART_COUNT=1; it resumes and its output is the target's
// frames. SIGTERM to the tasks of an interactive srun gives exit 75 and a manifest status reads.
func TestResumeSlurm(t *testing.T) {
	c := slurmtest.Start(t, slurmtest.Options{})
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	bframeClip(t, in, 80)
	want := frameHashes(t, in)
	env := append(launchEnv(t), "SLURM_CONF="+c.Conf())
	script := filepath.Join(testenv.Root(t), "sbatch", "facefusion.sbatch")

	state := func(id string) (string, string) {
		cmd := c.Command(hangGuard(t), "scontrol", "show", "job", "-o", id)
		cmd.Env = env
		out, _ := cmd.Output()
		st := regexp.MustCompile(`JobState=(\S+)`).FindStringSubmatch(string(out))
		rc := regexp.MustCompile(`Restarts=(\d+)`).FindStringSubmatch(string(out))
		if st == nil || rc == nil {
			return "", ""
		}
		return st[1], rc[1]
	}
	// submit starts the batch script on 2 tasks, held at chunk 3 once (the marker keeps the
	// restart from pausing again), and returns the job id once a rank is held there.
	submit := func(t *testing.T, name string) (id, log, out, marker string) {
		sub := t.TempDir()
		os.Mkdir(filepath.Join(sub, "bin"), 0o755)
		if err := os.Symlink(bin, filepath.Join(sub, "bin", "facefusion")); err != nil {
			t.Fatal(err)
		}
		out = filepath.Join(dir, name+".mkv")
		toml := fmt.Sprintf("target_path = %q\noutput_path = %q\nprocessors = [\"none\"]\noutput_video_encoder = \"ffv1\"\nchunk_frames = 8\n", in, out)
		if err := os.WriteFile(filepath.Join(sub, "job.toml"), []byte(toml), 0o644); err != nil {
			t.Fatal(err)
		}
		log = filepath.Join(sub, "job.out")
		marker = filepath.Join(sub, "paused")
		cmd := c.Command(hangGuard(t), "sbatch", "--parsable", "-N", "1", "-n", "2", "--cpus-per-task=2", "-o", log, script, "job.toml")
		cmd.Env = append(env, "FACEFUSION_TEST_PAUSE_AT=chunk-3,"+marker)
		cmd.Dir = sub
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("sbatch: %v", err)
		}
		id = strings.TrimSpace(string(b))
		ctx := hangGuard(t)
		for !strings.Contains(readFile(log), "test pause at chunk-3") {
			if ctx.Err() != nil {
				t.Fatalf("job %s never paused:\n%s\n%s", id, readFile(log), c.Logs())
			}
			time.Sleep(200 * time.Millisecond)
		}
		return id, log, out, marker
	}
	// finished waits for the job to end and checks it restarted once and resumed.
	finished := func(t *testing.T, id, log, out string) {
		ctx := hangGuard(t)
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
					t.Errorf("job %s restarted %s times, want 1", id, restarts)
				}
				break
			}
			if st == "FAILED" || st == "CANCELLED" || st == "TIMEOUT" || ctx.Err() != nil {
				t.Fatalf("job %s is %s:\n%s\n%s", id, st, readFile(log), c.Logs())
			}
			time.Sleep(500 * time.Millisecond)
		}
		text := readFile(log)
		if !strings.Contains(text, "(restart 1)") || !verifiedLine.MatchString(text) || !strings.Contains(text, "srun exited with status 0") {
			t.Errorf("the log does not show a resumed restart:\n%s", text)
		}
		checkFrames(t, out, want)
	}

	t.Run("scontrol-requeue", func(t *testing.T) {
		id, log, out, _ := submit(t, "requeue")
		cmd := c.Command(hangGuard(t), "scontrol", "requeue", id)
		cmd.Env = env
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("scontrol requeue %s: %v %s", id, err, b)
		}
		finished(t, id, log, out)
	})

	t.Run("usr1-to-batch-script", func(t *testing.T) {
		id, log, out, _ := submit(t, "usr1")
		cmd := c.Command(hangGuard(t), "scancel", "-b", "-s", "USR1", id)
		cmd.Env = env
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("scancel: %v %s", err, b)
		}
		finished(t, id, log, out)
		text := readFile(log)
		if !strings.Contains(text, "srun exited with status 75") || !strings.Contains(text, "requeueing job "+id) {
			t.Errorf("the script did not requeue on exit 75:\n%s", text)
		}
	})

	t.Run("sigterm-srun", func(t *testing.T) {
		out := filepath.Join(dir, "srun.mkv")
		p := startPausedEnv(t, "chunk-3", []string{"SLURM_CONF=" + c.Conf()},
			append([]string{"srun", "-J", "ffterm", "-n", "2", "--mpi=pmix", bin}, passThroughArgs(in, out, 8)...)...)
		// TERM to the job's tasks, as preemption does (srun itself would kill them on TERM).
		cmd := c.Command(hangGuard(t), "scancel", "-s", "TERM", "-n", "ffterm")
		cmd.Env = env
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("scancel -s TERM: %v %s", err, b)
		}
		if code := p.wait(t); code != exitCheckpointed {
			t.Fatalf("srun exit %d, want %d\n%s", code, exitCheckpointed, p.output())
		}
		mustNotExist(t, out)
		st := facefusion(t, "status", out+".job")
		if st.code != 0 || !strings.Contains(st.stdout, "state:      checkpointed") || !regexp.MustCompile(`chunks:\s+\d+ done, \d+ pending, of 10`).MatchString(st.stdout) {
			t.Fatalf("status: exit %d\n%s%s", st.code, st.stdout, st.stderr)
		}
	})
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
