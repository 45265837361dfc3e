// Command facefusion swaps faces in videos and images, as one rank on a laptop or as many MPI
// ranks on a cluster. This file is the one place where errors become messages and exit codes.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/facefusion-hpc/facefusion/internal/driver"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
)

// Exit codes, documented in the README; Slurm records them.
const (
	exitOK          = 0
	exitInternal    = 1   // a runtime failure: ffmpeg or ONNX Runtime failed, an I/O error
	exitUsage       = 2   // a bad flag, config key or value; an existing output without --force
	exitInput       = 3   // a source or target that cannot be used
	exitEnvironment = 4   // a missing model, runtime library or tool: fetch or install it
	exitCancelled   = 130 // stopped by SIGINT/SIGTERM before it finished
)

// worldRank is this process's MPI rank once a command has joined the job (0 before): only
// rank 0 reports what every rank saw.
var worldRank int

const usage = `facefusion: face swap for videos and images, from a laptop to a GPU cluster

usage:
  facefusion run -s SOURCE... -t TARGET -o OUTPUT [flags]   swap faces
  facefusion plan -t TARGET --ranks N [--chunk-frames K]    print how N ranks would split TARGET
  facefusion probe [--execution-device-id auto|cpu|N]       print every rank's host and GPU binding
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
	// SIGUSR1 is Slurm's early warning (--signal=USR1@N); it stops the run like SIGTERM.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGUSR1)
	defer stop()
	var err error
	switch args[0] {
	case "run":
		err = cmdRun(ctx, args[1:])
	case "plan":
		err = cmdPlan(ctx, args[1:], os.Stdout)
	case "probe":
		err = cmdProbe(ctx, args[1:], os.Stdout)
	default:
		err = fault.AsUsage(fmt.Errorf("unknown command %q (run facefusion help)", args[0]))
	}
	return report(ctx, err)
}

func printUsage() {
	fmt.Fprint(os.Stderr, usage)
	job.Usage(os.Stderr)
}

// report prints err as one line and chooses the exit code.
func report(ctx context.Context, err error) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, job.ErrHelp) {
		printUsage()
		return exitOK
	}
	if ctx.Err() != nil { // a signal came first; what failed after it failed because of it
		if worldRank == 0 {
			fmt.Fprintln(os.Stderr, "facefusion: stopped by a signal; nothing was written to the output path")
		}
		return exitCancelled
	}
	var remote *driver.RemoteError
	if errors.As(err, &remote) { // another rank printed it
		return exitCode(remote.Kind)
	}
	fmt.Fprintln(os.Stderr, "facefusion: "+err.Error())
	return exitCode(fault.KindOf(err))
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
	}
	return exitInternal
}
