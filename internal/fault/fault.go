// Package fault classifies errors by who must act on them, so that main alone can turn each
// class into a distinct exit code that Slurm records.
package fault

import "errors"

// Kind is the class of a failure.
type Kind int

const (
	Internal    Kind = iota // a bug or an unexpected runtime failure (ffmpeg died, ONNX Runtime failed)
	Usage                   // a bad flag, config key or value; an existing output without --force
	Input                   // a source or target that cannot be used (missing, corrupt, no face)
	Environment             // a missing model file, runtime library or tool: install or fetch it
	Cancelled               // stopped by a signal before it finished
	// Busy: the job is already running elsewhere (its job folder is claimed); a second copy
	// is refused rather than run twice. Appended last: kinds travel between ranks as numbers.
	Busy
)

// Error carries a Kind with the message the user sees.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func wrap(k Kind, err error) error {
	if err == nil {
		return nil
	}
	var fe *Error
	if errors.As(err, &fe) {
		return err // the innermost classification wins
	}
	return &Error{Kind: k, Err: err}
}

func AsUsage(err error) error       { return wrap(Usage, err) }
func AsInput(err error) error       { return wrap(Input, err) }
func AsEnvironment(err error) error { return wrap(Environment, err) }
func AsInternal(err error) error    { return wrap(Internal, err) }
func AsCancelled(err error) error   { return wrap(Cancelled, err) }
func AsBusy(err error) error        { return wrap(Busy, err) }

// KindOf is the class of err (Internal when it was never classified).
func KindOf(err error) Kind {
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Kind
	}
	return Internal
}

// The exit codes, one table for the program, its run report and the README ("Exit codes");
// Slurm records them. main exits with them and the driver writes them into the run report, so
// the two cannot disagree.
const (
	ExitOK           = 0
	ExitInternal     = 1   // a runtime failure: ffmpeg or ONNX Runtime failed, an I/O error
	ExitUsage        = 2   // a bad flag, config key or value; an existing output without --force
	ExitInput        = 3   // a source or target that cannot be used
	ExitEnvironment  = 4   // a missing model, runtime library or tool: fetch or install it
	ExitBusy         = 5   // the job is already running elsewhere (its job folder is claimed)
	ExitBatchFailed  = 6   // batch-run: a target failed (recorded, retried by a later run); the others are done
	ExitCheckpointed = 75  // stopped by SIGUSR1 or its own clock after progress, restarts left: the batch script requeues it (EX_TEMPFAIL)
	ExitNoRequeue    = 76  // stopped by SIGUSR1 or its own clock, checkpointed, but a requeue would not help (no progress, or max_restarts reached)
	ExitCancelled    = 130 // stopped by SIGINT or SIGTERM (the user, scancel, Slurm's requeue or preemption); finished chunks are checkpointed too
)

// ExitCode is the exit code of a failure of kind k.
func ExitCode(k Kind) int {
	switch k {
	case Usage:
		return ExitUsage
	case Input:
		return ExitInput
	case Environment:
		return ExitEnvironment
	case Cancelled:
		return ExitCancelled
	case Busy:
		return ExitBusy
	}
	return ExitInternal
}
