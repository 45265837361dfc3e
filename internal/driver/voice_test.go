package driver

import (
	"math"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/audio"
	"github.com/facefusion-hpc/facefusion/rank"
)

// The plan every rank receives does not carry the voice features: each rank is sent the
// windows of its own frames alone (voiceParts), which hold what the whole track's give those
// frames, and the parts together are about one track's worth, not one a rank.
func TestVoicePartsAreTheRanksFrames(t *testing.T) {
	const frames, fps = 300, 25.0
	samples := make([]float64, int(frames/fps*audio.VoiceRate))
	for i := range samples {
		samples[i] = math.Sin(float64(i)*0.05) * (1 + math.Sin(float64(i)*0.0007))
	}
	track := audio.NewTrack(audio.Prepare(samples), fps)
	// The plan's frames are the target's from a trim start (--trim-frame-start 7): the track
	// counts the output's frames from 0.
	const trim = 7
	var chunks []rank.Range
	for s := trim; s < trim+frames; s += 24 {
		chunks = append(chunks, rank.Range{Start: s, End: min(s+24, trim+frames)})
	}
	pending := make([]int, len(chunks))
	for i := range pending {
		pending[i] = i
	}
	whole, err := track.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, ranks := range []int{1, 3} {
		p := &Plan{Frames: rank.Range{Start: trim, End: trim + frames}, Chunks: chunks, Work: rank.Split(chunks, pending, ranks), voice: track}
		parts, err := voiceParts(p)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := encodePlan(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(plan) > len(whole)/10 {
			t.Errorf("%d ranks: the plan is %d bytes, the track's features %d: the plan carries them", ranks, len(plan), len(whole))
		}
		sum := 0
		for r, b := range parts {
			sum += len(b)
			if p.VoiceParts[r] != len(b) {
				t.Errorf("rank %d: the plan says %d bytes, its part is %d", r, p.VoiceParts[r], len(b))
			}
			var got audio.Track
			if err := got.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
			mine := map[int]bool{}
			for _, pc := range p.Work[r] {
				for i := pc.Frames.Start; i < pc.Frames.End; i++ {
					mine[i-trim] = true
				}
			}
			var w, want audio.Window
			for i := 0; i < frames; i++ {
				ok, wantOK := got.Frame(i, &w), track.Frame(i, &want) // past the track: no window
				switch {
				case mine[i] && (ok != wantOK || w != want):
					t.Fatalf("%d ranks: rank %d's frame %d: its window is not the whole track's", ranks, r, i)
				case !mine[i] && ok:
					t.Fatalf("%d ranks: rank %d is sent frame %d's window, another rank's", ranks, r, i)
				}
			}
		}
		if limit := len(whole) + ranks*len(whole)/20; sum > limit {
			t.Errorf("%d ranks: the parts are %d bytes, the track's %d", ranks, sum, len(whole))
		}
	}
}
