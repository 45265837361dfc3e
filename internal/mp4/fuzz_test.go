package mp4

import (
	"bytes"
	"os"
	"testing"
)

// The index readers take files from the job folder and the target's side file, which a crashed
// node or another program may have cut short or garbled: any bytes give a File or an error,
// never a panic or an allocation the file's few bytes cannot back. The seeds are ffmpeg's MP4s
// with the index last and first, and a few cut from them; `go test -fuzz FuzzReadFile
// ./internal/mp4` explores further.
func FuzzReadFile(f *testing.F) {
	for _, faststart := range []bool{false, true} {
		b, err := os.ReadFile(tiny(f, faststart))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add(b[:len(b)-9])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, read := range []func() (*File, error){
			func() (*File, error) { return ReadFile(b) },
			func() (*File, error) { return ReadIndex(bytes.NewReader(b), int64(len(b))) },
		} {
			file, err := read()
			if err != nil {
				continue
			}
			for _, tr := range file.Tracks {
				if len(tr.Samples) > len(b) {
					t.Fatalf("a track of %d samples from %d bytes", len(tr.Samples), len(b))
				}
				if _, err := WithoutBitrate(tr.Stsd); err == nil {
					_ = EntryType(tr.Stsd)
				}
			}
		}
	})
}
