package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/batch"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
	"github.com/facefusion-hpc/facefusion/internal/slurm"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// configStatus is the status of the job a TOML job file describes, read as `run --config FILE`
// (or batch-run's, for a file that sets target_pattern) reads it, the defaults and
// facefusion.ini under it: its job folder, else the run report beside its output; a batch's
// folder. sj is the Slurm job that named the file: the file's relative paths start at its
// working folder, as they did for the job.
func configStatus(path string, sj *slurm.Job, w io.Writer) error {
	kind, err := job.KindOf(path)
	if err != nil {
		return fault.AsUsage(fmt.Errorf("status: %w", err))
	}
	args := []string{"--config", path}
	if kind == "batch-run" {
		cfg, err := job.ParseBatch(args)
		if err != nil {
			return fault.AsUsage(fmt.Errorf("status: job file %s: %w", path, err))
		}
		rebase(&cfg, sj)
		return batchStatus(w, batch.DirFor(cfg), &cfg)
	}
	cfg, err := job.ParseLoose(args)
	if err != nil {
		return fault.AsUsage(fmt.Errorf("status: job file %s: %w", path, err))
	}
	if cfg.OutputPath == "" {
		return fault.AsUsage(fmt.Errorf("status: job file %s sets no output_path: its job has no folder to show; give the job folder instead", path))
	}
	rebase(&cfg, sj)
	folder := jobFolderOf(cfg)
	if _, ok, _ := (&lustre.JobDir{Path: folder}).ReadManifest(); ok {
		return jobStatus(folder, w)
	}
	if _, ok, _ := report.Read(cfg.OutputPath); ok {
		return reportStatus(cfg.OutputPath, w)
	}
	return fault.AsInput(fmt.Errorf("status: the job of %s has not started, or its folder was removed with no run report left: there is no job folder %s and no run report beside %s", path, folder, cfg.OutputPath))
}

// rebase makes cfg's paths relative to the working folder of the Slurm job sj, as the job
// itself read them; nothing without one.
func rebase(cfg *job.Config, sj *slurm.Job) {
	if sj == nil {
		return
	}
	for _, p := range []*string{&cfg.OutputPath, &cfg.JobDir, &cfg.OutputPattern, &cfg.TargetPattern, &cfg.SourcePattern, &cfg.BatchDir} {
		*p = sj.Path(*p)
	}
}

// jobFolderOf is the job folder of cfg's run: the folder asked for (job_dir, else OUTPUT.job)
// when it holds a job, else the one run would choose (lustre.Resolve: inside a folder it did not
// create, a subfolder). Resolve refuses, to run in, folders that status still reads (a
// colleague's): then the subfolder of job_dir, or OUTPUT.job.
func jobFolderOf(cfg job.Config) string {
	requested := cfg.JobDir
	if requested == "" {
		requested = lustre.DefaultPath(cfg.OutputPath)
	}
	if _, err := os.Stat((&lustre.JobDir{Path: requested}).Manifest()); err == nil {
		return requested
	}
	if path, _, err := lustre.Resolve(cfg.JobDir, cfg.OutputPath); err == nil {
		return path
	}
	if cfg.JobDir == "" {
		return requested
	}
	return filepath.Join(requested, filepath.Base(lustre.DefaultPath(cfg.OutputPath)))
}

// slurmStatus is the status of Slurm job id: the job as scontrol or sacct describes it, then
// the status of the job file (or output) its command line names.
func slurmStatus(id string, w io.Writer) error {
	instead := "give the job's TOML file, its output or its job folder instead"
	j, err := slurm.Query(context.Background(), id)
	if errors.Is(err, slurm.ErrNoTools) {
		return fault.AsEnvironment(fmt.Errorf("status: %s is a Slurm job id, but neither scontrol nor sacct is on PATH here: %s", id, instead))
	}
	if err != nil {
		return fault.AsInput(fmt.Errorf("status: %s: %s", safefs.Clip(err.Error()), instead))
	}
	line := fmt.Sprintf("slurm job:  %s %s", safefs.Name(j.ID, safefs.HostLen), safefs.Name(j.State, safefs.ExcerptLen))
	switch {
	case j.State == "PENDING" && j.Reason != "" && j.Reason != "None":
		line += " (" + safefs.Name(j.Reason, safefs.ExcerptLen) + ")"
	case !j.Running():
		line += " (exit " + safefs.Name(j.ExitCode, safefs.ExcerptLen) + ")"
	}
	fmt.Fprintf(w, "%s, from %s\n", line, j.From)
	fmt.Fprintf(w, "command:    %s (in %s)\n", safefs.Name(j.Command, safefs.PathLen), safefs.Name(j.WorkDir, safefs.PathLen))
	target := j.JobFile(isFile)
	if target == "" {
		target = j.Output()
	}
	if target == "" {
		return fault.AsInput(fmt.Errorf("status: Slurm job %s's command names no TOML job file and no output (-o): not a facefusion job, or launched in a way status cannot follow: %s", id, instead))
	}
	if strings.HasSuffix(target, ".toml") && !isFile(target) {
		return fault.AsInput(fmt.Errorf("status: Slurm job %s's job file %s is not there (moved or removed since): %s", id, safefs.Name(target, safefs.PathLen), instead))
	}
	err = statusOf(target, &j, w)
	if j.State == "PENDING" && fault.KindOf(err) == fault.Input {
		// Nothing run yet (a requeued job, which has, shows its folder through statusOf).
		fmt.Fprintf(w, "state:      waiting in Slurm's queue: nothing has run yet (%s)\n", safefs.Name(target, safefs.PathLen))
		return nil
	}
	return err
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
