package slurm

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// labelLen bounds a name or comment given to Slurm: squeue shows a few characters of a name,
// and a path of any length must not make scontrol refuse the update.
const labelLen = 200

// Label names job id after what it runs, so that squeue and sacct tell one facefusion job from
// another (the batch script's #SBATCH --job-name is the same for all): its name and comment are
// set by `scontrol update`, unless they are so already (a requeued job's next start). Control
// characters become '?' and each is cut to labelLen bytes. The caller treats an error as a note:
// the job runs the same without its label.
func Label(ctx context.Context, id, name, comment string) error {
	if !IsJobID(id) {
		return fmt.Errorf("%q is not a Slurm job id", id)
	}
	name, comment = labelText(name), labelText(comment)
	out, err := run(ctx, "scontrol", "show", "job", "-o", id)
	if err != nil {
		return fmt.Errorf("scontrol show job %s: %w", id, err)
	}
	if j, err := ParseShowJob(out); err == nil && j.Name == name && j.Comment == comment {
		return nil
	}
	if _, err := run(ctx, "scontrol", "update", "JobId="+id, "Name="+name, "Comment="+comment); err != nil {
		return fmt.Errorf("scontrol update JobId=%s Name=… Comment=…: %w", id, err)
	}
	return nil
}

// labelText is s as one line of at most labelLen bytes, cut at a rune's start.
func labelText(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, strings.TrimSpace(s))
	if len(s) <= labelLen {
		return s
	}
	n := labelLen
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
