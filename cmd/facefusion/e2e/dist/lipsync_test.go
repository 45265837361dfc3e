package dist

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// lip_syncer across ranks: the output carries the source audio, as FaceFusion's replace_audio
// puts it there: from the voice's start, cut to the video's length, in place of the target's.
// The target's tone is 440 Hz (FaceClip), the voice's 1000 Hz: the output's audio is told apart
// by its frequency. A voice longer than the clip is cut to it; a shorter one ends where it
// ends. 1, 2 and 3 ranks through the serial join (.mkv), 2 through the parallel one (.mp4,
// whose side file holds the audio), and a run killed after its first chunks then resumed on 2
// ranks: each rank is sent the voice windows of its own frames (mid-track on the resume), and
// every run gives the frames of 1 rank.
func TestLipSyncAcrossRanks(t *testing.T) {
	dir := clitest.FixtureModels(t)
	work := t.TempDir()
	clip := filepath.Join(work, "clip.mp4")
	clitest.FaceClip(t, clip, 160, 120, 12, "25") // 0.48 s
	long, short := filepath.Join(work, "long.wav"), filepath.Join(work, "short.wav")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=44100:duration=2", long)
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=44100:duration=0.2", short)
	args := func(voice, out string) []string {
		return []string{"run", "-s", voice, "-t", clip, "-o", out, "--models-dir", dir, "--processors", "lip_syncer", "--chunk-frames", "4"}
	}
	var one []string // 1 rank's frames
	for _, c := range []struct {
		name, voice, out string
		ranks            int
		seconds          float64
		resume           bool
	}{
		{"1 rank serial", long, "one.mkv", 1, 0.48, false},
		{"2 ranks serial", long, "two.mkv", 2, 0.48, false},
		{"3 ranks serial", long, "three.mkv", 3, 0.48, false},
		{"2 ranks parallel", long, "two.mp4", 2, 0.48, false},
		{"2 ranks resumed", long, "resumed.mkv", 2, 0.48, true},
		{"2 ranks parallel, a short voice", short, "short.mp4", 2, 0.2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(work, c.out)
			a := args(c.voice, out)
			if c.resume {
				clitest.KilledAt(t, "chunk-2", a) // 1 rank, killed once 2 chunks are written
			}
			var r clitest.Result
			if c.ranks == 1 {
				r = clitest.Run(t, a...)
			} else {
				r = clitest.Mpirun(t, clitest.HangGuard(t), c.ranks, a...)
			}
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Stderr)
			}
			seconds, hz := tone(t, out)
			// AAC's priming, which Matroska keeps, is up to 35 ms more.
			if math.Abs(seconds-c.seconds) > 0.035 {
				t.Errorf("%s: %.3f s of audio, want %.2f (the voice cut to the video)", c.out, seconds, c.seconds)
			}
			if math.Abs(hz-1000) > 20 {
				t.Errorf("%s: the audio is a tone of %.0f Hz, want the voice's 1000 (the target's is 440)", c.out, hz)
			}
			frames := clitest.FrameHashes(t, out)
			switch {
			case one == nil:
				one = frames
				if in := clitest.FrameHashes(t, clip); len(in) == len(frames) && in[0] == frames[0] {
					t.Fatal("frame 0 is the target's: the lip syncer did nothing")
				}
			case c.voice == long && !slices.Equal(frames, one):
				t.Errorf("%s: other frames than 1 rank's", c.out)
			}
		})
	}
}

// tone decodes path's audio (its only audio stream) to mono at 48 kHz and returns its length
// and its frequency, by counting the sign changes of a pure tone.
func tone(t *testing.T, path string) (seconds, hz float64) {
	t.Helper()
	streams, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "a", "-show_entries", "stream=index", "-of", "csv=p=0", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	if n := len(strings.Fields(string(streams))); n != 1 {
		t.Fatalf("%s has %d audio streams, want the voice alone", path, n)
	}
	pcm, err := exec.Command("ffmpeg", "-v", "error", "-i", path, "-map", "0:a:0", "-ac", "1", "-ar", "48000", "-f", "f32le", "-").Output()
	if err != nil {
		t.Fatalf("decoding the audio of %s: %v", path, err)
	}
	n := len(pcm) / 4
	if n == 0 {
		t.Fatalf("%s: no audio samples", path)
	}
	// The frequency from the first sign change to the last (the encoder's priming and the
	// cut's edges are not the tone's), a change counted only past a fifth of lavfi's
	// amplitude (1/8), so that the lossy codec's noise about zero is not.
	crossings, first, last, prev := 0, -1, -1, float32(0)
	for i := range n {
		v := math.Float32frombits(binary.LittleEndian.Uint32(pcm[4*i:]))
		if math.Abs(float64(v)) < 0.025 {
			continue
		}
		if (v > 0 && prev < 0) || (v < 0 && prev > 0) {
			crossings++
			if first < 0 {
				first = i
			}
			last = i
		}
		prev = v
	}
	if crossings < 3 {
		t.Fatalf("%s: the audio is no tone (%d sign changes)", path, crossings)
	}
	return float64(n) / 48000, float64(crossings-1) / 2 / (float64(last-first) / 48000)
}

// lip_syncer's voice features come from the whole track (normalised by its peak, its windows
// counted from its first sample), so a rank's frames must get the windows of their time, not of
// their place in the rank's share: on a voice whose every window differs (a pure tone's barely
// do), 1 and 3 ranks give the same bytes at one chunk size, and chunks of 24 and 96 the same
// decoded frames.
func TestLipSyncWindowsAcrossRanksAndChunks(t *testing.T) {
	t.Parallel() // with the other rank matrices: see main_test.go
	dir := clitest.FixtureModels(t)
	work := t.TempDir()
	clip := filepath.Join(work, "clip.mp4")
	const frames = 72
	clitest.FaceClip(t, clip, 320, 240, frames, "25")
	// A voice whose loudness and pitch change over the track: every frame's window differs, and
	// the track's peak lies in its second half (no rank's share holds it alone).
	voice := filepath.Join(work, "voice.wav")
	src := "aevalsrc=0.2*sin(2*PI*(180+60*t)*t)*(0.3+0.7*abs(sin(2*PI*1.3*t)))*(1+t/3):s=22050:d=3.2"
	if b, err := exec.Command(testenv.Tool(t, "ffmpeg"), "-v", "error", "-f", "lavfi", "-i", src, voice).CombinedOutput(); err != nil {
		t.Fatalf("making the voice: %v %s", err, b)
	}
	in := clitest.FrameHashes(t, clip)
	base := []string{"run", "-s", testenv.Sample(t, "grace_hopper.png"), voice, "-t", clip, "--models-dir", dir,
		"--processors", "lip_syncer", "--output-video-encoder", "ffv1"}
	out := func(name string, ranks, chunk int) string {
		o := filepath.Join(work, name+".mkv")
		args := append(append([]string{}, base...), "-o", o, "--chunk-frames", strconv.Itoa(chunk))
		var r clitest.Result
		if ranks == 1 {
			r = clitest.Run(t, args...)
		} else {
			r = clitest.Mpirun(t, clitest.HangGuard(t), ranks, args...)
		}
		if r.Code != 0 {
			t.Fatalf("%d ranks, chunks of %d: exit %d: %s", ranks, chunk, r.Code, r.Stderr)
		}
		return o
	}
	one := out("one", 1, 24)
	want, err := os.ReadFile(one)
	if err != nil {
		t.Fatal(err)
	}
	for _, ranks := range []int{3} {
		got, err := os.ReadFile(out("ranks"+strconv.Itoa(ranks), ranks, 24))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%d ranks at chunks of 24 differ from 1 rank's bytes", ranks)
		}
	}
	a, b := clitest.FrameHashes(t, one), clitest.FrameHashes(t, out("chunk96", 1, 96))
	if len(a) != frames || len(b) != frames {
		t.Fatalf("%d and %d frames, want %d", len(a), len(b), frames)
	}
	changed := 0
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("frame %d differs between chunks of 24 and 96", i)
		}
		if a[i] != in[i] {
			changed++
		}
	}
	if changed < frames/2 {
		t.Errorf("the lip syncer changed %d of %d frames: it did nothing", changed, frames)
	}
}
