package dist

import (
	"encoding/binary"
	"math"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
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
