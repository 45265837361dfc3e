package lustre

import (
	"errors"
	"maps"
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
	m := &Manifest{Fingerprint: map[string]string{"target": "a", "chunk_frames": "8"}, FrameEnd: 21, ChunkFrames: 8, NumChunks: 3}
	if n := m.Merge([]Chunk{{Chunk: 2, Start: 16, End: 21, Frames: 5}, {Chunk: 0, End: 8, Frames: 8}}); n != 2 {
		t.Fatalf("merged %d new records, want 2", n)
	}
	if n := m.Merge([]Chunk{{Chunk: 2, Start: 16, End: 21, Frames: 5}, {Chunk: 2, Start: 16, End: 21, Frames: 5, Size: 9}}); n != 1 || len(m.Done) != 2 || m.DoneFrames() != 13 {
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
	if k := got.Changed(map[string]string{"target": "b", "chunk_frames": "8"}); k != `target was "a", now "b"` {
		t.Errorf("changed target reported as %q", k)
	}
	if k := got.Changed(map[string]string{"target": "a"}); k != `chunk_frames was "8", now not a setting of this program` {
		t.Errorf("a missing entry reported as %q", k)
	}
	os.WriteFile(jd.Manifest(), []byte("{half a manif"), 0o644)
	if _, _, err := jd.ReadManifest(); err == nil || !strings.Contains(err.Error(), "--fresh") {
		t.Errorf("corrupt manifest: %v", err)
	}
}

// The identity measure rides in the chunk records: the job's is their sum, whatever attempt wrote
// them; a record without one (an older version's) makes it partial; a record read back equals
// the one written, so Merge sees no change.
func TestDoneIdentity(t *testing.T) {
	jd := &JobDir{Path: t.TempDir()}
	id := func(faces int, after int64) IdentitySums {
		return IdentitySums{Recognizer: "fr_feature", Every: 10, Faces: faces, After: after}
	}
	m := &Manifest{FrameEnd: 24, ChunkFrames: 8, NumChunks: 3}
	if s, partial := m.DoneIdentity(); s != nil || partial {
		t.Fatalf("no records: %+v, partial %v", s, partial)
	}
	m.Merge([]Chunk{{Chunk: 0, End: 8, Frames: 8, Identity: id(1, 500)}, {Chunk: 1, Start: 8, End: 16, Frames: 8, Identity: id(0, 0)}})
	if err := jd.WriteManifest(m); err != nil {
		t.Fatal(err)
	}
	got, _, err := jd.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	if n := got.Merge(m.Done); n != 0 {
		t.Fatalf("the records read back differ from those written: %d changed", n)
	}
	got.Merge([]Chunk{{Chunk: 2, Frames: 8, Attempt: 2, Identity: id(2, 300)}})
	if s, partial := got.DoneIdentity(); s == nil || partial || *s != id(3, 800) {
		t.Fatalf("the records' sum %+v, partial %v, want %+v", s, partial, id(3, 800))
	}
	got.Merge([]Chunk{{Chunk: 1, Frames: 8}}) // an older version's record: no measure
	if s, partial := got.DoneIdentity(); s == nil || !partial || *s != id(3, 800) {
		t.Fatalf("with an older record: %+v, partial %v, want the others' sum, partial", s, partial)
	}
}

// A refusal names a changed setting, with its old and new values, before any entry derived
// from files, whatever their order by name: --processors none drops the model files ("model
// file …" sorts before "processors") and is refused as processors changed.
func TestChangedNamesSettingsFirst(t *testing.T) {
	m := &Manifest{Fingerprint: map[string]string{
		"chunk_frames":                        "8",
		"face_selector_order":                 "large-small",
		"processors":                          "face_swapper",
		"model file blazeface_front_128.onnx": "442005:ab",
		"source file contents":                "1:cd",
		"target file contents":                "2:ef",
	}}
	now := maps.Clone(m.Fingerprint)
	delete(now, "model file blazeface_front_128.onnx")
	delete(now, "source file contents")
	now["processors"] = "none"
	now["target file contents"] = "3:00"
	if why := m.Changed(now); why != `processors was "face_swapper", now "none"` {
		t.Errorf("processors none: %q", why)
	}
	now = maps.Clone(m.Fingerprint)
	now["face_selector_order"] = "left-right"
	now["chunk_frames"] = "8"
	if why := m.Changed(now); why != `face_selector_order was "large-small", now "left-right"` {
		t.Errorf("selector order: %q", why)
	}
	now = maps.Clone(m.Fingerprint)
	now["target file contents"] = "3:00"
	now["model file xseg_1.onnx"] = "9:11"
	if why := m.Changed(now); why != "model file xseg_1.onnx changed" {
		t.Errorf("two derived entries: %q, want the first by name", why)
	}
	now["max_faces"] = "3"
	if why := m.Changed(now); !strings.HasPrefix(why, `max_faces was not recorded`) || !strings.HasSuffix(why, `now "3"`) {
		t.Errorf("a setting the manifest lacks: %q", why)
	}
	if why := m.Changed(maps.Clone(m.Fingerprint)); why != "" {
		t.Errorf("the same fingerprint: %q", why)
	}
}

// SameJob's refusals are one line naming the folder or manifest and --fresh; a manifest whose
// fingerprint was deleted or emptied is refused for that, not for a setting.
func TestSameJob(t *testing.T) {
	jd := &JobDir{Path: t.TempDir()}
	fp := map[string]string{"chunk_frames": "8", "target file contents": "2:ef"}
	if err := jd.WriteManifest(&Manifest{Fingerprint: fp}); err != nil {
		t.Fatal(err)
	}
	m, _, err := jd.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	if err := jd.SameJob(m, fp); err != nil {
		t.Errorf("the same job: %v", err)
	}
	err = jd.SameJob(m, map[string]string{"chunk_frames": "16", "target file contents": "2:ef"})
	if want := "job folder " + jd.Path + ` holds another job: chunk_frames was "8", now "16": pass --fresh to start over`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("changed chunk_frames: %v, want %s…", err, want)
	}
	for _, edit := range []struct{ from, to string }{{`"fingerprint": {`, `"fingerprint_deleted": {`}, {`"fingerprint": {`, `"fingerprint": {}, "was": {`}} {
		data, _ := os.ReadFile(jd.Manifest())
		os.WriteFile(jd.Manifest(), []byte(strings.Replace(string(data), edit.from, edit.to, 1)), 0o644)
		m, _, err := jd.ReadManifest()
		if err != nil {
			t.Fatal(err)
		}
		err = jd.SameJob(m, fp)
		if want := "manifest " + jd.Manifest() + " has no fingerprint: "; err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "--fresh") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want %s… --fresh", edit.to, err, want)
		}
		jd.WriteManifest(&Manifest{Fingerprint: fp})
	}
}

func TestJournalsOfAnyRankCount(t *testing.T) {
	jd := &JobDir{Path: t.TempDir()}
	for r, n := range []int{2, 0, 1} {
		var recs []Chunk
		for i := 0; i < n; i++ {
			recs = append(recs, Chunk{Chunk: 10*r + i, Start: 8 * (10*r + i), End: 8 * (10*r + i + 1), Frames: 8, Rank: r})
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
