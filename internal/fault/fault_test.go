package fault

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

// A write that found no room is the environment's (exit 4), whatever it was classified as
// where it failed, and says where to free room; any other failure keeps its class.
func TestAsNoRoom(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		room bool
	}{
		{"enospc", &os.PathError{Op: "open", Path: "/x/a", Err: syscall.ENOSPC}, true},
		{"edquot", AsInput(fmt.Errorf("creating: %w", syscall.EDQUOT)), true},
		{"efbig", AsUsage(fmt.Errorf("writing: %w", syscall.EFBIG)), true},
		{"ffmpeg's words", AsInternal(RoomSaid(errors.New("ffmpeg failed (exit status 1)"), "Error writing trailer of pipe:3: No space left on device\n")), true},
		// A file name anyone may choose holds the words: not a full disk.
		{"a name", AsInput(errors.New("video: encoding /out/Disk quota exceeded.mp4.job/seg-000000.nut: Unknown encoder")), false},
		{"a name in the tool's words", AsInput(RoomSaid(errors.New("ffmpeg failed"), "/in/x: file too large.mp4: Invalid data found when processing input")), false},
		{"eacces", AsInput(&os.PathError{Op: "open", Path: "/x/a", Err: syscall.EACCES}), false},
		{"eio", errors.New("ffmpeg exited 0 but did not write it all: Input/output error"), false},
	} {
		got := AsNoRoom(tc.err, "/x")
		if !tc.room {
			if got != tc.err {
				t.Errorf("%s: AsNoRoom = %v, want the error as it was", tc.name, got)
			}
			continue
		}
		if k := KindOf(got); k != Environment || ExitCode(k) != ExitEnvironment {
			t.Errorf("%s: kind %d (exit %d), want Environment (exit %d)", tc.name, k, ExitCode(k), ExitEnvironment)
		}
		if !strings.Contains(got.Error(), RoomFix("/x")) || !strings.Contains(got.Error(), tc.err.Error()) {
			t.Errorf("%s: %q, want the error and %q", tc.name, got, RoomFix("/x"))
		}
		if again := AsNoRoom(got, "/y"); again != got {
			t.Errorf("%s: classified twice: %v", tc.name, again)
		}
	}
}
