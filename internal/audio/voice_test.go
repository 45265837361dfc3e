package audio

import (
	"context"
	"math"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// identityModel hands the planes back: the extractor's blocks, STFT and inverse then give the
// track back, but for what lies above the 3072 bins it keeps (19.2 kHz): near a window's ends,
// where the track stops abruptly inside the block, that cut rings (as in FaceFusion).
type identityModel struct{ runs, blocks int }

func (m *identityModel) Frames() int { return 256 }
func (m *identityModel) Run(in []float32, blocks int) ([]float32, error) {
	m.runs++
	m.blocks += blocks
	return in, nil
}

// A track of two overlapping windows, the last one short, comes back through an identity model
// as FaceFusion scales it (/32767) away from the windows' ends: the blocks' margins, the
// overlap's average and the inverse STFT's normalisation put every sample back at its place.
func TestExtractVoiceIdentity(t *testing.T) {
	n := VoiceStep + 70000
	pcm := make([]int16, n*Channels)
	for i := 0; i < n; i++ {
		pcm[i*2] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/SampleRate))
		pcm[i*2+1] = int16(6000 * math.Sin(2*math.Pi*1234*float64(i)/SampleRate+1))
	}
	m := &identityModel{}
	voice, err := ExtractVoice(context.Background(), pcm, m, 1)
	if err != nil {
		t.Fatal(err)
	}
	if m.runs != 2 || m.blocks != 2 {
		t.Errorf("%d runs of %d blocks, want 2 of 1 each", m.runs, m.blocks)
	}
	edges := []int{0, VoiceStep, VoiceChunk, n}
	near := func(i int) bool {
		for _, e := range edges {
			if i > e-4096 && i < e+4096 {
				return true
			}
		}
		return false
	}
	worst := 0.0
	for i, v := range voice {
		if !near(i / Channels) {
			worst = max(worst, math.Abs(float64(v)-float64(pcm[i])/math.MaxInt16))
		}
	}
	if worst > 1e-4 { // the planes are float32; a sample out of place is off by 0.1
		t.Errorf("the identity model's voice differs from the track by %g", worst)
	}
}

// scaleModel scales each plane by its own factor: not the identity, so that the order of the
// windows' sums matters to the last bit.
type scaleModel struct{}

func (scaleModel) Frames() int { return 256 }
func (scaleModel) Run(in []float32, blocks int) ([]float32, error) {
	out := make([]float32, len(in))
	for i, v := range in {
		out[i] = v * float32(1+(i/(VoiceBins*256))%4) / 3
	}
	return out, nil
}

// Any number of workers gives the same bytes as one.
func TestExtractVoiceWorkers(t *testing.T) {
	testenv.Full(t, "three windows of 240K samples, transformed twice: two CPU-seconds")
	n := 2*VoiceStep + 1234 // three windows: with two workers, two batches
	pcm := make([]int16, n*Channels)
	for i := range pcm {
		pcm[i] = int16((i*7919)%20000 - 10000)
	}
	one, err := ExtractVoice(context.Background(), pcm, scaleModel{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{2} {
		got, err := ExtractVoice(context.Background(), pcm, scaleModel{}, w)
		if err != nil {
			t.Fatal(err)
		}
		for i := range one {
			if math.Float32bits(got[i]) != math.Float32bits(one[i]) {
				t.Fatalf("%d workers: sample %d is %v, one worker's %v", w, i/2, got[i], one[i])
			}
		}
	}
}

// windowsOver counts, for every sample of tracks of a few lengths, the windows ExtractVoice
// adds there, as an array of counts does.
func TestWindowsOver(t *testing.T) {
	for _, n := range []int{1, VoiceStep, VoiceChunk, VoiceChunk + 1, 3*VoiceStep + 17, 5*VoiceStep + VoiceChunk} {
		count := make([]float32, n)
		for start := 0; start < n; start += VoiceStep {
			for s := start; s < min(start+VoiceChunk, n); s++ {
				count[s]++
			}
		}
		for s, want := range count {
			if got := windowsOver(s); got != want {
				t.Fatalf("n=%d: sample %d in %v windows, counted %v", n, s, got, want)
			}
		}
	}
}
