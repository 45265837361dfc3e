package slurmtest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestClusterRunsStepsAndBatchJobs(t *testing.T) {
	c := Start(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	out, err := c.Command(ctx, "srun", "-n", "3", "--mpi=none", "sh", "-c", "echo task $SLURM_PROCID of $SLURM_NTASKS").CombinedOutput()
	if err != nil {
		t.Fatalf("srun: %v\n%s\n%s", err, out, c.Logs())
	}
	for _, want := range []string{"task 0 of 3", "task 1 of 3", "task 2 of 3"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("srun output lacks %q:\n%s", want, out)
		}
	}

	// sbatch --wait returns the job's exit status: the launch scripts rely on it.
	script := filepath.Join(c.Dir, "job.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho batch on $SLURM_JOB_NODELIST\nexit 7\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err = c.Command(ctx, "sbatch", "--wait", "-o", filepath.Join(c.Dir, "job.out"), script).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("sbatch --wait of a script exiting 7: err %v, want exit status 7\n%s\n%s", err, out, c.Logs())
	}
	log, _ := os.ReadFile(filepath.Join(c.Dir, "job.out"))
	if !strings.Contains(string(log), "batch on "+c.Node) {
		t.Fatalf("job output %q lacks the node name %s", log, c.Node)
	}
}
