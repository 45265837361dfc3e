package batch

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/job"
)

// FuzzStateFiles feeds the batch state's readers (a Slurm job's frozen entry list, a done
// record, a failure record) anything at all: the state folder is shared by every task of an
// array and every user of the inbox. Each gives its records, or none, or an error, never a
// panic; and a list that reads holds no more entries than its bytes can. The seeds are the
// files as Frozen, MarkDone and AddFailure write them.
func FuzzStateFiles(f *testing.F) {
	cfg := job.Default()
	cfg.TargetPattern, cfg.SourcePattern, cfg.OutputPattern = "inbox/*.mp4", "faces/a.jpg", "out/{target_name}.mp4"
	seedDir := f.TempDir()
	seed := Dir{filepath.Join(seedDir, "state")}
	if err := seed.Make(); err != nil {
		f.Fatal(err)
	}
	out := filepath.Join(seedDir, "out.mp4")
	os.WriteFile(out, []byte("an output"), 0o644)
	e := Entry{Index: 0, Sources: []string{"faces/a.jpg"}, Target: "inbox/one.mp4", Output: out}
	_, list, err := seed.Frozen("77", cfg, func() ([]Entry, error) {
		return []Entry{e, {Index: -1, Target: "inbox/gone.mp4", Skip: "a link to nothing"}}, nil
	})
	if err != nil {
		f.Fatal(err)
	}
	if err := seed.MarkDone("k", e); err != nil {
		f.Fatal(err)
	}
	if _, err := seed.AddFailure("k", Failure{Target: "inbox/one.mp4", Output: out, ExitStatus: 1, Reason: "ffmpeg failed", Time: time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC), Host: "node1", SlurmJob: "77"}); err != nil {
		f.Fatal(err)
	}
	read := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	f.Add(read(list), read(seed.done("k")), read(filepath.Join(seed.failures("k"), "attempt-1.json")))
	d := Dir{filepath.Join(memDir(f), "state")}
	f.Fuzz(func(t *testing.T, list, done, failure []byte) {
		os.RemoveAll(d.Path)
		if err := d.Make(); err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(d.failures("k"), 0o755)
		for path, b := range map[string][]byte{d.list("77"): list, d.done("k"): done, filepath.Join(d.failures("k"), "attempt-1.json"): failure} {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		errNew := errors.New("expanded")
		entries, _, err := d.Frozen("77", cfg, func() ([]Entry, error) { return nil, errNew })
		if errors.Is(err, errNew) {
			t.Fatal("a list there was expanded anew")
		}
		if len(entries) > len(list) {
			t.Fatalf("%d entries from %d bytes", len(entries), len(list))
		}
		d.Done("k")
		if n := len(d.Failures("k", false)); n > 1 {
			t.Fatalf("%d failures from one record", n)
		}
	})
}

// memDir is a fresh folder in memory (/dev/shm) where there is one, else on disk: the writers
// sync every file, which on a busy disk would leave the fuzzer a few inputs a second.
func memDir(f *testing.F) string {
	dir, err := os.MkdirTemp("/dev/shm", "fuzz-batch-")
	if err != nil {
		return f.TempDir()
	}
	f.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
