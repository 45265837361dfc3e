// Package slurm reads what a running Slurm job needs to know about itself from Slurm's own
// tools: the time left before its limit, so that the program can stop on its own clock when the
// scheduler's warning signal comes late or not at all, and how long a SIGTERM leaves it before
// SIGKILL, so that a stop keeps the work that fits in it.
package slurm

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ParseTimeLeft reads squeue's %L field: `M:SS`, `H:MM:SS` or `D-HH:MM:SS` (leading fields
// are left out when zero), `UNLIMITED`, or `NOT_SET`. limited is false for the last two: the
// job has no time limit, so there is no deadline.
func ParseTimeLeft(s string) (left time.Duration, limited bool, err error) {
	s = strings.TrimSpace(s)
	switch s {
	case "UNLIMITED", "NOT_SET":
		return 0, false, nil
	}
	bad := func() (time.Duration, bool, error) {
		return 0, false, fmt.Errorf("squeue time left %q is not D-HH:MM:SS, H:MM:SS, M:SS, UNLIMITED or NOT_SET", s)
	}
	days := 0
	rest := s
	d, r, hasDays := strings.Cut(s, "-")
	if hasDays {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return bad()
		}
		days, rest = n, r
	}
	parts := strings.Split(rest, ":")
	// Slurm leaves out zero leading fields, but a day count always comes with hours, minutes
	// and seconds, and minutes and seconds are always there.
	if len(parts) < 2 || len(parts) > 3 || hasDays && len(parts) != 3 {
		return bad()
	}
	secs := 0
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || (i > 0 && (len(p) != 2 || n > 59)) {
			return bad()
		}
		secs = secs*60 + n
	}
	return time.Duration(days*86400+secs) * time.Second, true, nil
}

// TimeLeft asks squeue for job's time left. limited is false when the job has no time limit.
func TimeLeft(ctx context.Context, job string) (left time.Duration, limited bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second) // a slurmctld that does not answer must not hold the job
	defer cancel()
	cmd := exec.CommandContext(ctx, "squeue", "-h", "-j", job, "-o", "%L")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, false, fmt.Errorf("squeue -h -j %s -o %%L: %v %s", job, err, strings.TrimSpace(stderr.String()))
	}
	return ParseTimeLeft(string(out))
}
