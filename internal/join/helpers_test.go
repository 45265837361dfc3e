package join

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

// underMpirun runs this test binary's test name on n ranks under mpirun, with env added, and
// fails the test unless the ranks ran to done (a line rank 0 prints); a hang (why: its likely
// cause) fails it after a minute, a net, not a speed limit.
func underMpirun(t *testing.T, n int, name, env, done, why string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Tool(t, "mpirun"), "-np", strconv.Itoa(n), "--oversubscribe", "--allow-run-as-root",
		os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), env)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the ranks hung (%s):\n%s", why, out)
	}
	if err != nil || !strings.Contains(string(out), done) {
		t.Fatalf("mpirun -np %d: %v\n%s", n, err, out)
	}
}

// testRanks is the communicator of one of n ranks of this test binary started by mpirun. A
// rank whose test failed aborts them all rather than leave the others in a collective.
func testRanks(t *testing.T, n int) collective.Comm {
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
	if comm.Size() != n {
		t.Fatalf("%d ranks, want %d", comm.Size(), n)
	}
	return comm
}

// clip writes a 96x64 H.264 clip of frames frames at rate to path.
func clip(t *testing.T, path string, frames int, rate string) {
	t.Helper()
	out, err := exec.Command(testenv.Tool(t, "ffmpeg"), "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=96x64:r="+rate,
		"-frames:v", strconv.Itoa(frames), "-c:v", "libx264", "-pix_fmt", "yuv420p", path).CombinedOutput()
	if err != nil {
		t.Fatalf("making %s: %v %s", path, err, out)
	}
}
