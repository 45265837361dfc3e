package video

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseProbe feeds ffprobe's JSON reader anything at all: ffprobe writes what the user's
// file declares (sizes, rates, counts, tags), so any field may hold any value. It gives an Info
// or an error, never a panic, and an Info it gives has a frame size and, for a video, a usable
// rate. The seeds are the ffprobe outputs of testdata (real files' probes).
func FuzzParseProbe(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.json")
	if len(seeds) == 0 {
		f.Fatal("no ffprobe outputs in testdata")
	}
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		info, _, err := parseProbe("fuzz.mp4", data)
		if err != nil {
			return
		}
		if info.Width <= 0 || info.Height <= 0 || (!info.IsImage && !info.FPS.Valid()) || info.Frames < 0 {
			t.Fatalf("an Info of %dx%d at %v fps, %d frames", info.Width, info.Height, info.FPS, info.Frames)
		}
		if len(info.Others) > len(data) {
			t.Fatalf("%d streams from %d bytes", len(info.Others), len(data))
		}
	})
}
