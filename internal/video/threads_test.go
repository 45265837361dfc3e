package video

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// SetThreads reaches every decoder, encoder (but x264's and x265's) and filter graph: ffmpeg runs as many threads as it is told
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
		opt := EncodeOptions{Encoder: "ffv1", FPS: info.FPS, Width: 64, Height: 64}
		e, err := OpenEncoder(context.Background(), filepath.Join(t.TempDir(), "t.mkv"), opt)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		frame := make([]byte, opt.FrameSize())
		for range 40 { // past the encoder's delay: its threads are all started
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

// x264 and x265 run a thread count that follows the output's height, whatever the rank's
// budget, and the filter graph the budget: one segment is encoded to the same bytes on a rank
// of 1 CPU and one of 4 (the packets compared, not only the frames they decode to).
func TestEncoderThreadsFollowTheOutput(t *testing.T) {
	defer SetThreads(0)
	rate := Rational{Num: 25, Den: 1}
	for _, budget := range []int{1, 8} {
		SetThreads(budget)
		f := " -filter_threads " + strconv.Itoa(budget)
		for _, c := range []struct {
			encoder string
			height  int
			want    []string
		}{
			{"libx264", 720, []string{"-c:v libx264 -threads 4" + f}},
			{"libx264", 2160, []string{"-c:v libx264 -threads 12" + f}},
			{"libx265", 1080, []string{"-c:v libx265 -threads 6" + f, "log-level=error:pools=6:frame-threads=3"}},
			{"ffv1", 720, []string{"-c:v ffv1 -threads " + strconv.Itoa(budget) + f}},
		} {
			args := strings.Join(encodeArgs("x.mkv", EncodeOptions{Encoder: c.encoder, FPS: rate, Width: 64, Height: c.height}), " ")
			for _, w := range c.want {
				if !strings.Contains(args, w) {
					t.Errorf("budget %d, %s at %d rows: %q lacks %q", budget, c.encoder, c.height, args, w)
				}
			}
		}
	}
	packets := func(budget int) string {
		SetThreads(budget)
		opt := EncodeOptions{Encoder: "libx264", Preset: "ultrafast", FPS: rate, Width: 64, Height: 360}
		path := filepath.Join(t.TempDir(), "t.mkv")
		e, err := OpenEncoder(context.Background(), path, opt)
		if err != nil {
			t.Fatal(err)
		}
		frame := make([]byte, opt.FrameSize())
		for i := range 12 {
			for k := range frame {
				frame[k] = byte(k*7 + i*13 + k/192*i)
			}
			if err := e.Write(frame); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(FFmpeg, "-v", "error", "-i", path, "-map", "0:v", "-c", "copy", "-f", "framemd5", "-").Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	if one, four := packets(1), packets(4); one != four || strings.Count(one, "\n") < 12 {
		t.Errorf("libx264's packets differ between a budget of 1 and of 4 threads:\n%s\n%s", one, four)
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
