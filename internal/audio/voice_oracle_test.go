package audio_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/audio"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// The features and the voice equal FaceFusion's own (audio.py, voice_extractor.py run in the
// oracle's Python) on a generated track of three overlapping extractor windows, the last one
// short: read_audio's features (float64 throughout: to rounding); read_voice's after an
// identity extractor (FaceFusion resamples in float32); the stand-in kim_vocal_2's voice (it
// swaps the channels with unequal gains, flips the imaginary planes and weighs bins and
// frames, so a block, plane or axis mistake shows) and read_voice's features after it, at the
// target's rate, an NTSC rate and a lower --output-video-fps. Each frame's window is compared
// with FaceFusion's, and the frame after its last must be empty.
func TestMatchesFaceFusion(t *testing.T) {
	testenv.Full(t, "runs FaceFusion's audio.py and voice extractor in the oracle's Python")
	dir := t.TempDir()
	models := filepath.Join(dir, "models")
	if err := os.MkdirAll(models, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fixtures.Write(models); err != nil {
		t.Fatal(err)
	}
	track := testTrack(t, dir, 9.1)
	rates := []float64{25, 30000.0 / 1001, 12.5}
	ff := runFFAudio(t, dir, track, rates, "kim_vocal_2")
	if len(ff) != len(rates) {
		t.Fatalf("FaceFusion answered for %d rates of %d", len(ff), len(rates))
	}
	pcm, err := video.ReadPCM(context.Background(), track, audio.SampleRate, audio.Channels)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := adapters.NewVoiceExtractor("kim_vocal_2", infer.SessionConfig{ModelsDir: models, Library: testenv.ORTLibrary(t), Logf: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	voice, err := audio.ExtractVoice(context.Background(), pcm, ex, runtime.GOMAXPROCS(0))
	if err != nil {
		t.Fatal(err)
	}
	compareVoice(t, voice, filepath.Join(dir, "ffvoice.f32"))
	identity := make([]float32, len(pcm))
	for i, v := range pcm {
		identity[i] = float32(v) / math.MaxInt16
	}
	compareTrack(t, "read_audio at 25 fps", audio.AudioTrack(pcm, 25), ff[0].Audio, 1e-12)
	compareTrack(t, "read_voice, identity extractor, at 25 fps", voiceTrack(t, identity, 25), ff[0].Identity, 1e-5)
	for i, fps := range rates {
		compareTrack(t, fmt.Sprintf("read_voice, kim_vocal_2, at %v fps", fps), voiceTrack(t, voice, fps), ff[i].Voice, 1e-5)
	}
	// The same through the transforms on disk that a track longer than 87 s takes.
	defer audio.TransformOnDiskAbove(0)()
	compareTrack(t, "read_voice, kim_vocal_2, at 25 fps, transformed on disk", voiceTrack(t, voice, 25), ff[0].Voice, 1e-5)
}

func voiceTrack(t *testing.T, voice []float32, fps float64) *audio.Track {
	t.Helper()
	track, err := audio.VoiceTrack(context.Background(), voice, fps, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return track
}

// compareVoice holds the extracted voice to FaceFusion's (raw float32 in ffPath).
func compareVoice(t *testing.T, voice []float32, ffPath string) {
	t.Helper()
	raw, err := os.ReadFile(ffPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 4*len(voice) {
		t.Fatalf("FaceFusion's voice has %d samples, ours %d", len(raw)/4, len(voice))
	}
	worst, peak, at := 0.0, 0.0, 0
	for i, v := range voice {
		w := float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
		peak = max(peak, math.Abs(w))
		if d := math.Abs(float64(v) - w); d > worst {
			worst, at = d, i
		}
	}
	t.Logf("voice: %d samples, max abs difference %.3g of peak %.3g (sample %d)", len(voice)/2, worst, peak, at/2)
	if worst > 1e-5*peak {
		t.Errorf("voice sample %d differs from FaceFusion's by %.3g (peak %.3g)", at/2, worst, peak)
	}
}
