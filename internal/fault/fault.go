// Package fault classifies errors by who must act on them, so that main alone can turn each
// class into a distinct exit code that Slurm records.
package fault

import (
	"errors"
	"fmt"
	"regexp"
	"syscall"
)

// Kind is the class of a failure.
type Kind int

const (
	Internal    Kind = iota // a bug or an unexpected runtime failure (ffmpeg died, ONNX Runtime failed)
	Usage                   // a bad flag, config key or value; an existing output without --force
	Input                   // a source or target that cannot be used (missing, corrupt, no face)
	Environment             // a missing model file, runtime library or tool: install or fetch it; a full file system or quota: free room
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
	ExitEnvironment  = 4   // a missing model, runtime library or tool: fetch or install it; a full file system or quota (NoRoom): free room
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

// A full file system or quota is the environment's fault, never the file's that was being
// written: batch-run neither quarantines a target for it nor goes on to fill the disk further
// (an Environment failure ends the batch). Every write that can find no room classifies its
// failure through AsNoRoom, so that the code is the same wherever the room ran out.

// roomErrnos are the errors of a write that found no room, with the words a tool (ffmpeg, whose
// words are the C library's) says for each.
var roomErrnos = []struct {
	errno syscall.Errno
	words string
}{
	{syscall.ENOSPC, "no space left on device"},
	{syscall.EDQUOT, "disk quota exceeded"},
	{syscall.EFBIG, "file too large"},
}

// RoomError is a tool's failure whose own words (its stderr) said that its file system or quota
// was full: Words is which, as RoomWhy says it.
type RoomError struct {
	Words string
	Err   error
}

func (e *RoomError) Error() string { return e.Err.Error() }
func (e *RoomError) Unwrap() error { return e.Err }

// RoomWhy is how err says that a file system or quota is full: "no space left on device",
// "disk quota exceeded" or "file too large", from an errno in its chain (ENOSPC, EDQUOT, EFBIG)
// or a tool's words (RoomError); "" when it does not. Never from the message's text, which holds
// file names anyone may choose ("disk quota exceeded.mp4").
func RoomWhy(err error) string {
	if err == nil {
		return ""
	}
	for _, r := range roomErrnos {
		if errors.Is(err, r.errno) {
			return r.words
		}
	}
	var re *RoomError
	if errors.As(err, &re) {
		return re.Words
	}
	return ""
}

// roomSaid matches the C library's message for each room errno where a tool ends a line with it
// ("Error writing trailer of x.mkv: No space left on device"): after ": ", at the line's end, as
// strerror writes it, so that a file name holding the words is not taken for them.
var roomSaid = func() []*regexp.Regexp {
	var res []*regexp.Regexp
	for _, r := range roomErrnos {
		res = append(res, regexp.MustCompile(`(?mi): `+regexp.QuoteMeta(r.errno.Error())+`\r?$`))
	}
	return res
}()

// RoomWords is RoomWhy of a tool's words (ffmpeg's stderr).
func RoomWords(said string) string {
	for i, re := range roomSaid {
		if re.MatchString(said) {
			return roomErrnos[i].words
		}
	}
	return ""
}

// RoomSaid is err as a RoomError when said, the tool's words, say that its file system or quota
// was full; err as it is otherwise.
func RoomSaid(err error, said string) error {
	if w := RoomWords(said); w != "" && err != nil {
		return &RoomError{Words: w, Err: err}
	}
	return err
}

// NoRoom reports whether err is a write that found its file system or quota full (RoomWhy).
func NoRoom(err error) bool { return RoomWhy(err) != "" }

// FreeRoom is the room this user may fill on the file system holding dir (-1 when unknown).
// A quota is not in it: a quota's errors say so themselves (RoomWhy).
func FreeRoom(dir string) int64 {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return -1
	}
	return int64(st.Bavail) * st.Bsize
}

// RoomFix is what to do about a full file system or quota holding dir.
func RoomFix(dir string) string {
	return "free room in " + dir + " (or raise the quota) and rerun the same command"
}

// AsNoRoom is err, a failed write into the folder dir, classified Environment with RoomFix when
// it found no room (NoRoom), whatever it was classified before: the room, not the input or the
// settings, must change. Any other err is returned as it is.
func AsNoRoom(err error, dir string) error {
	if !NoRoom(err) {
		return err
	}
	var fe *Error
	if errors.As(err, &fe) && fe.Kind == Environment {
		return err // said already
	}
	return &Error{Kind: Environment, Err: fmt.Errorf("%w: %s", err, RoomFix(dir))}
}
