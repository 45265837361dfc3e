package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/driver"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/progress"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/slurm"
	"github.com/facefusion-hpc/facefusion/rank"
)

// cmdRun is `facefusion run`: every rank of the launch takes its share of the target.
func cmdRun(ctx context.Context, args []string) error {
	cfg, log, comm, gpu, err := joinJob(args, job.Parse)
	if err != nil {
		return err
	}
	defer comm.Finalize()
	if comm.Rank() == 0 {
		defer labelJob(ctx, log, filepath.Base(cfg.TargetPath), "facefusion run "+cfg.TargetPath)()
	}
	start := time.Now()
	var rep *report.Report
	out, err := driver.Run(ctx, comm, cfg, driver.Options{Log: log, NewProgress: newProgress(log), Done: func(r *report.Report) { rep = r }, GPU: gpu})
	if err != nil {
		return err
	}
	if comm.Rank() == 0 {
		line := fmt.Sprintf("done in %.1f s on %d rank(s)", time.Since(start).Seconds(), comm.Size())
		if rep != nil && len(rep.Attempts) > 1 {
			// Earlier attempts as their manifest records them; this one as measured here.
			total := rep.Seconds - rep.LastSeconds + time.Since(start).Seconds()
			line += fmt.Sprintf(" (this attempt); the job took %.1f s over %d attempts", total, len(rep.Attempts))
		}
		log.Infof("%s", line)
		fmt.Println(out)
	}
	return nil
}

// labelJob names the Slurm job this process runs in after its work (slurm.Label), so that
// squeue and sacct tell one facefusion job from another; outside Slurm it does nothing. It runs
// beside the job (a slow or refusing slurmctld costs a debug line, not the start's time); the
// returned func waits for it, so that the process does not end before the update does.
func labelJob(ctx context.Context, log *logging.Logger, name, comment string) (wait func()) {
	id := slurm.FromEnv().Query() // an array task alone, not every task of its array
	if id == "" {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := slurm.Label(context.WithoutCancel(ctx), id, name, comment); err != nil {
			log.Debugf("slurm job %s keeps its name and comment: %v", id, err)
		}
	}()
	return func() { <-done }
}

// bindGPU sets cfg.Device to the rank's GPU when the job uses one (its binding:
// CUDA_VISIBLE_DEVICES by node-local rank, unless execution_device_ids says otherwise) and
// returns that GPU for the run report's telemetry (driver.Options.GPU); nil on CPU providers.
func bindGPU(comm collective.Comm, cfg *job.Config) (*rank.Binding, error) {
	if !cfg.UsesGPU() {
		return nil, nil
	}
	id, err := rank.Identify(comm.Rank(), comm.Size(), comm.LocalRank(), comm.LocalSize(), rank.Options{})
	if err != nil {
		return nil, fault.AsEnvironment(err)
	}
	cfg.Device = cfg.DeviceFor(comm.LocalRank(), id.GPU.Device)
	if cfg.Device != id.GPU.Device { // execution_device_ids chose another: describe that one
		if other, err := rank.Identify(comm.Rank(), comm.Size(), comm.LocalRank(), comm.LocalSize(), rank.Options{Device: strconv.Itoa(cfg.Device)}); err == nil {
			id = other
		}
	}
	return &id.GPU, nil
}

// joinJob is the start of a command every rank of a launch runs (run, batch-run): its
// settings parsed by parse, the job's log, MPI, and the rank's GPU (nil on CPU providers). The
// caller finalizes comm when err is nil.
func joinJob(args []string, parse func([]string) (job.Config, error)) (job.Config, *logging.Logger, collective.Comm, *rank.Binding, error) {
	cfg, err := parse(args)
	if err != nil {
		if errors.Is(err, job.ErrHelp) {
			return cfg, nil, nil, nil, err
		}
		return cfg, nil, nil, nil, fault.AsUsage(err)
	}
	log := useLog(cfg)
	comm, err := collective.Init()
	if err != nil {
		return cfg, nil, nil, nil, fault.AsEnvironment(err)
	}
	worldRank = comm.Rank()
	log = log.WithRank(comm.Rank())
	adoptLog(log)
	if comm.Rank() == 0 {
		for _, note := range cfg.IgnoredNotes() {
			log.Infof("%s", note)
		}
	}
	log.Debugf("one of %d rank(s): %s %s (commit %s), log level %s, temp folder %s", comm.Size(), programName, version, commit(), cfg.LogLevel, cfg.TempDir())
	given := len(cfg.ExecutionProviders) > 0
	if cfg, err = settleProviders(comm, cfg, os.LookupEnv); err != nil {
		comm.Finalize()
		return cfg, nil, nil, nil, err
	}
	if !given {
		log.Debugf("execution providers: %s, FaceFusion's default (the first the runtime has)", strings.Join(cfg.ExecutionProviders, " "))
	}
	if why := unusedProviderLibrary(cfg, given); why != "" && comm.Rank() == 0 {
		log.Warnf("%s", why)
	}
	gpu, err := bindGPU(comm, &cfg)
	if err != nil {
		comm.Finalize()
		return cfg, nil, nil, nil, err
	}
	return cfg, log, comm, gpu, nil
}

// useLog makes the job's log level the process's: every rank logs at it.
func useLog(cfg job.Config) *logging.Logger {
	level, err := logging.ParseLevel(cfg.LogLevel)
	if err != nil { // job.Parse validated it
		panic(err)
	}
	log := logging.New(os.Stderr, level)
	adoptLog(log)
	return log
}

// adoptLog makes log the one main reports errors to and slog's default, so that a library
// logging through slog prints the program's lines, at its level.
func adoptLog(log *logging.Logger) {
	procLog = log
	slog.SetDefault(log.Slog())
}

// newProgress draws a bar on a terminal and plain lines every 10 s otherwise (batch logs), when
// the log shows info lines.
func newProgress(log *logging.Logger) pipeline.ProgressFunc {
	return func(total int) (progress.Counter, func()) {
		switch {
		case !log.Enabled(logging.Info):
			return progress.Nop{}, func() {}
		case term.IsTerminal(int(os.Stderr.Fd())):
			b := progress.NewBar(os.Stderr, total, "frames")
			return b, b.Close
		}
		l := progress.NewLines(log.Writer(logging.Info), total, "progress", 10*time.Second)
		return l, l.Close
	}
}
