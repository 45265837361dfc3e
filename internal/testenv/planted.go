package testenv

import (
	"encoding/json"
	"os"
	"syscall"
	"testing"
	"time"
)

// A Planted is what another user may put where the program reads one of its own files (a job
// folder's, a run report), and the words of the refusal that a bounded read of it gives.
type Planted struct{ Kind, Refusal string }

// Plantings are the three: a FIFO (which a plain open would wait on for a writer), a link
// planted by another user (given to nobody), and a file over any limit (sparse: no disk spent).
var Plantings = []Planted{
	{"fifo", "is a FIFO (named pipe), not a regular file"},
	{"link", "is a link, not a regular file"},
	{"huge", "is larger than the"},
}

// Plant puts p's kind at path (where nothing is); a link leads to target.
func (p Planted) Plant(t testing.TB, path, target string) {
	t.Helper()
	switch p.Kind {
	case "fifo":
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Fatal(err)
		}
	case "link":
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
		GiveToNobody(t, path)
	case "huge":
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, 1<<30); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("no planting of kind %q", p.Kind)
	}
}

// Guard runs f and fails the test if it has not returned after limit: a hang guard, so that a
// read that blocks (on a FIFO) or a parse that runs away fails instead of hanging the tests.
// limit is generous (a loaded machine stays far under it): how fast a read is, is for
// benchmarks to say, not for a test to assert.
func Guard(t testing.TB, limit time.Duration, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("%s: still running after %s", what, time.Since(start).Round(time.Millisecond))
		return nil
	}
}

// EditJSON rewrites the JSON object in the file at path through edit.
func EditJSON(t testing.TB, path string, edit func(map[string]any)) {
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
