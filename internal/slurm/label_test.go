package slurm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/slurmtest"
)

func TestLabelText(t *testing.T) {
	for in, want := range map[string]string{
		" clip.mp4 ":             "clip.mp4",
		"a\nb\tc":                "a?b?c",
		strings.Repeat("é", 150): strings.Repeat("é", 100),
	} {
		if got := labelText(in); got != want {
			t.Errorf("labelText(%q) = %q, want %q", in, got, want)
		}
	}
}

// The real update, against the test cluster: a sleeping job named facefusion (as the batch
// script names every job) takes the target's name and comment, and a second Label with the same
// (a requeued job's next start) changes nothing.
func TestLabelFromSlurm(t *testing.T) {
	c := slurmtest.Start(t, slurmtest.Options{})
	t.Setenv("SLURM_CONF", c.Conf())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	script := filepath.Join(c.Dir, "sleep.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nsleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := c.Command(ctx, "sbatch", "--parsable", "--job-name=facefusion", "-o", "/dev/null", script).Output()
	if err != nil {
		t.Fatalf("sbatch: %v\n%s", err, c.Logs())
	}
	id, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	defer c.Command(context.Background(), "scancel", id).Run()

	const name, comment = "night clip.mp4", "facefusion run /inbox/night clip.mp4"
	if err := Label(ctx, id, name, comment); err != nil {
		t.Fatalf("Label: %v\n%s", err, c.Logs())
	}
	j, err := Query(ctx, id)
	if err != nil || j.Name != name || j.Comment != comment {
		t.Fatalf("after Label: %+v, %v; want name %q, comment %q", j, err, name, comment)
	}
	if err := Label(ctx, id, name, comment); err != nil {
		t.Errorf("Label again with the same: %v", err)
	}
	if err := Label(ctx, "nope", name, comment); err == nil {
		t.Error("Label of a job id that is none: no error")
	}
	// A name its user chose (sbatch -J, srun -J: scripts find their jobs by it) is kept; the
	// comment, which it has none of, is set.
	out, err = c.Command(ctx, "sbatch", "--parsable", "--job-name=mine", "-o", "/dev/null", script).Output()
	if err != nil {
		t.Fatalf("sbatch: %v\n%s", err, c.Logs())
	}
	mine, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	defer c.Command(context.Background(), "scancel", mine).Run()
	if err := Label(ctx, mine, name, comment); err != nil {
		t.Fatalf("Label: %v\n%s", err, c.Logs())
	}
	if j, err := Query(ctx, mine); err != nil || j.Name != "mine" || j.Comment != comment {
		t.Fatalf("after Label of a named job: %+v, %v; want its name kept, comment %q", j, err, comment)
	}
}
