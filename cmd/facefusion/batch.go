package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/facefusion-hpc/facefusion/internal/batch"
	"github.com/facefusion-hpc/facefusion/internal/driver"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// cmdBatch is `facefusion batch-run`: every entry of FaceFusion's patterns, one job after
// another on every rank of the launch, in one process (the runtime, the landmark model and
// passed output checks are shared by the targets).
//
// A task of a job array with nothing left to pull exits 0 before MPI starts (batch.Idle), so
// that it gives its allocation back at once.
func cmdBatch(ctx context.Context, args []string) error {
	if cfg, err := job.ParseBatch(args); err == nil {
		if idle, why := batch.Idle(cfg); idle {
			if launchRank() == "0" { // one line for the launch, not one a rank
				useLog(cfg).Infof("%s", why)
			}
			return nil
		}
	}
	cfg, log, comm, gpu, err := joinJob(args, job.ParseBatch)
	if err != nil {
		return err
	}
	defer comm.Finalize()
	if comm.Rank() == 0 {
		pattern := cfg.TargetPattern
		defer labelJob(ctx, log, filepath.Join(filepath.Base(filepath.Dir(pattern)), filepath.Base(pattern)), "facefusion batch-run "+pattern)()
	}
	sum, err := batch.Run(ctx, comm, cfg, batch.Options{Log: log,
		Driver:       driver.Options{Log: log, NewProgress: newProgress(log), GPU: gpu},
		ExitCode:     func(err error) int { code, _ := classify(ctx, err); return code },
		WaitSettling: startedByHand()})
	if sum != nil { // rank 0
		code, _ := classify(ctx, err)
		sum.Finish(cfg, code, err)
		path := sum.Path
		switch {
		case err == nil:
			log.Infof("batch: %s (%s); summary %s", sum.Outcome, counts(sum), path)
		case !errors.As(err, new(*batch.SomeFailed)) && len(sum.Entries) > 0:
			log.Infof("batch: %s; summary %s", counts(sum), path)
		}
		for _, r := range sum.Entries {
			if r.State == batch.Done { // quoted where a control character would reach the terminal or split the line
				fmt.Println(safefs.Name(r.Output, safefs.PathLen))
			}
		}
	}
	return err
}

// startedByHand reports whether someone at a terminal started this run, so that a target still
// being copied is waited for: the process has a controlling terminal, which cron, sbatch,
// scrontab and srun's tasks have not, and it is no task of a job array (those leave a young
// target to the next run, or to another task).
func startedByHand() bool {
	if os.Getenv("SLURM_ARRAY_TASK_ID") != "" {
		return false
	}
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return false
	}
	tty.Close()
	return true
}

// launchRank is this process's rank as its launcher tells it before MPI starts ("0" outside
// a launch).
func launchRank() string {
	for _, k := range []string{"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return "0"
}

// counts is "2 done, 1 failed" in the states' order.
func counts(s *batch.Summary) string {
	out := ""
	for _, st := range batch.States {
		if n := s.Counts[st]; n > 0 {
			if out != "" {
				out += ", "
			}
			out += fmt.Sprintf("%d %s", n, st)
		}
	}
	if out == "" {
		return "no entries"
	}
	return out
}

// cmdJobKind is `facefusion config-kind FILE`: which command a TOML job file is for (the batch
// script asks, so that one script runs both).
func cmdJobKind(args []string, w io.Writer) error {
	if len(args) != 1 {
		return fault.AsUsage(fmt.Errorf("config-kind takes one TOML job file, got %d arguments", len(args)))
	}
	kind, err := job.KindOf(args[0])
	if err != nil {
		return fault.AsUsage(err)
	}
	fmt.Fprintln(w, kind)
	return nil
}
