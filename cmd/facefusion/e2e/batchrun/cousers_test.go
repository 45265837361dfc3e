package batchrun

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/batch"
	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// What a co-user plants in a shared inbox and outbox: a link in the inbox to a video only the
// running user can read is skipped (its output would publish the video), with why; a batch
// folder that is their link to a folder of the user's is refused, and nothing, the summary
// included, is written through it.
func TestBatchCoUserLinks(t *testing.T) {
	dir := t.TempDir()
	private := filepath.Join(dir, "private")
	os.Mkdir(private, 0o700)
	clitest.BatchClip(t, filepath.Join(private, "secret.mkv"), 6, "s")
	clitest.BatchClip(t, filepath.Join(dir, "inbox", "mine.mkv"), 6, "m")
	stolen := filepath.Join(dir, "inbox", "stolen.mkv")
	os.Symlink(filepath.Join(private, "secret.mkv"), stolen)
	testenv.GiveToNobody(t, stolen)

	r := passBatch(t, dir, "-t", "inbox/*", "-o", "outbox/{target_name}{target_extension}", "--settle-time", "0")
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", r.Code, r.Stderr)
	}
	s := clitest.ReadSummary(t, filepath.Join(dir, "outbox/.facefusion-batch/report.json"))
	wantStates(t, "a co-user's link", s, map[string]string{"mine.mkv": batch.Done, "stolen.mkv": batch.Skipped})
	if why := clitest.States(s)["stolen.mkv"].Reason; !strings.Contains(why, "a link made by user nobody") {
		t.Errorf("stolen.mkv skipped for %q, want the link's maker named", why)
	}
	if _, err := os.Stat(filepath.Join(dir, "outbox", "stolen.mkv")); err == nil {
		t.Error("the private video was processed into the outbox through another user's link")
	}

	// The batch folder as their link to a folder of the user's holding a report.
	victim := filepath.Join(dir, "victim")
	os.Mkdir(victim, 0o700)
	report := []byte("the user's own report, not facefusion's\n")
	os.WriteFile(filepath.Join(victim, "report.json"), report, 0o600)
	out2 := filepath.Join(dir, "outbox2")
	os.Mkdir(out2, 0o755)
	link := filepath.Join(out2, ".facefusion-batch")
	os.Symlink(victim, link)
	testenv.GiveToNobody(t, link)
	r = passBatch(t, dir, "-t", "inbox/*", "-o", "outbox2/{target_name}{target_extension}", "--settle-time", "0")
	if r.Code != 2 || !strings.Contains(r.Stderr, "nobody") {
		t.Errorf("a batch folder that is another user's link: exit %d, want 2 naming its maker:\n%s", r.Code, r.Stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(victim, "report.json")); !bytes.Equal(got, report) {
		t.Errorf("the refused batch folder's link was written through: %q", got)
	}
	if ents, _ := os.ReadDir(victim); len(ents) != 1 {
		t.Errorf("files written into the victim's folder: %v", ents)
	}
}
