package resume

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// What a stop keeps when the ranks' shares cut chunks: 200 frames in chunks of 20 on 4 ranks
// give shares of 50 that cut chunks 2 and 7 in halves, each half on another rank. Every rank
// is held once it has written 25 frames, mid-chunk (the pause hook, so the place is the same
// on any machine), then Slurm's USR1 comes with 10 minutes left: each rank finishes the chunk
// in flight, and what it wrote is kept: a rank that wrote its part of its neighbour's
// chunk first would lose those frames on a stop.
func TestStopKeepsWhatSharesWrote(t *testing.T) {
	kept, written, out := framesKept(t)
	t.Logf("frames kept over frames written: %d of %d (%.2f)", kept, written, float64(kept)/float64(written))
	// A rank's frames in flight past its chunk's end (the stream's look-ahead, a frame or two
	// under load) are written and not kept: the goal is a share, not every frame.
	if kept != 160 || float64(kept) < 0.95*float64(written) {
		t.Errorf("kept %d of %d frames written, want 160 (each rank's chunk in flight finished) and at least 95 %% of those written:\n%s", kept, written, out)
	}
}

// BenchmarkStopKeeps reports TestStopKeepsWhatSharesWrote's frames kept over frames written.
//
//	go test -run '^$' -bench StopKeeps -benchtime 1x ./cmd/facefusion/e2e/resume
func BenchmarkStopKeeps(b *testing.B) {
	var kept, written int
	for i := 0; i < b.N; i++ {
		k, w, _ := framesKept(b)
		kept, written = kept+k, written+w
	}
	b.ReportMetric(float64(kept)/float64(written), "kept/written")
}

var pausedAt = regexp.MustCompile(`test pause at frames-25 \(pid \d+\)`)

// framesKept runs the 4-rank job of TestStopKeepsWhatSharesWrote to its stop and returns the
// frames its manifest keeps, the frames its ranks wrote (the progress file) and its output.
func framesKept(tb testing.TB) (kept, written int, output string) {
	dir := tb.TempDir()
	in, out := filepath.Join(dir, "in.mp4"), filepath.Join(dir, "out.mkv")
	clitest.FFmpeg(tb, "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-frames:v", "200", "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", in)
	cmd := exec.CommandContext(clitest.HangGuard(tb), "mpirun", clitest.MpirunArgv(4, clitest.PassThroughArgs(in, out, 20)...)[1:]...)
	// No marker: every rank that writes its 25th frame is held until the stop reaches it.
	cmd.Env = append(append(clitest.LaunchEnv(tb), fakeSlurm(tb, "10:00")...), "FACEFUSION_TEST_PAUSE_AT=frames-25")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	var text strings.Builder
	sc := bufio.NewScanner(pipe)
	for held := 0; held < 4 && sc.Scan(); {
		text.WriteString(sc.Text() + "\n")
		if pausedAt.MatchString(sc.Text()) {
			held++
		}
	}
	cmd.Process.Signal(syscall.SIGUSR1) // mpirun passes it on to every rank
	for sc.Scan() {
		text.WriteString(sc.Text() + "\n")
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != fault.ExitCheckpointed {
		tb.Fatalf("exit %d, want %d:\n%s", code, fault.ExitCheckpointed, text.String())
	}
	jd := &lustre.JobDir{Path: out + ".job"}
	m, ok, err := jd.ReadManifest()
	if err != nil || !ok {
		tb.Fatalf("manifest: %v (found: %v)", err, ok)
	}
	frames, _, err := jd.ReadProgress()
	if err != nil {
		tb.Fatal(err)
	}
	for _, n := range frames {
		written += int(n)
	}
	return m.DoneFrames(), written, text.String()
}
