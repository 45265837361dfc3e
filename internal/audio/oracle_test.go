package audio_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/audio"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// ffFrames is one rate's answer of testdata/ffaudio.py: FaceFusion's frames, each 80 × 16.
type ffFrames struct {
	Audio    [][][]float64 `json:"audio"`
	Identity [][][]float64 `json:"identity"`
	Voice    [][][]float64 `json:"voice"`
}

// testTrack writes a short stereo track that exercises what FaceFusion does to it: 44.1 kHz
// (ffmpeg resamples it to 48 kHz), a tone on the left and pink noise on the right (the mean of
// the channels), 0.3 s of silence first (empty windows), and a length that is no whole number
// of frames or STFT hops.
func testTrack(t *testing.T, dir string, seconds float64) string {
	t.Helper()
	path := filepath.Join(dir, "voice.wav")
	d := fmt.Sprintf("%.3f", seconds)
	cmd := exec.Command(testenv.Tool(t, "ffmpeg"), "-nostdin", "-loglevel", "error", "-y",
		"-f", "lavfi", "-i", "sine=frequency=220:sample_rate=44100:duration="+d,
		"-f", "lavfi", "-i", "anoisesrc=d="+d+":c=pink:r=44100:a=0.4:seed=7",
		"-filter_complex", "[0:a]volume=0.6,aformat=sample_fmts=fltp:channel_layouts=mono[l];[1:a]aformat=sample_fmts=fltp:channel_layouts=mono[r];"+
			"[l][r]join=inputs=2:channel_layout=stereo,adelay=300|300[a]",
		"-map", "[a]", "-c:a", "pcm_s16le", path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("making the test track: %v\n%s", err, out)
	}
	return path
}

// runFFAudio runs testdata/ffaudio.py through run-facefusion (FaceFusion's work copy, the
// oracle's Python, the models of dir/models) on the track at the rates, with voice the voice
// extractor (in dir/models); its voice is left in dir/ffvoice.f32.
func runFFAudio(t *testing.T, dir, track string, fps []float64, voice string) []ffFrames {
	t.Helper()
	ref := filepath.Clean(filepath.Join(testenv.Root(t), "..", "shared", "reference"))
	if _, err := os.Stat(filepath.Join(ref, "run-facefusion")); err != nil {
		t.Fatalf("FaceFusion's oracle is missing: %s/run-facefusion (see ../shared/reference/README.md): put the shared folder beside the checkout", ref)
	}
	models := filepath.Join(dir, "models")
	out := filepath.Join(dir, "ff.json")
	job, _ := json.Marshal(map[string]any{"audio": track, "fps": fps, "voice": voice, "out": out, "voice_out": filepath.Join(dir, "ffvoice.f32")})
	jobPath := filepath.Join(dir, "job.json")
	if err := os.WriteFile(jobPath, job, 0o644); err != nil {
		t.Fatal(err)
	}
	_, file, _, _ := runtime.Caller(0)
	real := os.Getenv("FFREF_PYTHON")
	if real == "" {
		real = "/usr/bin/python3"
	}
	cmd := exec.Command(filepath.Join(ref, "run-facefusion"), "--work", filepath.Join(dir, "ffwork"),
		"--models", models, "--ort", testenv.ORTLibrary(t), "--", jobPath)
	cmd.Env = append(os.Environ(), "FFREF_PYTHON="+filepath.Join(filepath.Dir(file), "testdata", "python"), "FFREF_PYTHON_WRAPPED="+real)
	if said, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("FaceFusion's audio.py: %v\n%s", err, said)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res []ffFrames
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// compareTrack holds got's frames to want's: the same count, each window within tol of the
// largest value (relative), and the empty frames where FaceFusion's are all zeros.
func compareTrack(t *testing.T, what string, got *audio.Track, want [][][]float64, tol float64) {
	t.Helper()
	if got.Len() != len(want) {
		t.Errorf("%s: %d frames, FaceFusion has %d", what, got.Len(), len(want))
		return
	}
	peak := 0.0
	for _, w := range want {
		for _, row := range w {
			for _, v := range row {
				peak = max(peak, math.Abs(v))
			}
		}
	}
	var win audio.Window
	worst, at := 0.0, 0
	for i, w := range want {
		got.Frame(i, &win)
		for f := range w {
			for c, v := range w[f] {
				if d := math.Abs(win[f][c] - v); d > worst {
					worst, at = d, i
				}
			}
		}
	}
	t.Logf("%s: %d frames, max abs difference %.3g of peak %.3g (frame %d)", what, len(want), worst, peak, at)
	if worst > tol*peak {
		t.Errorf("%s: frame %d differs from FaceFusion's by %.3g (peak %.3g, tolerance %.3g)", what, at, worst, peak, tol*peak)
	}
	if got.Frame(len(want), &win) {
		t.Errorf("%s: frame %d past FaceFusion's last has features", what, len(want))
	}
}
