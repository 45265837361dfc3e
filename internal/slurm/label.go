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

// unnamed are the names a job has when its user chose none: the batch script's own
// (#SBATCH --job-name=facefusion), or Slurm's default, the script's or the program's file name.
var unnamed = map[string]bool{"": true, "facefusion": true, "facefusion.sbatch": true}

// Label names job id after what it runs, so that squeue and sacct tell one facefusion job from
// another (the batch script's #SBATCH --job-name is the same for all): `scontrol update` sets
// its name where the job has none of its user's (sbatch -J, srun -J keep theirs) and its
// comment where it has none, so a requeued job's next start changes nothing. Control characters
// become '?' and each is cut to labelLen bytes. The caller treats an error as a note: the job
// runs the same without its label.
func Label(ctx context.Context, id, name, comment string) error {
	if !IsJobID(id) {
		return fmt.Errorf("%q is not a Slurm job id", id)
	}
	name, comment = labelText(name), labelText(comment)
	out, err := run(ctx, "scontrol", "show", "job", "-o", id)
	if err != nil {
		return fmt.Errorf("scontrol show job %s: %w", id, err)
	}
	j, err := ParseShowJob(out)
	if err != nil {
		return fmt.Errorf("scontrol show job %s: %w", id, err)
	}
	args := []string{"update", "JobId=" + id}
	if unnamed[j.Name] && name != "" {
		args = append(args, "Name="+name)
	}
	if j.Comment == "" && comment != "" {
		args = append(args, "Comment="+comment)
	}
	if len(args) == 2 {
		return nil
	}
	if _, err := run(ctx, "scontrol", args...); err != nil {
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
