package lustre

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzJobFiles feeds the job folder's readers (manifest, a rank's journal, the progress file,
// the claim) anything at all: the folder is shared, and status reads a colleague's. Each gives
// its records or an error, never a panic; and what reads, written back and read again, writes
// the same bytes (a resume rewrites what it read, and must not drift). The seeds are the files
// as a run writes them.
func FuzzJobFiles(f *testing.F) {
	seed := &JobDir{Path: f.TempDir()}
	os.MkdirAll(filepath.Dir(seed.Journal(1)), 0o755)
	at := time.Date(2026, 12, 6, 8, 0, 0, 500_000_000, time.FixedZone("", 3600))
	m := &Manifest{Fingerprint: map[string]string{"target": "a.mp4", "chunk_frames": "8"}, Target: "a.mp4", FrameEnd: 21,
		ChunkFrames: 8, NumChunks: 3, Encoder: "libx264",
		Attempts: []Attempt{{Started: at, Ranks: 2, SlurmJob: "77", Planned: 3, Outcome: "checkpointed", Stop: "SIGTERM", Updated: at}}}
	recs := []Chunk{{Chunk: 2, Start: 16, End: 21, Frames: 5, Size: 900, SHA256: "ab", Rank: 1, Attempt: 1, Done: at.Format(time.RFC3339), Faces: 5}}
	m.Merge(recs)
	claim, _ := json.Marshal(Holder{Token: "t", Host: "node1", PID: 42, SlurmJob: "77", Started: at, Beat: at})
	if seed.WriteManifest(m) != nil || seed.WriteJournal(1, recs) != nil || seed.WriteProgress([]int64{8, 13}) != nil {
		f.Fatal("cannot write the seed job folder")
	}
	read := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	f.Add(read(seed.Manifest()), read(seed.Journal(1)), read(seed.Progress()), claim)
	f.Add([]byte(`{"version": 1, "chunks": 4000000000, "done": [{"chunk": -1}]}`), []byte("[]"), []byte(`{"frames": []}`), []byte("{}"))
	jd := &JobDir{Path: memDir(f)}
	f.Fuzz(func(t *testing.T, manifest, journal, progress, claim []byte) {
		os.RemoveAll(jd.Path)
		os.MkdirAll(filepath.Dir(jd.Journal(1)), 0o755)
		for path, b := range map[string][]byte{jd.Manifest(): manifest, jd.Journal(1): journal, jd.Progress(): progress, jd.Claim(): claim} {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		jd.ReadClaim()
		if m, ok, err := jd.ReadManifest(); ok && err == nil {
			again(t, "manifest", jd.Manifest(), func() error { return jd.WriteManifest(m) }, func() error {
				m2, _, err := jd.ReadManifest()
				if err == nil {
					err = jd.WriteManifest(m2)
				}
				return err
			})
		}
		if recs, err := jd.ReadJournal(1); err == nil {
			again(t, "journal", jd.Journal(1), func() error { return jd.WriteJournal(1, recs) }, func() error {
				recs2, err := jd.ReadJournal(1)
				if err == nil {
					err = jd.WriteJournal(1, recs2)
				}
				return err
			})
		}
		if frames, ok, err := jd.ReadProgress(); ok && err == nil {
			again(t, "progress file", jd.Progress(), func() error { return jd.WriteProgress(frames) }, func() error {
				frames2, _, err := jd.ReadProgress()
				if err == nil {
					err = jd.WriteProgress(frames2)
				}
				return err
			})
		}
	})
}

// memDir is a fresh folder in memory (/dev/shm) where there is one, else on disk: the writers
// sync every file, which on a busy disk would leave the fuzzer a few inputs a second.
func memDir(f *testing.F) string {
	dir, err := os.MkdirTemp("/dev/shm", "fuzz-job-")
	if err != nil {
		return filepath.Join(f.TempDir(), "job")
	}
	f.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "job")
}

// again writes what was read (write), then reads that and writes it again (reread): the file at
// path must hold the same bytes both times.
func again(t *testing.T, what, path string, write, reread func() error) {
	t.Helper()
	if err := write(); err != nil {
		t.Fatalf("the %s read cannot be written: %v", what, err)
	}
	first, _ := os.ReadFile(path)
	if err := reread(); err != nil {
		t.Fatalf("the %s written reads as %v:\n%s", what, err, first)
	}
	if second, _ := os.ReadFile(path); !bytes.Equal(first, second) {
		t.Fatalf("the %s written, read and written again changed:\n%s\n%s", what, first, second)
	}
}
