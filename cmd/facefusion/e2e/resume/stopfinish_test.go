package resume

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/fault"
)

// Slurm's warning (SIGUSR1) half-way into a chunk: with time enough left before the job's limit
// the rank finishes the chunk in flight and checkpoints it (every frame written is kept: 8 of
// 8), and the job asks to be requeued; with too little, the chunk is discarded at once as every
// stop did before, and with nothing finished the job is not requeued. The job's time left and
// KillWait come from stand-ins for squeue and scontrol (the real ones are tested against a
// real Slurm in internal/slurm and cmd/facefusion/e2e/dist).
func TestUsr1FinishesTheChunkInFlight(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	bframeClip(t, in, 32)
	t.Run("time-enough", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out.mkv")
		p := clitest.StartPausedEnv(t, "frames-4", fakeSlurm(t, "10:00"), append([]string{clitest.Bin}, clitest.PassThroughArgs(in, out, 8)...)...)
		p.Cmd.Process.Signal(syscall.SIGUSR1)
		if code := p.Wait(t); code != fault.ExitCheckpointed {
			t.Fatalf("exit %d, want %d\n%s", code, fault.ExitCheckpointed, p.Output())
		}
		if !strings.Contains(p.Output(), "finishing chunk 0 first, 4 frame(s) left") {
			t.Errorf("no line on the chunk being finished:\n%s", p.Output())
		}
		m := clitest.ReadManifest(t, out+".job")
		if len(m.Done) != 1 || m.Done[0].Chunk != 0 || m.DoneFrames() != 8 {
			t.Fatalf("the manifest holds %+v, want chunk 0, all 8 frames written when the stop came", m.Done)
		}
		clitest.MustNotExist(t, out)
	})
	t.Run("too-late", func(t *testing.T) {
		// 5 s left at the start: the 4 frames left, at the rate of 4 frames in the 3 s or more
		// the rank is held, cannot end within it less the margin.
		out := filepath.Join(t.TempDir(), "out.mkv")
		p := clitest.StartPausedEnv(t, "frames-4", fakeSlurm(t, "0:05"),
			append([]string{clitest.Bin}, clitest.PassThroughArgs(in, out, 8, "--stop-margin", "0")...)...)
		time.Sleep(3 * time.Second)
		p.Cmd.Process.Signal(syscall.SIGUSR1)
		if code := p.Wait(t); code != fault.ExitNoRequeue {
			t.Fatalf("exit %d, want %d\n%s", code, fault.ExitNoRequeue, p.Output())
		}
		if !strings.Contains(p.Output(), "this attempt finished no new chunk") || strings.Contains(p.Output(), "finishing chunk") {
			t.Errorf("the chunk in flight was not discarded at once:\n%s", p.Output())
		}
		clitest.MustNotExist(t, out)
	})
}

// fakeSlurm is the environment of a run inside Slurm job 7 whose squeue says left (squeue -o %L)
// and whose scontrol says KillWait = 30 sec.
func fakeSlurm(t testing.TB, left string) []string {
	t.Helper()
	bin := t.TempDir()
	for name, body := range map[string]string{
		"squeue":   "#!/bin/sh\necho " + left + "\n",
		"scontrol": "#!/bin/sh\necho 'KillWait                = 30 sec'\n",
	} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"SLURM_JOB_ID=7", "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
}
