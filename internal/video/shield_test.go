package video

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The step's SIGTERM and SIGUSR1 (Slurm and mpirun signal every process of a rank) reach a
// decoder and an encoder half-way and change nothing: the child is ffmpeg itself (the shield
// exec'd it), and every frame is still read, and written. Without the shield, ffmpeg's own
// SIGTERM handler ends its output early and SIGUSR1 kills it.
func TestShieldKeepsFFmpegThroughTermAndUsr1(t *testing.T) {
	signal := func(t *testing.T, pid int) {
		t.Helper()
		comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		if err != nil || strings.TrimSpace(string(comm)) != "ffmpeg" {
			t.Fatalf("the child %d is %q (%v), want ffmpeg", pid, comm, err)
		}
		for _, s := range []syscall.Signal{syscall.SIGTERM, syscall.SIGUSR1} {
			if err := syscall.Kill(pid, s); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(300 * time.Millisecond) // ffmpeg's handler would have ended it by now
	}
	t.Run("decoder", func(t *testing.T) {
		info := probe(t, clip(t, "bf.mp4"))
		d, err := OpenDecoder(context.Background(), info, 0, info.Frames)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		frame := make([]byte, d.frameSize)
		for i := range info.Frames {
			if i == 1 {
				signal(t, d.cmd.Process.Pid)
			}
			if err := d.Next(frame); err != nil {
				t.Fatalf("frame %d of %d after the signals: %v", i, info.Frames, err)
			}
		}
	})
	t.Run("encoder", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "t.mkv")
		opt := EncodeOptions{Encoder: "ffv1", FPS: Rational{Num: 25, Den: 1}, Width: 64, Height: 64}
		e, err := OpenEncoder(context.Background(), out, opt)
		if err != nil {
			t.Fatal(err)
		}
		frame := make([]byte, opt.FrameSize())
		for i := range 20 {
			if i == 5 {
				signal(t, e.cmd.Process.Pid)
			}
			if err := e.Write(frame); err != nil {
				t.Fatalf("frame %d after the signals: %v", i, err)
			}
		}
		if err := e.Close(); err != nil {
			t.Fatalf("closing the encoder after the signals: %v", err)
		}
		if n := probeAfresh(t, out).Frames; n != 20 {
			t.Errorf("the segment holds %d frames, want 20", n)
		}
	})
}
