package video

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// SetThreads reaches every decoder and encoder: ffmpeg runs as many threads as it is told
// (counted in /proc while it waits on its pipe), not one set per CPU of the node.
func TestSetThreadsReachesFFmpeg(t *testing.T) {
	defer SetThreads(0)
	info := probe(t, clip(t, "bf.mp4"))
	decoderThreads := func(n int) int {
		SetThreads(n)
		d, err := OpenScaledDecoder(context.Background(), info, 0, info.Frames, info.Width/2, info.Height/2)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if err := d.Next(make([]byte, d.frameSize)); err != nil {
			t.Fatal(err)
		}
		return osThreads(t, d.cmd.Process.Pid)
	}
	encoderThreads := func(n int) int {
		SetThreads(n)
		opt := EncodeOptions{Encoder: "libx264", Preset: "ultrafast", FPS: info.FPS, Width: 64, Height: 64}
		e, err := OpenEncoder(context.Background(), filepath.Join(t.TempDir(), "t.mkv"), opt)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		frame := make([]byte, opt.FrameSize())
		for range 40 { // past x264's lookahead: its threads are all started
			if err := e.Write(frame); err != nil {
				t.Fatal(err)
			}
		}
		return osThreads(t, e.cmd.Process.Pid)
	}
	for _, c := range []struct {
		what  string
		count func(int) int
	}{{"decoder", decoderThreads}, {"encoder", encoderThreads}} {
		one, four := c.count(1), c.count(4)
		if one >= four {
			t.Errorf("%s: ffmpeg ran %d threads told -threads 1 and %d told 4: the count does not reach it", c.what, one, four)
		}
	}
	if !strings.Contains(strings.Join(encodeArgs("x.mkv", EncodeOptions{FPS: info.FPS, Width: 2, Height: 2}), " "), "-enc_time_base 1001/30000 -c:v  -threads 4 -filter_threads 4") {
		t.Errorf("the encoder's -threads is not an output option: %q", encodeArgs("x.mkv", EncodeOptions{FPS: info.FPS, Width: 2, Height: 2}))
	}
}

// osThreads is the thread count of process pid.
func osThreads(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no Threads line in /proc/%d/status", pid)
	return 0
}
