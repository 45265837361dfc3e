package video

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// A rank's decoders and encoders must outlive the signals that ask it to stop: Slurm signals
// every process of a step (proctrack/linuxproc walks the process tree, proctrack/pgid the
// process group) and mpirun its ranks' groups, so an ffmpeg child gets the step's SIGUSR1 and
// SIGTERM too. ffmpeg dies of a SIGUSR1 and ends its output early on a SIGTERM (its own handler,
// installed whatever it inherits, so ignoring the signal in the child does not help), and the
// chunk in flight could not be finished. Blocked signals survive exec and ffmpeg never unblocks
// them: the child is started as this very program (/proc/self/exe, whatever has become of its
// file) under the name shieldName, which blocks both and becomes the tool. Only this process
// then decides when a segment ends: it closes the encoder's input, or kills it (SIGKILL, which
// nothing blocks). SIGINT still reaches ffmpeg: it stops at once anyway. A signal in the
// shield's first milliseconds, before its init has blocked them, still ends it: rare, and a
// stop then loses that chunk, as every stop did before.

// shieldName is argv[0] of this program re-run as a shield; argv[1] is the tool's path.
const shieldName = "facefusion-ffmpeg-shield"

// selfExe runs this process's own executable file.
const selfExe = "/proc/self/exe"

func init() {
	if len(os.Args) >= 2 && os.Args[0] == shieldName {
		becomeShielded(os.Args[1], os.Args[1:])
	}
}

// becomeShielded blocks SIGTERM and SIGUSR1 and execs path with argv; it returns only by
// exiting, 127 when the exec failed (the shell's code for a command not found).
func becomeShielded(path string, argv []string) {
	runtime.LockOSThread() // the mask is the thread's, and exec keeps the calling thread's
	var set unix.Sigset_t
	for _, s := range []unix.Signal{unix.SIGTERM, unix.SIGUSR1} {
		set.Val[(s-1)/64] |= 1 << ((uint(s) - 1) % 64)
	}
	err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, nil)
	if err == nil {
		err = unix.Exec(path, argv, os.Environ())
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
	os.Exit(127)
}

// shielded builds a decoder's or encoder's child (command) that SIGTERM and SIGUSR1 do not
// reach. Where this program's executable cannot be run again (no /proc), a shell that ignores
// SIGUSR1 execs the tool instead: a SIGTERM to the step then ends the chunk in flight.
func shielded(ctx context.Context, prog string, args []string) (*exec.Cmd, *stderrTail) {
	path, err := exec.LookPath(prog)
	if err != nil || !canShield() {
		return command(ctx, prog, args)
	}
	cmd := exec.CommandContext(ctx, selfExe)
	cmd.Args = append([]string{shieldName, path}, args...)
	return withTail(cmd)
}

// canShield reports whether this program's executable can be started again.
func canShield() bool {
	fi, err := os.Stat(selfExe)
	return err == nil && fi.Mode().IsRegular()
}
