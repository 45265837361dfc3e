package join

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// A failed join's line names the room the output needs and where when the disk or a quota is
// full (by the error's words, or an output cut short with less room than it needs), and says
// that the segments are kept either way; a full disk or quota is the environment's failure
// (exit 4: batch-run does not hold it against the target), anything else an I/O error (exit 1).
func TestKeptError(t *testing.T) {
	cut := &video.IncompleteError{Path: "/x/.out.part-1.mkv", Detail: "it holds 99 of the job's 100 frames"}
	for _, tc := range []struct {
		name       string
		err        error
		free       int64
		want, miss string
	}{
		{"enospc", fmt.Errorf("copying: %w", syscall.ENOSPC), -1,
			"joining into /x/out.mp4 failed: no space left on device (the output needs about 12.3 MB): free room in /x (or raise the quota) and rerun the same command; the 8 finished segments are kept in /x/out.mp4.job", ""},
		{"quota", fault.RoomSaid(errors.New("ffmpeg failed"), "Error closing file: Disk quota exceeded\n"), -1, "failed: disk quota exceeded (the output needs about 12.3 MB): free room in /x", ""},
		{"cut, little room", cut, 1_000_000, "failed: the output came out cut short (it holds 99 of the job's 100 frames), with 1.0 MB free there (the output needs about 12.3 MB): free room in /x", ""},
		{"cut, room enough", cut, 50_000_000, "failed: video: /x/.out.part-1.mkv is not whole: it holds 99 of the job's 100 frames; the 8 finished segments are kept in /x/out.mp4.job: rerun the same command", "needs about"},
		{"other", errors.New("segment 3: bad table"), 0, "failed: segment 3: bad table; the 8 finished segments are kept in /x/out.mp4.job", "needs about"},
	} {
		err := keptError(tc.err, "/x/out.mp4", 12_345_678, tc.free, 8, "/x/out.mp4.job")
		if !strings.Contains(err.Error(), tc.want) || tc.miss != "" && strings.Contains(err.Error(), tc.miss) {
			t.Errorf("%s: %v\nwant it to say %q and not %q", tc.name, err, tc.want, tc.miss)
		}
		want := fault.Internal
		if strings.Contains(tc.want, "free room") {
			want = fault.Environment
		}
		if fault.KindOf(err) != want {
			t.Errorf("%s: kind %v, want %v", tc.name, fault.KindOf(err), want)
		}
	}
	env := fault.AsEnvironment(errors.New("the segments were encoded with different h264 configurations: give every node the same ffmpeg, then run the job again with --fresh"))
	if err := keptError(env, "/x/out.mp4", 1, -1, 8, "/x/out.mp4.job"); err != env {
		t.Errorf("a join error that says what to do became %v", err)
	}
	for n, want := range map[int64]string{999: "999 bytes", 1000: "1.0 kB", 12_345_678: "12.3 MB", 5e12: "5.0 TB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
