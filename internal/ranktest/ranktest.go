// Package ranktest runs a test on real MPI ranks (MPI has no single-process stand-in for
// point-to-point messages): the test starts its own test binary under mpirun, with a variable
// in the environment that tells each rank to run its part of the cases instead of launching.
package ranktest

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// Command is mpirun running the top-level test t alone (this test binary, -test.run its name)
// on n ranks, with env added to the environment; prefix, when given, is a wrapper's argv that
// each rank is started through (the binary and its flags follow it).
func Command(ctx context.Context, t *testing.T, n int, env []string, prefix ...string) *exec.Cmd {
	t.Helper()
	argv := []string{"-np", strconv.Itoa(n), "--oversubscribe", "--allow-run-as-root"}
	argv = append(argv, prefix...)
	argv = append(argv, os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd := exec.CommandContext(ctx, testenv.Tool(t, "mpirun"), argv...)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Run runs t's test on n ranks (Command), with env ("NAME=value") added, and fails the test
// unless the ranks ran to done, a line one of them prints once every case ran (without it, a
// run that ran no case, a test filter that matched nothing, would pass); a hang (why: its
// likely cause) fails it after a minute, a net, not a speed limit.
func Run(t *testing.T, n int, env, done, why string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := Command(ctx, t, n, []string{env}).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the ranks hung (%s):\n%s", why, out)
	}
	if err != nil || !strings.Contains(string(out), done) {
		t.Fatalf("mpirun -np %d: %v\n%s", n, err, out)
	}
}

// Comm is the communicator of a rank of this test binary, started by mpirun with n ranks (0:
// any number). A failed rank ends them all, rather than leave the others in a collective.
func Comm(t *testing.T, n int) collective.Comm {
	t.Helper()
	comm, err := collective.Init()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			comm.Abort(1)
		}
		comm.Finalize()
	})
	if n > 0 && comm.Size() != n {
		t.Fatalf("%d ranks, want %d", comm.Size(), n)
	}
	return comm
}
