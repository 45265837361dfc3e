package slurm

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ParseKillWait reads KillWait from `scontrol show config`'s output ("KillWait = 30 sec"): how
// long Slurm waits between a job's SIGTERM and its SIGKILL when it cancels, requeues or ends it
// at its time limit. Preemption waits the partition's GraceTime first and then KillWait too, so
// KillWait is what any SIGTERM from Slurm leaves a job, whichever sent it.
func ParseKillWait(out []byte) (time.Duration, error) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), "=")
		if !ok || strings.TrimSpace(key) != "KillWait" {
			continue
		}
		f := strings.Fields(val)
		if len(f) == 0 || len(f) > 2 || len(f) == 2 && f[1] != "sec" {
			return 0, fmt.Errorf("scontrol show config: KillWait %q is not N sec", strings.TrimSpace(val))
		}
		n, err := strconv.Atoi(f[0])
		if err != nil || n < 0 {
			return 0, fmt.Errorf("scontrol show config: KillWait %q is not N sec", strings.TrimSpace(val))
		}
		return time.Duration(n) * time.Second, nil
	}
	return 0, fmt.Errorf("scontrol show config: no KillWait")
}

// KillWait asks slurmctld for its KillWait (ParseKillWait).
func KillWait(ctx context.Context) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second) // a slurmctld that does not answer must not hold the job
	defer cancel()
	cmd := exec.CommandContext(ctx, "scontrol", "show", "config")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("scontrol show config: %v %s", err, strings.TrimSpace(stderr.String()))
	}
	return ParseKillWait(out)
}
