package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/lustre"
)

// status of a finished output prints its report's output hash: this version's block hash with its
// block, and a version 2 report's whole-file sha256 as it was.
func TestStatusPrintsTheOutputHash(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, fields, want, not string }{
		{"v3.mp4", `"output_bytes": 1234, "output_sha256_blocks": "` + strings.Repeat("ab", 32) + `", "output_hash_block_bytes": 16777216`,
			"hash:       " + strings.Repeat("ab", 32) + " (1234 bytes; sha256 of 16777216-byte blocks' sha256sum lines)\n", "sha256:"},
		{"v2.mp4", `"output_bytes": 99, "output_sha256": "` + strings.Repeat("cd", 32) + `"`,
			"sha256:     " + strings.Repeat("cd", 32) + " (99 bytes)\n", "hash:"},
	} {
		out := filepath.Join(dir, c.name)
		rep := `{"version": ` + map[string]string{"v3.mp4": "3", "v2.mp4": "2"}[c.name] + `, "outcome": "complete", "output": "` + out +
			`", "target": "in.mp4", "frame_end": 10, "chunks": 1, "attempts": [], "finished": "2026-12-01T10:00:00Z", ` + c.fields + `}`
		if err := os.WriteFile(lustre.ReportPath(out), []byte(rep), 0o644); err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		if err := reportStatus(out, &got); err != nil || !strings.Contains(got.String(), c.want) || strings.Contains(got.String(), c.not) {
			t.Errorf("status of a %s report: %v\n%s\nwant the line %q", c.name, err, got.String(), c.want)
		}
	}
}
