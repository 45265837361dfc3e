package lustre

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func writeSegment(t *testing.T, jd *JobDir, chunk int, data []byte) Chunk {
	t.Helper()
	if err := os.WriteFile(jd.Segment(chunk), data, 0o644); err != nil {
		t.Fatal(err)
	}
	size, sum, err := HashFile(jd.Segment(chunk))
	if err != nil {
		t.Fatal(err)
	}
	return Chunk{Chunk: chunk, Start: chunk * 8, End: chunk*8 + 8, Frames: 8, Size: size, SHA256: sum}
}

func TestVerifyFindsMissingTruncatedAndJunkSegments(t *testing.T) {
	jd := &JobDir{Path: t.TempDir()}
	data := []byte(strings.Repeat("segment bytes ", 100))
	c := writeSegment(t, jd, 3, data)
	if err := jd.Verify(c); err != nil {
		t.Fatalf("intact segment: %v", err)
	}
	os.Truncate(jd.Segment(3), int64(len(data)/2))
	if err := jd.Verify(c); err == nil || !strings.Contains(err.Error(), "bytes, the checkpoint recorded") {
		t.Errorf("truncated segment: %v", err)
	}
	junk := append([]byte(nil), data...)
	junk[len(junk)/2] ^= 1 // one bit, same size
	os.WriteFile(jd.Segment(3), junk, 0o644)
	if err := jd.Verify(c); err == nil || !strings.Contains(err.Error(), "SHA-256") {
		t.Errorf("changed segment: %v", err)
	}
	os.Remove(jd.Segment(3))
	if err := jd.Verify(c); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing segment: %v", err)
	}
}

func TestManifestRoundTripMergeAndChanged(t *testing.T) {
	jd := &JobDir{Path: t.TempDir()}
	if _, ok, err := jd.ReadManifest(); ok || err != nil {
		t.Fatalf("no manifest yet: ok %v, err %v", ok, err)
	}
	m := &Manifest{Fingerprint: map[string]string{"target": "a", "chunk_frames": "8"}, NumChunks: 4}
	if n := m.Merge([]Chunk{{Chunk: 2, Frames: 8}, {Chunk: 0, Frames: 8}}); n != 2 {
		t.Fatalf("merged %d new records, want 2", n)
	}
	if n := m.Merge([]Chunk{{Chunk: 2, Frames: 8}, {Chunk: 2, Frames: 5}}); n != 1 || len(m.Done) != 2 || m.DoneFrames() != 13 {
		t.Fatalf("a chunk's later record replaces the earlier: %d changed, %d records, %d frames", n, len(m.Done), m.DoneFrames())
	}
	if err := jd.WriteManifest(m); err != nil {
		t.Fatal(err)
	}
	got, ok, err := jd.ReadManifest()
	if !ok || err != nil || len(got.Done) != 2 || got.Done[0].Chunk != 0 || got.Done[1].Chunk != 2 {
		t.Fatalf("read back %+v, %v, %v (want 2 records sorted by chunk)", got, ok, err)
	}
	if k := got.Changed(map[string]string{"target": "a", "chunk_frames": "8"}); k != "" {
		t.Errorf("same fingerprint reported %q changed", k)
	}
	if k := got.Changed(map[string]string{"target": "b", "chunk_frames": "8"}); k != "target" {
		t.Errorf("changed target reported as %q", k)
	}
	if k := got.Changed(map[string]string{"target": "a"}); k != "chunk_frames" {
		t.Errorf("a missing entry reported as %q", k)
	}
	os.WriteFile(jd.Manifest(), []byte("{half a manif"), 0o644)
	if _, _, err := jd.ReadManifest(); err == nil || !strings.Contains(err.Error(), "--fresh") {
		t.Errorf("corrupt manifest: %v", err)
	}
}

func TestJournalsOfAnyRankCount(t *testing.T) {
	jd := &JobDir{Path: t.TempDir()}
	for r, n := range []int{2, 0, 1} {
		var recs []Chunk
		for i := 0; i < n; i++ {
			recs = append(recs, Chunk{Chunk: 10*r + i, Rank: r})
		}
		if err := jd.WriteJournal(r, recs); err != nil {
			t.Fatal(err)
		}
	}
	all, err := jd.Journals()
	if err != nil || len(all) != 3 {
		t.Fatalf("%d records (%v), want 3", len(all), err)
	}
}

// Identity hashes small files whole and samples big ones; either way a changed byte that it
// reads, or a changed size, changes it.
func TestIdentity(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("hello"), 0o644)
	a, _ := Identity(small)
	os.WriteFile(small, []byte("hellp"), 0o644)
	if b, _ := Identity(small); a == b {
		t.Error("a changed small file has the same identity")
	}
	big := filepath.Join(dir, "big")
	data := make([]byte, SampleLimit+3<<20)
	os.WriteFile(big, data, 0o644)
	a, err := Identity(big)
	if err != nil || !strings.Contains(a, "sampled") {
		t.Fatalf("big file: %q, %v", a, err)
	}
	data[len(data)-1] = 1 // in the last sample
	os.WriteFile(big, data, 0o644)
	if b, _ := Identity(big); a == b {
		t.Error("a change in the last block went unnoticed")
	}
	os.WriteFile(big, append(data, 0), 0o644)
	if c, _ := Identity(big); c == a {
		t.Error("a changed size went unnoticed")
	}
}

// The fault hook fails one chosen write like a full disk; the file keeps its old content and
// no temp file is left.
func TestWriteAtomicFaultKeepsOldFile(t *testing.T) {
	t.Setenv(FaultEnv, "m.json:2")
	p := filepath.Join(t.TempDir(), "m.json")
	if err := WriteAtomic(p, []byte("good")); err != nil {
		t.Fatal(err)
	}
	err := WriteAtomic(p, []byte("newer content"))
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), p) {
		t.Fatalf("second write: %v, want ENOSPC naming the file", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "good" {
		t.Fatalf("file holds %q after a failed write", b)
	}
	if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 1 {
		t.Fatalf("%d entries: a temp file was left", len(ents))
	}
	if err := WriteAtomic(p, []byte("third")); err != nil {
		t.Fatalf("third write: %v", err)
	}
}
