package lustre

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// realJob writes a manifest as a run writes it (4 chunks of 8 frames from frame 2, two done,
// one attempt), rank 1's journal with a third chunk, and a progress file.
func realJob(t testing.TB, dir string) *JobDir {
	t.Helper()
	jd := &JobDir{Path: dir}
	now := time.Now().UTC()
	m := &Manifest{Fingerprint: map[string]string{"chunk_frames": "8", "target file contents": "30:ab"}, Target: "in.mp4",
		FrameStart: 2, FrameEnd: 32, ChunkFrames: 8, NumChunks: 4, Encoder: "ffv1",
		Attempts: []Attempt{{Started: now.Add(-time.Minute), Updated: now, Ranks: 2, Planned: 4, Outcome: Running}},
		Done: []Chunk{
			{Chunk: 0, Start: 2, End: 10, Frames: 8, Size: 100, SHA256: strings.Repeat("a", 64), Rank: 0, Attempt: 1, Faces: 3,
				Identity: IdentitySums{Recognizer: "fr_feature", Every: 4, Faces: 2, After: 1_500_000_000, Before: 100_000_000}},
			{Chunk: 3, Start: 26, End: 32, Frames: 6, Size: 90, SHA256: strings.Repeat("b", 64), Rank: 1, Attempt: 1},
		}}
	if err := jd.WriteManifest(m); err != nil {
		t.Fatal(err)
	}
	if err := jd.WriteJournal(1, []Chunk{{Chunk: 1, Start: 10, End: 18, Frames: 8, Size: 80, Rank: 1, Attempt: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := jd.WriteProgress([]int64{12, 9}); err != nil {
		t.Fatal(err)
	}
	return jd
}

// Every file of a job folder (and the report beside its output: package report's test) is refused without blocking
// when it is a FIFO, without being followed when it is a link (planted by another user: this
// test chowns it to nobody, uid 65534, as such a user's would be), and without being read whole
// when it is over its limit (a sparse file: no disk spent). A link's target never shows in what
// the program says.
func TestJobFilesAreReadBounded(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	const secretText = "the-secret-contents-4711"
	if err := os.WriteFile(secret, []byte(`{"version": 1, "target": "`+secretText+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	reads := []struct {
		name string
		path func(*JobDir) string
		read func(*JobDir) error
	}{
		{"manifest", (*JobDir).Manifest, func(j *JobDir) error { _, _, err := j.ReadManifest(); return err }},
		{"journal", func(j *JobDir) string { return j.Journal(1) }, func(j *JobDir) error { _, err := j.ReadJournal(1); return err }},
		{"claim", (*JobDir).Claim, func(j *JobDir) error { _, _, err := j.ReadClaim(); return err }},
		{"progress file", (*JobDir).Progress, func(j *JobDir) error { _, _, err := j.ReadProgress(); return err }},
	}
	for _, r := range reads {
		for _, plant := range testenv.Plantings {
			t.Run(r.name+"/"+plant.Kind, func(t *testing.T) {
				jd := realJob(t, t.TempDir())
				p := r.path(jd)
				os.Remove(p)
				plant.Plant(t, p, secret)
				err := testenv.Guard(t, 10*time.Second, r.name, func() error { return r.read(jd) })
				if err == nil || !strings.Contains(err.Error(), p+" "+plant.Refusal) || strings.Contains(err.Error(), secretText) {
					t.Errorf("%s as a %s: %v, want %q", r.name, plant.Kind, err, p+" "+plant.Refusal)
				}
			})
		}
	}
	// The attempt file and a heartbeat have no error to give: a FIFO or link there reads as none.
	jd := realJob(t, t.TempDir())
	if err := syscall.Mkfifo(jd.Attempt(), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Guard(t, 10*time.Second, "attempt file", func() error {
		if id := jd.CurrentAttemptID(); id != "" {
			t.Errorf("a FIFO as the attempt file read as %q", id)
		}
		return nil
	})
}

// A number of the manifest outside what a run writes is an error naming the file and the field.
func TestManifestNumbersAreChecked(t *testing.T) {
	record := func(m map[string]any, i int) map[string]any { return m["done"].([]any)[i].(map[string]any) }
	for _, c := range []struct {
		field string
		edit  func(map[string]any)
	}{
		{"frame_start", func(m map[string]any) { m["frame_start"] = -1 }},
		{"frame_end", func(m map[string]any) { m["frame_end"] = 1 }},
		{"frame_end", func(m map[string]any) { m["frame_end"] = 1 << 40 }},
		{"chunk_frames", func(m map[string]any) { m["chunk_frames"] = 0 }},
		{"chunks", func(m map[string]any) { m["chunks"] = 1 << 40 }},
		{"chunks", func(m map[string]any) { m["chunks"] = -3 }},
		{"attempts[0].ranks", func(m map[string]any) { m["attempts"].([]any)[0].(map[string]any)["ranks"] = -1 }},
		{"attempts[0].planned_chunks", func(m map[string]any) { m["attempts"].([]any)[0].(map[string]any)["planned_chunks"] = 5 }},
		{"done[1].chunk", func(m map[string]any) { record(m, 1)["chunk"] = 9 }},
		{"done[1].chunk", func(m map[string]any) { record(m, 1)["chunk"] = 0 }},
		{"done[0].chunk", func(m map[string]any) { record(m, 0)["chunk"] = -1 }},
		{"done[0]", func(m map[string]any) { record(m, 0)["start"], record(m, 0)["end"] = 3, 11 }},
		{"done[0].frames", func(m map[string]any) { record(m, 0)["frames"] = 1 << 40 }},
		{"done[0].size", func(m map[string]any) { record(m, 0)["size"] = -5 }},
		{"done[0].rank", func(m map[string]any) { record(m, 0)["rank"] = 1 << 40 }},
		{"done[0].attempt", func(m map[string]any) { record(m, 0)["attempt"] = 2 }},
		{"done[0].faces", func(m map[string]any) { record(m, 0)["faces"] = 9 }},
		{"done[0].identity.faces", func(m map[string]any) {
			record(m, 0)["identity"].(map[string]any)["faces"] = 8*MaxFacesPerFrame + 1
		}},
		{"done[0].identity.after_sum_e9", func(m map[string]any) {
			record(m, 0)["identity"].(map[string]any)["after_sum_e9"] = int64(9e18)
		}},
	} {
		jd := realJob(t, t.TempDir())
		testenv.EditJSON(t, jd.Manifest(), c.edit)
		_, _, err := jd.ReadManifest()
		if want := "manifest " + jd.Manifest() + ": " + c.field + " "; err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "pass --fresh to start over") {
			t.Errorf("%s: %v, want %s…", c.field, err, want)
		}
	}
	// Every face of a frame is measured: two faces in each of a chunk's 8 frames are 16.
	jd0 := realJob(t, t.TempDir())
	testenv.EditJSON(t, jd0.Manifest(), func(m map[string]any) {
		id := record(m, 0)["identity"].(map[string]any)
		id["faces"], id["after_sum_e9"] = 16, int64(15e9)
	})
	if _, _, err := jd0.ReadManifest(); err != nil {
		t.Errorf("two faces a frame: %v", err)
	}
	// A number too big for its field is quoted as an excerpt, not digit by digit.
	jd := realJob(t, t.TempDir())
	data, _ := os.ReadFile(jd.Manifest())
	os.WriteFile(jd.Manifest(), []byte(strings.Replace(string(data), `"chunks": 4`, `"chunks": `+strings.Repeat("9", 1<<20), 1)), 0o644)
	if _, _, err := jd.ReadManifest(); err == nil || len(err.Error()) > 400 || !strings.Contains(err.Error(), "chunks is \"999") {
		t.Errorf("a number of a megabyte's digits: %.500v", err)
	}
	// The journals: a record of another rank, or with frames not its own, is refused.
	jd = realJob(t, t.TempDir())
	jd.WriteJournal(0, []Chunk{{Chunk: 1, Start: 10, End: 18, Frames: 8, Rank: 1, Attempt: 1}})
	if _, err := jd.Journals(); err == nil || !strings.Contains(err.Error(), "journal "+jd.Journal(0)+": [0].rank is 1, in rank 0's journal") {
		t.Errorf("another rank's record: %v", err)
	}
	jd.WriteJournal(0, []Chunk{{Chunk: 1, Start: 10, End: 18, Frames: -8, Rank: 0, Attempt: 1}})
	if _, err := jd.ReadJournal(0); err == nil || !strings.Contains(err.Error(), "[0].frames is -8") {
		t.Errorf("negative frames: %v", err)
	}
	// Records that fit no chunk of the job are the manifest's to judge.
	m, _, err := jd.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckRecord(Chunk{Chunk: 7, Start: 58, End: 66, Frames: 8, Attempt: 1}, jd.Journal(0)); err == nil || !strings.Contains(err.Error(), "record of chunk.chunk is 7, outside 0..3") {
		t.Errorf("a chunk beyond the job: %v", err)
	}
}

// The progress file's counts are checked the same way (and the report's: package report's test).
func TestProgressNumbersAreChecked(t *testing.T) {
	jd := realJob(t, t.TempDir())
	os.WriteFile(jd.Progress(), []byte(`{"frames": [3, -1]}`), 0o644)
	if _, _, err := jd.ReadProgress(); err == nil || !strings.Contains(err.Error(), "progress file "+jd.Progress()+": frames[1] is -1") {
		t.Errorf("negative progress: %v", err)
	}
}

// A claim's names are quoted as excerpts: a holder of a host name of 30 kB gets a line.
func TestClaimNamesAreExcerpts(t *testing.T) {
	jd := realJob(t, t.TempDir())
	h := Holder{Token: "t", Host: strings.Repeat("h", 30_000), SlurmJob: strings.Repeat("9", 30_000), PID: 1}
	data, _ := json.Marshal(h)
	if err := os.WriteFile(jd.Claim(), data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, ok, err := jd.ReadClaim()
	if !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if d := got.Describe(); len(d) > 400 {
		t.Errorf("a holder described in %d bytes: %.300s", len(d), d)
	}
}
