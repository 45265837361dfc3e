// Command facefusion swaps faces in videos and images, as one rank on a laptop or as many MPI
// ranks on a cluster. This file is the one place where errors become messages and exit codes.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/facefusion-hpc/facefusion/internal/batch"
	"github.com/facefusion-hpc/facefusion/internal/driver"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
)

// Exit codes, documented in the README; Slurm records them.
const (
	exitOK           = 0
	exitInternal     = 1   // a runtime failure: ffmpeg or ONNX Runtime failed, an I/O error
	exitUsage        = 2   // a bad flag, config key or value; an existing output without --force
	exitInput        = 3   // a source or target that cannot be used
	exitEnvironment  = 4   // a missing model, runtime library or tool: fetch or install it
	exitBusy         = 5   // the job is already running elsewhere (its job folder is claimed)
	exitBatchFailed  = 6   // batch-run: a target failed (recorded, retried by a later run); the others are done
	exitCheckpointed = 75  // stopped by SIGUSR1 or its own clock after progress, restarts left: the batch script requeues it (EX_TEMPFAIL)
	exitNoRequeue    = 76  // stopped by SIGUSR1 or its own clock, checkpointed, but a requeue would not help (no progress, or max_restarts reached)
	exitCancelled    = 130 // stopped by SIGINT or SIGTERM (the user, scancel, Slurm's requeue or preemption); finished chunks are checkpointed too
)

// worldRank is this process's MPI rank once a command has joined the job (0 before): only
// rank 0 reports what every rank saw.
var worldRank int

// gotSignal is the first stopping signal this process received.
var gotSignal atomic.Value

// stopCode is the exit code of a stopped job, as rank 0 decided it for every rank.
func stopCode(next driver.Next) int {
	switch next {
	case driver.Requeue:
		return exitCheckpointed
	case driver.NoRequeue:
		return exitNoRequeue
	}
	return exitCancelled
}

// signalCode is the exit code of a process a signal stopped where rank 0 could not decide for
// the job (in setup, or as a failure after the signal): without a count of new chunks there is
// no evidence a requeue would help, so SIGUSR1 gives 76, never 75.
func signalCode() int {
	if s, _ := gotSignal.Load().(os.Signal); s == syscall.SIGUSR1 {
		return exitNoRequeue
	}
	return exitCancelled
}

// signalNames are the stopping signals as the job folder's STOP file and the messages name them.
var signalNames = map[os.Signal]driver.Signal{os.Interrupt: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGUSR1: "SIGUSR1"}

const usage = `facefusion: face swap for videos and images, from a laptop to a GPU cluster

usage:
  facefusion run -s SOURCE... -t TARGET -o OUTPUT [flags]   swap faces
  facefusion batch-run -s 'GLOB' -t 'GLOB' -o PATTERN [flags] every source against every target matched; see --target-pattern below
  facefusion plan -t TARGET --ranks N [--chunk-frames K]    print how N ranks would split TARGET
  facefusion probe [--execution-device-id auto|cpu|N]       print every rank's host and GPU binding
  facefusion status JOB_DIR                                 chunks and frames done and pending, attempts, rate, ETA
  facefusion models [run flags]                             FaceFusion model files the job needs: found, verified, mismatched, missing
  facefusion version  (or -v, --version)                    the program's version and the commit it was built from
  facefusion job-kind FILE                                  run or batch-run: the command a TOML job file is for
  facefusion help                                           this text

run flags:
`

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printUsage()
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] == "version" || args[0] == "-v" || args[0] == "--version" {
		cmdVersion(os.Stdout)
		return exitOK
	}
	// SIGUSR1 is Slurm's early warning (--signal=USR1@N): checkpoint and come back. SIGTERM
	// (scancel, scontrol requeue, preemption, the time limit) and SIGINT (the user) cancel.
	// Each stops the run the same way; which came first decides the exit code.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGUSR1)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		if s, ok := <-sigs; ok {
			gotSignal.Store(s)
			cancel(signalNames[s])
		}
	}()
	var err error
	switch args[0] {
	case "run":
		err = cmdRun(ctx, args[1:])
	case "batch-run":
		err = cmdBatch(ctx, args[1:])
	case "job-kind":
		err = cmdJobKind(args[1:], os.Stdout)
	case "plan":
		err = cmdPlan(ctx, args[1:], os.Stdout)
	case "probe":
		err = cmdProbe(ctx, args[1:], os.Stdout)
	case "status":
		err = cmdStatus(args[1:], os.Stdout)
	case "models":
		err = cmdModels(ctx, args[1:], os.Stdout)
	default:
		err = fault.AsUsage(fmt.Errorf("unknown command %q (run facefusion help)", args[0]))
	}
	return report(ctx, err)
}

func printUsage() {
	fmt.Fprint(os.Stderr, usage)
	job.Usage(os.Stderr)
}

// report prints err as one line, at the log's error level (printed at every --log-level), and
// chooses the exit code.
func report(ctx context.Context, err error) int {
	if errors.Is(err, job.ErrHelp) {
		printUsage()
		return exitOK
	}
	code, say := classify(ctx, err)
	if say != "" {
		logging.Default().Errorf("%s", say)
	}
	return code
}

// classify is err's exit code, and the line to print for it ("" when it was printed already,
// or is another rank's to print).
func classify(ctx context.Context, err error) (code int, say string) {
	if err == nil {
		return exitOK, ""
	}
	var stopped *driver.Stopped
	if errors.As(err, &stopped) {
		if !stopped.Remote {
			say = stopped.Error()
		}
		return stopCode(stopped.Next), say
	}
	var some *batch.SomeFailed
	if errors.As(err, &some) {
		if worldRank == 0 {
			say = some.Error()
		}
		return exitBatchFailed, say
	}
	var printed *driver.Reported
	if errors.As(err, &printed) { // rank 0 printed it before letting the other ranks go
		return exitCode(fault.KindOf(printed.Err)), ""
	}
	if ctx.Err() != nil { // a signal came first; what failed after it failed because of it
		if worldRank == 0 {
			say = "stopped by a signal; nothing was written to the output path; rerun the same command to resume"
		}
		return signalCode(), say
	}
	var remote *driver.RemoteError
	if errors.As(err, &remote) { // another rank printed it
		return exitCode(remote.Kind), ""
	}
	return exitCode(fault.KindOf(err)), err.Error()
}

func exitCode(k fault.Kind) int {
	switch k {
	case fault.Usage:
		return exitUsage
	case fault.Input:
		return exitInput
	case fault.Environment:
		return exitEnvironment
	case fault.Cancelled:
		return exitCancelled
	case fault.Busy:
		return exitBusy
	}
	return exitInternal
}
