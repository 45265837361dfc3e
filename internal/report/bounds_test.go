package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// guard runs f and fails the test if it has not returned after 10 s: a read that blocks on a
// FIFO fails instead of hanging the tests.
func guard(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still reading after 10 s", what)
		return nil
	}
}

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
	for _, plant := range []struct{ kind, want string }{
		{"fifo", "is a FIFO (named pipe), not a regular file"},
		{"link", "is a link, not a regular file"},
		{"huge", "is larger than the"},
	} {
		t.Run(plant.kind, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.mp4")
			p := Path(out)
			switch plant.kind {
			case "fifo":
				if err := syscall.Mkfifo(p, 0o644); err != nil {
					t.Fatal(err)
				}
			case "link":
				if err := os.Symlink(secret, p); err != nil {
					t.Fatal(err)
				}
				testenv.GiveToNobody(t, p)
			case "huge":
				if err := os.WriteFile(p, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Truncate(p, 1<<30); err != nil {
					t.Fatal(err)
				}
			}
			err := guard(t, "run report", func() error { _, _, err := Read(out); return err })
			if err == nil || !strings.Contains(err.Error(), p+" "+plant.want) || strings.Contains(err.Error(), secretText) {
				t.Errorf("run report as a %s: %v, want %q", plant.kind, err, p+" "+plant.want)
			}
		})
	}
}

// editJSON rewrites the JSON object in path through edit.
func editJSON(t *testing.T, path string, edit func(map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
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
	editJSON(t, Path(out), func(r map[string]any) {
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
		editJSON(t, Path(out), c.edit)
		_, _, err := Read(out)
		if want := "run report " + Path(out) + ": " + c.field + " "; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %s…", c.field, err, want)
		}
		New(m, out, jobDir, lustre.Complete).WriteTo(Path(out))
	}
}
