package report

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// FuzzDecode feeds the run report's decoder (Decode: facefusion plan and status read a report
// given on the command line, or a colleague's beside a shared output) any bytes: a report or an
// error, never a panic; and a report that decodes, written as WriteTo writes it, decodes again
// to the same bytes. The seeds are a report a run wrote (testdata, its fingerprint trimmed,
// Slurm ids and an identity measure added) and TestReadReportVersion1's version 1 report.
func FuzzDecode(f *testing.F) {
	written, err := os.ReadFile("testdata/complete.report.json")
	if err != nil {
		f.Fatal(err)
	}
	if _, err := Decode(written, "testdata/complete.report.json"); err != nil {
		f.Fatal(err)
	}
	f.Add(written)
	f.Add([]byte(`{"version": 1, "outcome": "complete", "output": "/o/out.mp4", "target": "in.mp4", "job_dir": "/o/out.mp4.job",
  "frame_start": 0, "frame_end": 150, "chunks": 2, "attempts": [{"started": "2026-11-01T10:00:00Z", "ranks": 2, "planned_chunks": 2,
  "outcome": "complete", "updated": "2026-11-01T10:00:05Z"}], "seconds": 5, "attempt_seconds": 5, "finished": "2026-11-01T10:00:05Z",
  "fingerprint": {"chunk_frames": "96"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Decode(data, "fuzz.report.json")
		if err != nil {
			return
		}
		first, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatalf("a report that decodes cannot be written: %v", err)
		}
		r2, err := Decode(first, "again.report.json")
		if err != nil {
			t.Fatalf("a report written reads as %v:\n%s", err, first)
		}
		if second, _ := json.MarshalIndent(r2, "", "  "); !bytes.Equal(first, second) {
			t.Fatalf("a report written, read and written again changed:\n%s\n%s", first, second)
		}
	})
}
