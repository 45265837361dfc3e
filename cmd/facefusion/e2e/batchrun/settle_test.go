package batchrun

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/batch"
	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// A batch run by hand (a terminal: script(1) gives it one) waits for a target still being
// copied instead of leaving it: the copy goes on for a moment after the run starts, the run
// says that it waits, and processes the whole file once it has kept still for settle_time.
func TestBatchSettleWaitByHand(t *testing.T) {
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.mp4")
	clitest.BatchClip(t, whole, 10, "a")
	data, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	inbox := filepath.Join(dir, "inbox")
	os.MkdirAll(inbox, 0o755)
	target := filepath.Join(inbox, "arriving.mp4")
	f, err := os.Create(target)
	if err != nil {
		t.Fatal(err)
	}
	copied := make(chan error, 1)
	go func() { // the copy: the file in ten pieces over about 1.5 s
		defer f.Close()
		step := (len(data) + 9) / 10
		for off := 0; off < len(data); off += step {
			if _, err := f.Write(data[off:min(off+step, len(data))]); err != nil {
				copied <- err
				return
			}
			time.Sleep(150 * time.Millisecond)
		}
		copied <- nil
	}()

	cmd := clitest.Command(t, "batch-run", "--processors", "none", "--output-video-encoder", "ffv1",
		"-t", "inbox/*", "-o", "out/{target_name}.mkv", "--settle-time", "2")
	var line []string
	for _, a := range cmd.Args {
		line = append(line, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	sh := exec.Command(testenv.Tool(t, "script"), "-qefc", strings.Join(line, " "), "/dev/null")
	sh.Dir, sh.Env = dir, cmd.Env
	out, err := sh.CombinedOutput()
	if err := <-copied; err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatalf("batch-run on a terminal: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "waiting until its size and time stay unchanged for 2 s") {
		t.Errorf("the run does not say that it waits:\n%s", out)
	}
	wantStates(t, "by hand", clitest.ReadSummary(t, filepath.Join(dir, "out/.facefusion-batch/report.json")),
		map[string]string{"arriving.mp4": batch.Done})
	clitest.CheckFramesOf(t, filepath.Join(dir, "out/arriving.mkv"), whole)
}
