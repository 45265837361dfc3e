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

	"github.com/facefusion-hpc/facefusion/internal/batch"
	"github.com/facefusion-hpc/facefusion/internal/driver"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
)

// Exit codes: fault's one table (the run report writes the same numbers), under the names the
// tests use.
const (
	exitOK           = fault.ExitOK
	exitInternal     = fault.ExitInternal
	exitUsage        = fault.ExitUsage
	exitInput        = fault.ExitInput
	exitEnvironment  = fault.ExitEnvironment
	exitBusy         = fault.ExitBusy
	exitBatchFailed  = fault.ExitBatchFailed
	exitCheckpointed = fault.ExitCheckpointed
	exitNoRequeue    = fault.ExitNoRequeue
	exitCancelled    = fault.ExitCancelled
)

// worldRank is this process's MPI rank once a command has joined the job (0 before): only
// rank 0 reports what every rank saw.
var worldRank int

// procLog is where main reports a command's error: stderr at info until the command has read
// its --log-level (useLog), then the job's log, naming the rank once the process joined the job.
var procLog = logging.New(os.Stderr, logging.Info)

// signalNames are the stopping signals as the job folder's STOP file and the messages name them.
var signalNames = map[os.Signal]driver.Signal{os.Interrupt: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGUSR1: "SIGUSR1"}

const usage = `facefusion: face swap for videos and images, from a laptop to a GPU cluster

usage:
  facefusion run -s SOURCE... -t TARGET -o OUTPUT [flags]   swap faces (headless-run: the same, FaceFusion's name)
  facefusion batch-run -s 'GLOB' -t 'GLOB' -o PATTERN [flags] every source against every target matched; see --target-pattern below
  facefusion plan -t TARGET --ranks N [--chunk-frames K]    print how N ranks would split TARGET, and the modelled wall time
  facefusion plan --frames F --ranks N [--costs REPORT]     the modelled wall time, efficiency and serial share (plan --help)
  facefusion probe [--execution-device-ids auto|cpu|N...]   print every rank's host, GPU binding and ONNX Runtime providers
  facefusion status JOB_DIR|OUTPUT|JOB.toml|SLURM_JOB_ID   chunks and frames done and pending, attempts, rate, ETA
  facefusion status BATCH_DIR|BATCH.toml                    a batch's entries: done, failed, quarantined, pending, running
  facefusion faces -t IMAGE [run flags]                     print, as JSON, the faces the job finds in IMAGE and the ones it selects
  facefusion models [run flags]                             every FaceFusion model file: verified, mismatched, no published hash, refused, missing
  facefusion force-download [run flags] [--all] [--force]   download the job's (or all) FaceFusion model files into models_dir, each sha256-verified
      [--download-providers github huggingface]           FaceFusion's hosts, tried in this order (the default)
      [--download-base-url URL]                           or a site mirror: a folder of FaceFusion's file names
      [--trust-mirror-crc32]                              accept a mirror's .hash (CRC32) for files with no published sha256
      [--download-min-rate KIB_PER_S]                     abandon a try averaging less (default 10; 0: no floor) over
      [--download-rate-window SECONDS]                    each window of this (default 60); the next try resumes it
      [--download-timeout SECONDS]                        the most one file may take, every URL and try (default 7200)
  facefusion version  (or -v, --version)                    the program's version and the commit it was built from
  facefusion config-kind FILE                               run or batch-run: the command a TOML job file is for (job-kind: the same)
  facefusion help                                           this text
FaceFusion's benchmark and job-* commands are not here: each says what to use instead.

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
	// Each stops the run the same way; which came first decides the exit code. A later, more
	// urgent one (INT or TERM after USR1) shortens the stop under way.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGUSR1)
	defer signal.Stop(sigs)
	ctx, tell := driver.WithLaterSignals(context.Background())
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		cancel(signalNames[<-sigs])
		for s := range sigs {
			tell(signalNames[s])
		}
	}()
	var err error
	switch args[0] {
	case "run", "headless-run": // FaceFusion's headless-run is run without its UI: ours has none
		err = cmdRun(ctx, args[1:])
	case "batch-run":
		err = cmdBatch(ctx, args[1:])
	case "config-kind", "job-kind": // job-kind, its first name, for batch scripts that call it
		err = cmdJobKind(args[1:], os.Stdout)
	case "plan":
		err = cmdPlan(ctx, args[1:], os.Stdout)
	case "probe":
		err = cmdProbe(ctx, args[1:], os.Stdout)
	case "status":
		err = cmdStatus(args[1:], os.Stdout)
	case "faces":
		err = cmdFaces(args[1:], os.Stdout)
	case "models":
		err = cmdModels(ctx, args[1:], os.Stdout)
	case "force-download":
		err = cmdForceDownload(ctx, args[1:], os.Stdout)
	default:
		if instead, ok := notHere[args[0]]; ok {
			err = fault.AsUsage(fmt.Errorf("%s is FaceFusion's command, not this program's: %s", args[0], instead))
			break
		}
		err = fault.AsUsage(fmt.Errorf("unknown command %q (run facefusion help)", args[0]))
	}
	return exitCode(ctx, err)
}

// notHere are FaceFusion 3.8.1's commands this program does not have, with what to use instead.
// Its job-* commands keep a store of queued jobs and their steps; here a job is its TOML file,
// its job folder and its run report, which run, batch-run, plan and status work on.
var notHere = map[string]string{
	"benchmark":       "time a job with `facefusion plan` (the modelled wall time) or a run's report (OUTPUT.report.json)",
	"job-list":        "a job is a TOML file and its job folder: `facefusion status JOB_DIR` shows one's progress",
	"job-create":      "write a TOML job file (configs/default.toml shows every key) and run it with `facefusion run --config FILE`",
	"job-submit":      "run a TOML job file with `facefusion run --config FILE` (sbatch sbatch/facefusion.sbatch FILE on a cluster)",
	"job-submit-all":  "run many targets in one launch with `facefusion batch-run` (or sbatch sbatch/facefusion.sbatch FILE)",
	"job-delete":      "a job is its TOML file and its job folder: delete those",
	"job-delete-all":  "a job is its TOML file and its job folder: delete those",
	"job-add-step":    "a job is one step here: write another TOML job file, or batch-run many targets",
	"job-remix-step":  "a job is one step here: run a second job whose target is the first one's output",
	"job-insert-step": "a job is one step here: write another TOML job file, or batch-run many targets",
	"job-remove-step": "a job is one step here: delete the TOML job file you do not want to run",
	"job-run":         "run a TOML job file with `facefusion run --config FILE`",
	"job-run-all":     "run many targets in one launch with `facefusion batch-run`",
	"job-retry":       "rerun the same command: a stopped or failed run resumes from its job folder (`facefusion status JOB_DIR` says where it stands)",
	"job-retry-all":   "rerun the same batch-run command: every target resumes from its job folder",
}

func printUsage() {
	fmt.Fprint(os.Stderr, usage)
	job.Usage(os.Stderr)
}

// exitCode prints err as one line, at the log's error level (printed at every --log-level), and
// chooses the exit code.
func exitCode(ctx context.Context, err error) int {
	if errors.Is(err, job.ErrHelp) {
		printUsage()
		return exitOK
	}
	code, say := classify(ctx, err)
	if say != "" {
		procLog.Errorf("%s", say)
	}
	return code
}

// classify is err's exit code, and the line to print for it ("" when it was printed already,
// or is another rank's to print). A run's code is driver.ExitStatus: the number rank 0's run
// report records.
func classify(ctx context.Context, err error) (code int, say string) {
	if err == nil {
		return exitOK, ""
	}
	var stopped *driver.Stopped
	var some *batch.SomeFailed
	if !errors.As(err, &stopped) && errors.As(err, &some) {
		if worldRank == 0 {
			say = some.Error()
		}
		return exitBatchFailed, say
	}
	code = driver.ExitStatus(ctx, err)
	var printed *driver.Reported
	var remote *driver.RemoteError
	switch {
	case errors.As(err, &stopped):
		if !stopped.Remote {
			say = stopped.Error()
		}
	case errors.As(err, &printed): // rank 0 printed it before letting the other ranks go
	case ctx.Err() != nil: // a signal came first; what failed after it failed because of it
		if worldRank == 0 {
			say = "stopped by a signal; nothing was written to the output path; rerun the same command to resume"
		}
	case errors.As(err, &remote): // another rank printed it
	default:
		say = err.Error()
	}
	return code, say
}
