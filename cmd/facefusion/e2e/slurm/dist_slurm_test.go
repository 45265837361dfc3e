package slurm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/slurmtest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// On a real Slurm cluster: the batch script with 4 tasks, an interactive srun, and probe.
func TestDistSlurm(t *testing.T) {
	// Room for the three launches at once (4×2 + 3 + 2 CPUs): each mostly waits on Slurm.
	c := slurmtest.Start(t, slurmtest.Options{CPUs: 16})
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	clitest.BframeClip(t, in, 30)
	want := clitest.FrameHashes(t, in)
	env := append(clitest.LaunchEnv(t), "SLURM_CONF="+c.Conf())
	command := func(ctx context.Context, name string, args ...string) *exec.Cmd {
		cmd := c.Command(ctx, name, args...)
		cmd.Env = env
		return cmd
	}

	t.Run("sbatch", func(t *testing.T) {
		t.Parallel()
		// The submit folder holds bin/facefusion, where the script looks when FACEFUSION_BIN
		// is not set, and the job file, whose relative paths start there.
		submit := t.TempDir()
		if err := os.Mkdir(filepath.Join(submit, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(clitest.Bin, filepath.Join(submit, "bin", "facefusion")); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "sbatch.mkv")
		toml := fmt.Sprintf("target_path = %q\noutput_path = %q\nprocessors = [\"none\"]\noutput_video_encoder = \"ffv1\"\nchunk_frames = 7\n", in, out)
		if err := os.WriteFile(filepath.Join(submit, "job.toml"), []byte(toml), 0o644); err != nil {
			t.Fatal(err)
		}
		log := filepath.Join(submit, "job.out")
		script := filepath.Join(testenv.Root(t), "sbatch", "facefusion.sbatch")
		// The test cluster has no GPUs: 4 tasks of 2 CPUs, and no --gpus.
		ctx := clitest.HangGuard(t)
		cmd := command(ctx, "sbatch", "--parsable", "-N", "1", "-n", "4", "--ntasks-per-node=4", "--cpus-per-task=2", "-o", log, script, "job.toml")
		cmd.Dir = submit
		r := clitest.RunCmd(t, ctx, cmd)
		if r.Code != 0 {
			t.Fatalf("sbatch: exit %d\n%s%s\n%s", r.Code, r.Stdout, r.Stderr, c.Logs())
		}
		// Watched here rather than with sbatch --wait, whose polling backs off to many seconds.
		id := strings.TrimSpace(r.Stdout)
		state, code := "", ""
		for {
			show, _ := command(ctx, "scontrol", "show", "job", "-o", id).Output()
			if m := regexp.MustCompile(`\bJobState=(\S+).*\bExitCode=(\S+)`).FindSubmatch(show); m != nil {
				state, code = string(m[1]), string(m[2])
			}
			if state != "" && state != "PENDING" && state != "RUNNING" && state != "COMPLETING" && state != "CONFIGURING" {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("job %s still %s when the test's guard ran out", id, state)
			}
			time.Sleep(250 * time.Millisecond)
		}
		logText, _ := os.ReadFile(log)
		if state != "COMPLETED" || code != "0:0" {
			t.Fatalf("job %s ended %s with exit code %s\njob log:\n%s\n%s", id, state, code, logText, c.Logs())
		}
		if !strings.Contains(string(logText), "on 4 rank(s)") || !strings.Contains(string(logText), "srun exited with status 0") {
			t.Errorf("job log does not show a 4-rank run:\n%s", logText)
		}
		clitest.CheckFrames(t, out, want)
	})

	t.Run("srun", func(t *testing.T) {
		t.Parallel()
		out := filepath.Join(dir, "srun.mkv")
		ctx := clitest.HangGuard(t)
		r := clitest.RunCmd(t, ctx, command(ctx, "srun", append([]string{"-n", "3", "--mpi=pmix", clitest.Bin}, clitest.PassThroughArgs(in, out, 4)...)...))
		if r.Code != 0 {
			t.Fatalf("srun: exit %d\n%s\n%s", r.Code, r.Stderr, c.Logs())
		}
		if !strings.Contains(r.Stderr, "on 3 rank(s)") {
			t.Errorf("not a 3-rank run:\n%s", r.Stderr)
		}
		clitest.CheckFrames(t, out, want)
	})

	t.Run("probe", func(t *testing.T) {
		t.Parallel()
		ctx := clitest.HangGuard(t)
		r := clitest.RunCmd(t, ctx, command(ctx, "srun", "-n", "2", "--mpi=pmix", clitest.Bin, "probe"))
		clitest.CheckProbe(t, r, 2, clitest.ExpectedBinding())
		if !strings.Contains(r.Stdout, "started by srun (PMIx) in Slurm job") {
			t.Errorf("launcher not named:\n%s", r.Stdout)
		}
	})
}
