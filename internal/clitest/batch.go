package clitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/batch"
	"github.com/facefusion-hpc/facefusion/internal/report"
)

// facefusion batch-run's end-to-end tests: inboxes of tiny clips, passed through without a
// swapper, and the summaries and reports the batch leaves.

// BatchClip is a 64x48 clip of n frames with audio; tag makes its bytes its own (two clips of
// one length are otherwise the same file, and so the same work).
func BatchClip(t *testing.T, path string, n int, tag string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	FaceClip(t, path, 64, 48, n, "25", "-metadata", "title="+tag)
}

// ReadSummary decodes the batch summary at path.
func ReadSummary(t *testing.T, path string) *batch.Summary {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("batch summary: %v", err)
	}
	var s batch.Summary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("batch summary %s: %v\n%s", path, err, data)
	}
	return &s
}

// States is each entry's state by its target's base name.
func States(s *batch.Summary) map[string]batch.Result {
	m := map[string]batch.Result{}
	for _, r := range s.Entries {
		m[filepath.Base(r.Target)] = r
	}
	return m
}

// Printed is the outputs a batch printed on stdout (the entries it did), sorted.
func Printed(r Result) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

// Attempts is the count of attempts the run report beside output records.
func Attempts(t *testing.T, output string) int {
	t.Helper()
	rep, ok, err := report.Read(output)
	if err != nil || !ok {
		t.Fatalf("run report of %s: %v (found %v)", output, err, ok)
	}
	return len(rep.Attempts)
}
