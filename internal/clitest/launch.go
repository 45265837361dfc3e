package clitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// Distributed runs under the real launchers (mpirun; srun and sbatch on an internal/slurmtest
// cluster). Pass-through runs encode with lossless ffv1, so "correct" means frame-for-frame
// equal to the target's decoded frames.

// HangGuard bounds a launcher run: a hang fails the test instead of stalling it. It is a safety
// net, not a speed assertion.
func HangGuard(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// LaunchEnv is the test's environment without launcher variables it may have inherited (a test
// run inside a Slurm job or under mpirun must not confuse the ranks it starts) and without
// facefusion's own (FACEFUSION_BIN, the GPU binding, …) but its test hooks (FACEFUSION_TEST_*,
// which a test sets for the runs it starts), plus the fetched cache as facefusion's home.
func LaunchEnv(t testing.TB) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OMPI_") || strings.HasPrefix(kv, "PMIX_") || strings.HasPrefix(kv, "SLURM_") ||
			(strings.HasPrefix(kv, "FACEFUSION_") && !strings.HasPrefix(kv, "FACEFUSION_TEST_")) {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "FACEFUSION_HOME="+filepath.Dir(testenv.Cache(t)))
}

// RunCmd runs cmd to completion and returns its exit code and output; the guard's expiry is a
// test failure.
func RunCmd(t testing.TB, ctx context.Context, cmd *exec.Cmd) Result {
	t.Helper()
	fullTier(t)
	// On expiry: TERM first, which mpirun and srun pass on to the ranks, then KILL.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s hung (stopped by the test's guard)\nstdout:\n%s\nstderr:\n%s", strings.Join(cmd.Args, " "), out.String(), errb.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %s: %v", strings.Join(cmd.Args, " "), err)
	}
	return Result{code, out.String(), errb.String()}
}

// Mpirun runs facefusion as n ranks under mpirun.
func Mpirun(t testing.TB, ctx context.Context, n int, args ...string) Result {
	t.Helper()
	argv := append([]string{"-np", strconv.Itoa(n), "--oversubscribe", "--allow-run-as-root", Bin}, args...)
	cmd := exec.CommandContext(ctx, testenv.Tool(t, "mpirun"), argv...)
	cmd.Env = LaunchEnv(t)
	return RunCmd(t, ctx, cmd)
}

// PassThroughArgs is a run that changes no pixel and encodes losslessly.
func PassThroughArgs(target, out string, chunk int, extra ...string) []string {
	return append([]string{"run", "--processors", "none", "--output-video-encoder", "ffv1",
		"-t", target, "-o", out, "--chunk-frames", strconv.Itoa(chunk)}, extra...)
}

// CheckFrames asserts that out holds exactly the frames want, in order, and the audio.
func CheckFrames(t *testing.T, out string, want []string) {
	t.Helper()
	got, audio := FrameHashesAudio(t, out)
	sameFrames(t, out, got, want)
	if !audio {
		t.Errorf("%s: the target's audio was not kept", out)
	}
}

// CheckFramesOf is CheckFrames against target's frames, both hashed by one ffmpeg
// (FrameHashesOf), the audio found by one ffprobe (HasAudio; Probe runs two on Matroska).
func CheckFramesOf(t *testing.T, out, target string) {
	t.Helper()
	h := FrameHashesOf(t, out, target)
	sameFrames(t, out, h[0], h[1])
	if !HasAudio(t, out) {
		t.Errorf("%s: the target's audio was not kept", out)
	}
}

// HasAudio reports whether path has an audio stream, by one ffprobe.
func HasAudio(t *testing.T, path string) bool {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "a", "-show_entries", "stream=codec_type", "-of", "csv=p=0", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	return strings.Contains(string(out), "audio")
}

// sameFrames asserts that out's frames got are want, in order.
func sameFrames(t *testing.T, out string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s has %d frames, want %d", out, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: frame %d differs from the target's", out, i)
		}
	}
}

// BframeClip is a small H.264 clip with B-frames (so decode order differs from display order
// and a chunk boundary may fall inside a reordered group). The B-frames are checked once a
// test binary for each length: FaceClip gives every later call the same bytes.
func BframeClip(t *testing.T, path string, n int) {
	t.Helper()
	FaceClip(t, path, 160, 120, n, "25", "-preset", "veryfast", "-bf", "3")
	if _, ok := bframesChecked.Load(n); ok && Bin != "" {
		return
	}
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=has_b_frames", "-of", "csv=p=0", path).Output()
	if err != nil || strings.TrimSpace(string(out)) == "0" {
		t.Fatalf("fixture %s has no B-frames (has_b_frames %q, %v)", path, out, err)
	}
	bframesChecked.Store(n, true)
}

// bframesChecked are the lengths of the B-frame clips whose B-frames were seen in this test binary.
var bframesChecked sync.Map

// probeRows are the table rows of probe's output, each split into fields.
func probeRows(t *testing.T, out string) [][]string {
	t.Helper()
	var rows [][]string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && regexp.MustCompile(`^\d+/\d+$`).MatchString(f[0]) {
			rows = append(rows, f)
		}
	}
	return rows
}

// CheckProbe asserts one row per rank, in order, with the node-local rank and the host.
func CheckProbe(t *testing.T, r Result, n int, want string) {
	t.Helper()
	if r.Code != 0 {
		t.Fatalf("probe exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	host, _ := os.Hostname()
	rows := probeRows(t, r.Stdout)
	if len(rows) != n {
		t.Fatalf("%d rows, want %d (one per rank, from rank 0 only):\n%s", len(rows), n, r.Stdout)
	}
	for i, f := range rows {
		// One node: the local rank is the world rank.
		if f[0] != fmt.Sprintf("%d/%d", i, n) || f[1] != fmt.Sprintf("%d/%d", i, n) || f[2] != host {
			t.Errorf("row %d: %q, want rank and local rank %d/%d on %s", i, f, i, n, host)
		}
		line := strings.Join(f[3:], " ")
		if !strings.Contains(line, want) {
			t.Errorf("row %d: binding %q lacks %q", i, line, want)
		}
	}
}

// ExpectedBinding is the binding this machine should report: CPU without the NVIDIA driver, a GPU with it.
func ExpectedBinding() string {
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
		return "GPU"
	}
	return "no GPU: CPU execution"
}
