package audio

import "testing"

// UnmarshalBinary never panics, and what it takes has every window inside its columns.
func FuzzTrackUnmarshal(f *testing.F) {
	x := make([]float64, 8000)
	for i := range x {
		x[i] = float64(i%97) - 48
	}
	data, _ := NewTrack(Prepare(x), 25).Part(1, 4).MarshalBinary()
	f.Add(data)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var tr Track
		if tr.UnmarshalBinary(b) != nil {
			return
		}
		var w Window
		for i := tr.First; i < tr.First+len(tr.Ends); i++ {
			tr.Frame(i, &w)
		}
	})
}
