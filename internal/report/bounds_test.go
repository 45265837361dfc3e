package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// The report beside an output, like every file of a job folder (lustre's test), is refused
// without blocking when it is a FIFO, without being followed when it is a link (planted by
// another user: this test chowns it to nobody, uid 65534, as such a user's would be), and
// without being read whole when it is over its limit (a sparse file: no disk spent). A link's
// target never shows in what the program says.
func TestReportIsReadBounded(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	const secretText = "the-secret-contents-4711"
	if err := os.WriteFile(secret, []byte(`{"version": 1, "target": "`+secretText+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, plant := range testenv.Plantings {
		t.Run(plant.Kind, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.mp4")
			p := Path(out)
			plant.Plant(t, p, secret)
			err := testenv.Guard(t, 10*time.Second, "run report", func() error { _, _, err := Read(out); return err })
			if err == nil || !strings.Contains(err.Error(), p+" "+plant.Refusal) || strings.Contains(err.Error(), secretText) {
				t.Errorf("run report as a %s: %v, want %q", plant.Kind, err, p+" "+plant.Refusal)
			}
		})
	}
}

// realManifest is a manifest as a run writes it: 4 chunks of 8 frames from frame 2, two done,
// one attempt.
func realManifest() *lustre.Manifest {
	now := time.Now().UTC()
	return &lustre.Manifest{Version: lustre.ManifestVersion, Fingerprint: map[string]string{"chunk_frames": "8", "target file contents": "30:ab"}, Target: "in.mp4",
		FrameStart: 2, FrameEnd: 32, ChunkFrames: 8, NumChunks: 4, Encoder: "ffv1",
		Attempts: []lustre.Attempt{{Started: now.Add(-time.Minute), Updated: now, Ranks: 2, Planned: 4, Outcome: lustre.Running}},
		Done: []lustre.Chunk{
			{Chunk: 0, Start: 2, End: 10, Frames: 8, Size: 100, SHA256: strings.Repeat("a", 64), Rank: 0, Attempt: 1, Faces: 3,
				Identity: lustre.IdentitySums{Recognizer: "fr_feature", Every: 4, Faces: 2, After: 1_500_000_000, Before: 100_000_000}},
			{Chunk: 3, Start: 26, End: 32, Frames: 6, Size: 90, SHA256: strings.Repeat("b", 64), Rank: 1, Attempt: 1},
		}}
}

// The report's numbers are checked as the job folder's are: an error naming the file and the
// field.
func TestReportNumbersAreChecked(t *testing.T) {
	jobDir := t.TempDir()
	out := filepath.Join(t.TempDir(), "out.mp4")
	m := realManifest()
	if err := New(m, out, jobDir, lustre.Complete).WriteTo(Path(out)); err != nil {
		t.Fatal(err)
	}
	// A run's report has its ranks' figures and their totals, whose rank is -1.
	testenv.EditJSON(t, Path(out), func(r map[string]any) {
		r["per_rank"] = []any{map[string]any{"rank": 0, "frames": 30, "seconds": 2.5, "stage_seconds": map[string]any{"load": 0.5}}}
		r["totals"] = map[string]any{"rank": -1, "frames": 30, "seconds": 2.5}
	})
	if _, ok, err := Read(out); !ok || err != nil {
		t.Fatalf("a report as a run writes it: %v %v", ok, err)
	}
	for _, c := range []struct {
		field string
		edit  func(map[string]any)
	}{
		{"seconds", func(r map[string]any) { r["seconds"] = 1e300 }},
		{"attempt_seconds", func(r map[string]any) { r["attempt_seconds"] = -1 }},
		{"frame_end", func(r map[string]any) { r["frame_end"] = -1 }},
		{"exit_status", func(r map[string]any) { r["exit_status"] = 1000 }},
		{"per_rank[0].stage_seconds.\"load\"", func(r map[string]any) {
			r["per_rank"] = []any{map[string]any{"rank": 0, "stage_seconds": map[string]any{"load": -2}}}
		}},
		{"per_rank[0].frames", func(r map[string]any) { r["per_rank"] = []any{map[string]any{"rank": 0, "frames": 1 << 40}} }},
	} {
		testenv.EditJSON(t, Path(out), c.edit)
		_, _, err := Read(out)
		if want := "run report " + Path(out) + ": " + c.field + " "; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %s…", c.field, err, want)
		}
		New(m, out, jobDir, lustre.Complete).WriteTo(Path(out))
	}
}
