package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/slurmtest"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// A job whose attempt no live run holds (killed: the manifest still says running, but no claim)
// has a rate, the one it had, and no time to finish: it finishes when someone reruns it.
func TestStatusNotRunningHasNoETA(t *testing.T) {
	jd := goldenJob(t, lustre.Running, time.Now().UTC())
	var out bytes.Buffer
	if err := cmdStatus([]string{jd.Path}, &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if !strings.Contains(text, "\neta:        - (not running: no claim: killed?)\n") || strings.Contains(text, "at that rate") || !strings.Contains(text, "\nrate: ") {
		t.Errorf("status of a killed job:\n%s", text)
	}
}

// writeRunTOML writes a run's job file naming output, in dir.
func writeRunTOML(t *testing.T, dir, output string) string {
	t.Helper()
	p := filepath.Join(dir, "job.toml")
	if err := os.WriteFile(p, []byte("processors = [\"none\"]\ntarget_path = \"in.mp4\"\noutput_path = \""+output+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// status JOB.toml shows the job of the file as run --config reads it: its job folder while it
// has one, then the run report beside its output; before either, exit 3 naming both.
func TestStatusJobFile(t *testing.T) {
	jd := goldenJob(t, lustre.Checkpointed, goldenTime)
	dir := filepath.Dir(jd.Path)
	toml := writeRunTOML(t, t.TempDir(), filepath.Join(dir, "out.mp4"))
	var byFolder, byFile bytes.Buffer
	if err := cmdStatus([]string{jd.Path}, &byFolder); err != nil {
		t.Fatal(err)
	}
	if err := cmdStatus([]string{toml}, &byFile); err != nil {
		t.Fatal(err)
	}
	if byFile.String() != byFolder.String() {
		t.Errorf("status JOB.toml:\n%s\nstatus JOB_DIR:\n%s", byFile.String(), byFolder.String())
	}
	// Finished: the folder removed, the report beside the output.
	if err := os.RemoveAll(jd.Path); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.mp4")
	if err := os.WriteFile(report.Path(out), []byte(`{"version": 3, "outcome": "complete", "output": "`+out+`", "target": "in.mp4", "frame_end": 10, "chunks": 1, "attempts": [], "finished": "2026-12-01T10:00:00Z"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	byFile.Reset()
	if err := cmdStatus([]string{toml}, &byFile); err != nil || !strings.Contains(byFile.String(), "state:      complete") {
		t.Errorf("status JOB.toml of a finished job: %v\n%s", err, byFile.String())
	}
	r := clitest.Run(t, "status", writeRunTOML(t, t.TempDir(), filepath.Join(t.TempDir(), "never.mp4")))
	if r.Code != fault.ExitInput || !strings.Contains(r.Stderr, "has not started") {
		t.Errorf("status JOB.toml of a job not started: exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
}

// status JOBID asks the real (test) Slurm about a batch job submitted as facefusion.sbatch is,
// with a job file relative to the submit folder, and shows its job folder; without scontrol or
// sacct it says what to give instead.
func TestStatusSlurmJob(t *testing.T) {
	c := slurmtest.Start(t, slurmtest.Options{})
	jd := goldenJob(t, lustre.Checkpointed, goldenTime)
	if err := os.Rename(jd.Path, filepath.Join(c.Dir, "out.mp4.job")); err != nil {
		t.Fatal(err)
	}
	jobs := filepath.Join(c.Dir, "jobs")
	if err := os.Mkdir(jobs, 0o755); err != nil {
		t.Fatal(err)
	}
	writeRunTOML(t, jobs, "out.mp4") // relative: to the submit folder, c.Dir
	script := filepath.Join(c.Dir, "facefusion.sbatch")
	if err := os.WriteFile(script, []byte("#!/bin/bash\nexec sleep 120\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sub, err := c.Command(ctx, "sbatch", "--parsable", "-o", "ff-%j.out", script, "jobs/job.toml").Output()
	if err != nil {
		t.Fatalf("sbatch: %v", err)
	}
	id := strings.TrimSpace(string(sub))
	status := func(env ...string) clitest.Result {
		cmd := clitest.Command(t, "status", id)
		cmd.Env = append(cmd.Env, env...)
		cmd.Dir = t.TempDir() // not the submit folder: the paths are the job's
		return clitest.Exec(t, cmd)
	}
	// Pending: Slurm's line, and the job's folder, which a pending job (one requeued) may
	// have from an earlier run.
	r := status("SLURM_CONF=" + c.Conf())
	if r.Code != 0 || !strings.Contains(r.Stdout, "slurm job:  "+id+" ") || !strings.Contains(r.Stdout, "jobs/job.toml") {
		t.Fatalf("status %s: exit %d\n%s%s", id, r.Code, r.Stdout, r.Stderr)
	}
	for !strings.Contains(r.Stdout, " RUNNING, from scontrol") {
		if ctx.Err() != nil {
			t.Fatalf("job %s never ran; last status:\n%s%s", id, r.Stdout, r.Stderr)
		}
		time.Sleep(250 * time.Millisecond)
		r = status("SLURM_CONF=" + c.Conf())
	}
	if r.Code != 0 || !strings.Contains(r.Stdout, "job folder: "+filepath.Join(c.Dir, "out.mp4.job")+"\n") {
		t.Fatalf("status %s of the running job: exit %d\n%s%s", id, r.Code, r.Stdout, r.Stderr)
	}
	if err := c.Command(ctx, "scancel", id).Run(); err != nil {
		t.Fatal(err)
	}
	if state, _, err := c.WaitJob(ctx, id); err != nil || state != "CANCELLED" {
		t.Fatalf("job %s: %s, %v", id, state, err)
	}
	r = status("SLURM_CONF=" + c.Conf())
	want := "slurm job:  " + id + " CANCELLED (exit "
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, want) || !strings.Contains(r.Stdout, "job folder: "+filepath.Join(c.Dir, "out.mp4.job")+"\n") {
		t.Fatalf("status %s of the cancelled job: exit %d, want it to start %q\n%s%s", id, r.Code, want, r.Stdout, r.Stderr)
	}
	// No Slurm client here: one line saying what to give instead.
	empty := t.TempDir()
	r = status("PATH=" + empty)
	if r.Code != fault.ExitEnvironment || !strings.Contains(r.Stderr, "neither scontrol nor sacct") || !strings.Contains(r.Stderr, "give the job's TOML file") {
		t.Errorf("status %s without Slurm: exit %d\n%s", id, r.Code, r.Stderr)
	}
	if _, err := exec.LookPath("scontrol"); err != nil {
		t.Fatal(err)
	}
}
