package lustre

import (
	"strings"
	"testing"
	"time"
)

// A claim names its holder with what the claim file says: another user who can write it (or a
// damaged file) must not put an escape sequence or a line break into the line that shows it.
func TestDescribeQuotesTheClaim(t *testing.T) {
	h := Holder{Host: "node1\x1b[2J\x1b[31m\nfacefusion: all done", SlurmJob: "42\r\n\x1b]0;owned\x07", PID: 7,
		Started: time.Unix(0, 0), Beat: time.Unix(0, 0)}
	got := h.Describe()
	if strings.ContainsAny(got, "\x1b\n\r\x07") {
		t.Errorf("Describe passes control characters on raw: %q", got)
	}
	if !strings.Contains(got, `"node1\x1b[2J\x1b[31m\nfacefusion: all done"`) || !strings.Contains(got, `Slurm job "42\r\n\x1b]0;owned\a"`) {
		t.Errorf("Describe does not quote the host and job as read: %s", got)
	}
}
