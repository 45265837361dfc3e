package audio

import (
	"slices"
	"testing"
)

// Frame i's window ends at ⌊j·80/fps⌋ for the j-th point of numpy.arange from the first
// that reaches column 16: at 25 fps frame 0 ends at 16 (j=5), frame 1 at 19 (⌊19.2⌋).
func TestFramesAlignment(t *testing.T) {
	if got, want := Frames(30, 25)[:5], []int{16, 19, 22, 25, 28}; !slices.Equal(got, want) {
		t.Errorf("25 fps: ends %v, want %v", got, want)
	}
	// 30000/1001: step 2.66933…; j=6 → 16.0159…
	if got := Frames(40, 30000.0/1001); got[0] != 16 || got[1] != 18 || got[2] != 21 {
		t.Errorf("29.97 fps: ends %v", got)
	}
	// The last column is never an end (numpy.arange stops before columns).
	for _, e := range Frames(100, 25) {
		if e >= 100 {
			t.Errorf("end %d past the spectrogram", e)
		}
	}
}

func TestTriang(t *testing.T) {
	for m, want := range map[int][]float64{1: {1}, 2: {0.5, 0.5}, 3: {0.5, 1, 0.5}, 4: {0.25, 0.75, 0.75, 0.25}, 5: {1. / 3, 2. / 3, 1, 2. / 3, 1. / 3}} {
		if got := triang(m); !slices.Equal(got, want) {
			t.Errorf("triang(%d) = %v, want %v", m, got, want)
		}
	}
}

// Past the track, before it and on silence a frame is FaceFusion's empty one.
func TestTrackEmptyFrames(t *testing.T) {
	x := make([]float64, 16000)
	for i := 8000; i < len(x); i++ {
		x[i] = float64(i%7) - 3
	}
	tr := NewTrack(Prepare(x), 25)
	var w Window
	if tr.Frame(-1, &w) || tr.Frame(tr.Len(), &w) {
		t.Error("a frame outside the track has features")
	}
	if tr.Frame(0, &w) {
		t.Error("the silent first frame has features")
	}
	if !tr.Frame(tr.Len()-1, &w) {
		t.Error("the last frame, of sound, is empty")
	}
}

// The windows' rate is FaceFusion's: the target's, or a lower --output-video-fps (clamped to
// 1..60 as normalize_fps clamps it), never a higher one.
func TestFeatureRate(t *testing.T) {
	for _, c := range []struct{ target, output, want float64 }{
		{25, 0, 25}, {30000.0 / 1001, 0, 30000.0 / 1001}, {25, 12.5, 12.5}, {25, 50, 25}, {25, 0.5, 1}, {120, 90, 60},
	} {
		if got := FeatureRate(c.target, c.output); got != c.want {
			t.Errorf("FeatureRate(%v, %v) = %v, want %v", c.target, c.output, got, c.want)
		}
	}
}

// Any split of the frames into parts, sent as bytes, gives every frame the whole track's
// window to the bit, and the empty window past the track's end.
func TestTrackParts(t *testing.T) {
	x := make([]float64, 48000)
	for i := range x {
		x[i] = float64((i*7919)%2000 - 1000)
	}
	whole := NewTrack(Prepare(x), 30000.0/1001)
	for _, cuts := range [][]int{{0, whole.Len()}, {0, 7, 40, whole.Len() + 5}, {0, 1, 2, 3, whole.Len()}} {
		for k := 0; k+1 < len(cuts); k++ {
			data, _ := whole.Part(cuts[k], cuts[k+1]).MarshalBinary()
			var part Track
			if err := part.UnmarshalBinary(data); err != nil {
				t.Fatal(err)
			}
			if part.Len() != whole.Len() {
				t.Errorf("part [%d, %d): length %d, the track's %d", cuts[k], cuts[k+1], part.Len(), whole.Len())
			}
			var a, b Window
			for i := cuts[k]; i < cuts[k+1]; i++ {
				okA, okB := whole.Frame(i, &a), part.Frame(i, &b)
				if okA != okB || a != b {
					t.Fatalf("part [%d, %d): frame %d differs from the whole track's", cuts[k], cuts[k+1], i)
				}
			}
		}
	}
	var tr Track
	data, _ := whole.Part(3, 9).MarshalBinary()
	for _, bad := range [][]byte{nil, data[:len(data)-1], append(data[:8:8], data[16:]...)} {
		if tr.UnmarshalBinary(bad) == nil {
			t.Errorf("%d malformed bytes taken", len(bad))
		}
	}
}

// A remapped track gives each frame its source frame's window, and the empty one past the end.
func TestTrackRemap(t *testing.T) {
	x := make([]float64, 16000)
	for i := range x {
		x[i] = float64((i*31)%200 - 100)
	}
	tr := NewTrack(Prepare(x), 25)
	src := []int{0, 0, 1, 2, 2, 3, tr.Len() - 1, tr.Len()}
	r := tr.Remap(src)
	data, _ := r.MarshalBinary()
	var got Track
	if err := got.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	var a, b Window
	for k, j := range src {
		okA, okB := tr.Frame(j, &a), got.Frame(k, &b)
		if okA != okB || a != b {
			t.Errorf("frame %d: not source frame %d's window", k, j)
		}
	}
}
