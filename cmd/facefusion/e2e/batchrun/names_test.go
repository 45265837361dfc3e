package batchrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/batch"
	"github.com/facefusion-hpc/facefusion/internal/clitest"
)

// Names an inbox can hold that a careless join or listing cannot: a target with a line break in
// its name is processed like any other, through ffmpeg's serial join (Matroska: its list of
// segments); a link to nothing and a link loop are listed in the summary as skipped, with why, and
// named on stderr, instead of vanishing. The batch is all done (exit 0).
func TestBatchOddNames(t *testing.T) {
	dir := t.TempDir()
	night := "night\nshift"
	clitest.BatchClip(t, filepath.Join(dir, "inbox", night+".mkv"), 10, "n")
	clitest.BatchClip(t, filepath.Join(dir, "inbox", "cr\r.mkv"), 10, "c")
	inbox := filepath.Join(dir, "inbox")
	os.Symlink(filepath.Join(inbox, "deleted.mkv"), filepath.Join(inbox, "dangling.mkv"))
	os.Symlink("loop2.mkv", filepath.Join(inbox, "loop1.mkv"))
	os.Symlink("loop1.mkv", filepath.Join(inbox, "loop2.mkv"))

	r := passBatch(t, dir, "-t", "inbox/*", "-o", "outbox/{target_name}{target_extension}", "--settle-time", "0", "--chunk-frames", "4")
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", r.Code, r.Stderr)
	}
	s := clitest.ReadSummary(t, filepath.Join(dir, "outbox/.facefusion-batch/report.json"))
	wantStates(t, "odd names", s, map[string]string{night + ".mkv": batch.Done, "cr\r.mkv": batch.Done,
		"dangling.mkv": batch.Skipped, "loop1.mkv": batch.Skipped, "loop2.mkv": batch.Skipped})
	for _, n := range []string{night + ".mkv", "cr\r.mkv"} {
		clitest.CheckFramesOf(t, filepath.Join(dir, "outbox", n), filepath.Join(inbox, n))
	}
	states := clitest.States(s)
	for name, why := range map[string]string{"dangling.mkv": "a link to nothing", "loop1.mkv": "a link loop", "loop2.mkv": "a link loop"} {
		if !strings.Contains(states[name].Reason, why) {
			t.Errorf("%s: %q, want it to say %q", name, states[name].Reason, why)
		}
		if !strings.Contains(r.Stderr, filepath.Join("inbox", name)+": "+why) {
			t.Errorf("stderr does not name %s as %q:\n%s", name, why, r.Stderr)
		}
	}
	// The outputs on stdout, one a line: a name with a line break or carriage return is quoted,
	// so that it neither splits a line nor moves the cursor.
	if !strings.Contains(r.Stdout, `night\nshift.mkv"`) || !strings.Contains(r.Stdout, `cr\r.mkv"`) || strings.ContainsAny(strings.TrimSuffix(r.Stdout, "\n"), "\r") || strings.Count(r.Stdout, "\n") != 2 {
		t.Errorf("stdout does not list the two outputs quoted, one a line: %q", r.Stdout)
	}
	if s.Counts[batch.Skipped] != 3 || s.Counts[batch.Done] != 2 {
		t.Errorf("counts %v, want 3 skipped and 2 done", s.Counts)
	}
	// The links are the user's: left as they are.
	for _, n := range []string{"dangling.mkv", "loop1.mkv", "loop2.mkv"} {
		if st, err := os.Lstat(filepath.Join(inbox, n)); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s was changed: %v", n, err)
		}
	}
}
