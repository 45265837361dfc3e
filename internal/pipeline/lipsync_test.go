package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/fault"
)

// A voice whose resample's scratch files cannot fit in the temp folder is refused before the
// voice extractor runs (minutes for a long track), in one line that names the file, the folder,
// the room needed and what to do; a voice whose scratch fits, or one resampled in memory, is
// not. The room is the real file system's: a track of 2^36 samples needs terabytes.
func TestVoiceRoom(t *testing.T) {
	dir := t.TempDir()
	for _, samples := range []int{48000, 100 * 48000} {
		if err := voiceRoom("voice.wav", dir, samples); err != nil {
			t.Errorf("%d samples: %v, want no refusal", samples, err)
		}
	}
	err := voiceRoom("voice.wav", dir, 1<<36)
	if err == nil {
		t.Fatal("a voice whose scratch needs terabytes was not refused")
	}
	line := err.Error()
	for _, want := range []string{"voice.wav", dir, "GB free", "free room in " + dir, "--temp-path"} {
		if !strings.Contains(line, want) {
			t.Errorf("the refusal %q does not say %q", line, want)
		}
	}
	if fault.KindOf(err) != fault.Environment || strings.Contains(line, "\n") {
		t.Errorf("the refusal is of kind %v or more than a line: %q", fault.KindOf(err), line)
	}
}

// The resample failing on its scratch says what to do once: free room when the folder is full,
// check the folder otherwise (no room's advice for an I/O error).
func TestScratchError(t *testing.T) {
	full := scratchError(fmt.Errorf("writing its scratch: %w", &fs.PathError{Op: "write", Path: "/t/x", Err: syscall.ENOSPC}), "voice.wav", "/t")
	if line := full.Error(); strings.Count(line, "room") != 1 || fault.KindOf(full) != fault.Environment {
		t.Errorf("no room: %q (kind %v), want the room's advice once, Environment", line, fault.KindOf(full))
	}
	broken := scratchError(&fs.PathError{Op: "read", Path: "/t/x", Err: syscall.EIO}, "voice.wav", "/t")
	if line := broken.Error(); strings.Contains(line, "room") || !strings.Contains(line, "check the temp folder /t") || !errors.Is(broken, syscall.EIO) {
		t.Errorf("an I/O error: %q, want the folder's check and no room's advice", line)
	}
}
