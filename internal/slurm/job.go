package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Job is one Slurm job as scontrol (while Slurm still holds it) or sacct (from the accounting
// database, after) describes it; a field Slurm did not give is "".
type Job struct {
	ID       string
	Name     string
	State    string // PENDING, RUNNING, COMPLETED, CANCELLED, …: the first word of Slurm's
	Reason   string // why it waits (scontrol only)
	ExitCode string // "0:0": the exit status and the signal
	WorkDir  string // where it was submitted from: the job's relative paths start there
	StdOut   string
	Comment  string // the job's comment (scontrol only): "(null)" where it has none
	// Command is the batch script and its arguments (scontrol's Command), or the whole submit
	// line (sacct's SubmitLine), as one string: Slurm joins the words with spaces and keeps no
	// quoting, so a word with a space in it cannot be told from two.
	Command string
	// From is the tool that described the job: "scontrol" or "sacct".
	From string
}

// ErrNoTools is Query's error where neither scontrol nor sacct is on PATH.
var ErrNoTools = errors.New("neither scontrol nor sacct is on PATH")

// jobIDPattern is a job id as scontrol and sacct take one: a job's number, or an array
// task's ARRAYJOB_TASK.
var jobIDPattern = regexp.MustCompile(`^[0-9]{1,12}(_[0-9]{1,9})?$`)

// IsJobID says whether s is written as a Slurm job id (1234, or 1234_5 for an array task).
func IsJobID(s string) bool { return jobIDPattern.MatchString(s) }

// Query asks Slurm about job id: scontrol first (it knows pending and running jobs and, for
// MinJobAge, finished ones), then sacct. Each command gets ten seconds.
func Query(ctx context.Context, id string) (Job, error) {
	if !IsJobID(id) {
		return Job{}, fmt.Errorf("%q is not a Slurm job id (1234, or 1234_5 for an array task)", id)
	}
	var tried []string
	if _, err := exec.LookPath("scontrol"); err == nil {
		out, err := run(ctx, "scontrol", "show", "job", "-o", id)
		if err == nil {
			return ParseShowJob(out)
		}
		tried = append(tried, "scontrol: "+err.Error())
	}
	if _, err := exec.LookPath("sacct"); err == nil {
		out, err := run(ctx, "sacct", "-X", "-j", id, "--parsable2", "--noheader", "--format="+sacctFields)
		if err == nil {
			return ParseSacct(out, id)
		}
		tried = append(tried, "sacct: "+err.Error())
	}
	if len(tried) == 0 {
		return Job{}, ErrNoTools
	}
	return Job{}, fmt.Errorf("no answer from Slurm about job %s (%s)", id, strings.Join(tried, "; "))
}

// run runs a Slurm client command and returns its output; its error carries the command's
// first line of complaint.
func run(ctx context.Context, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		if msg = strings.TrimPrefix(msg, name+": "); msg == "" {
			msg = err.Error()
		}
		return nil, errors.New(msg)
	}
	return out, nil
}

// fieldStart is a word of `scontrol show job -o` that begins a field: Key=… (keys such as
// AllocNode:Sid and CPUs/Task included).
var fieldStart = regexp.MustCompile(`^[A-Z][A-Za-z0-9:/_]*=`)

// ParseShowJob reads `scontrol show job -o ID`: one line of Key=Value fields joined by spaces,
// where a value may hold spaces (Command's arguments): a word that does not start a field
// belongs to the one before. An array job's line per task: the first.
func ParseShowJob(out []byte) (Job, error) {
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	fields := map[string]string{}
	var key string
	for _, word := range strings.Split(line, " ") {
		if fieldStart.MatchString(word) {
			k, v, _ := strings.Cut(word, "=")
			key, fields[k] = k, v
			continue
		}
		if key != "" {
			fields[key] += " " + word
		}
	}
	if fields["JobId"] == "" {
		return Job{}, fmt.Errorf("scontrol printed no JobId: %q", clip(line))
	}
	j := Job{ID: fields["JobId"], Name: fields["JobName"], State: firstWord(fields["JobState"]), Reason: fields["Reason"],
		ExitCode: fields["ExitCode"], WorkDir: fields["WorkDir"], StdOut: fields["StdOut"], Comment: strings.TrimSpace(fields["Comment"]), Command: strings.TrimSpace(fields["Command"]), From: "scontrol"}
	if a, t := fields["ArrayJobId"], fields["ArrayTaskId"]; a != "" && t != "" && !strings.ContainsAny(t, "-,%") {
		j.ID = a + "_" + t // the name the user gave, not the task's own number
	}
	return j, nil
}

// sacctFields are the columns Query asks sacct for, in ParseSacct's order.
const sacctFields = "JobID,JobName,State,ExitCode,WorkDir,SubmitLine"

// ParseSacct reads `sacct -X -j ID --parsable2 --noheader --format=sacctFields`: one line per
// allocation, fields split by '|' (the submit line last, so a '|' in it stays its own). The
// line of job id is the answer; with none, the first.
func ParseSacct(out []byte, id string) (Job, error) {
	var first *Job
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "|", 6)
		if len(f) < 5 {
			continue
		}
		j := Job{ID: f[0], Name: f[1], State: firstWord(f[2]), ExitCode: f[3], WorkDir: f[4], From: "sacct"}
		if len(f) == 6 {
			j.Command = strings.TrimSpace(f[5])
		}
		if j.ID == id {
			return j, nil
		}
		if first == nil {
			first = &j
		}
	}
	if first == nil {
		return Job{}, fmt.Errorf("sacct knows no job %s", id)
	}
	return *first, nil
}

// firstWord is a state without what follows it ("CANCELLED by 0" is CANCELLED).
func firstWord(s string) string {
	w, _, _ := strings.Cut(strings.TrimSpace(s), " ")
	return w
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// Running says whether the job may be running now (or about to: pending, requeued, …): any
// state but those a job ends in.
func (j Job) Running() bool {
	switch j.State {
	case "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY":
		return false
	}
	return true
}

// Path is p as the job sees it: relative to its WorkDir unless absolute.
func (j Job) Path(p string) string {
	if p == "" || filepath.IsAbs(p) || j.WorkDir == "" {
		return p
	}
	return filepath.Join(j.WorkDir, p)
}

// JobFile is the TOML job file the job was given (facefusion.sbatch's one argument, or a
// --config), found relative to WorkDir; exists says whether a path is a file there, and picks
// among the readings of a command line whose words may hold spaces. "" when the command names
// none.
func (j Job) JobFile(exists func(string) bool) string {
	if v := j.flag("--config"); v != "" {
		return j.Path(v)
	}
	cmd := j.Command
	if !strings.HasSuffix(cmd, ".toml") {
		return ""
	}
	// The longest ending of the command, starting after a space, that names a file: Slurm's
	// Command lost the quoting of a path with spaces. Without one, the last word.
	last := j.Path(cmd)
	for i := 0; i < len(cmd); i++ {
		if cmd[i] != ' ' {
			continue
		}
		last = j.Path(cmd[i+1:])
		if exists(last) {
			return last
		}
	}
	return last
}

// Output is the output a `facefusion run` command line names (-o, --output-path), relative to
// WorkDir; "" when it names none.
func (j Job) Output() string {
	if v := j.flag("-o"); v != "" {
		return j.Path(v)
	}
	return j.Path(j.flag("--output-path"))
}

// flag is the value of a flag in the command's words ("--config FILE" or "--config=FILE").
func (j Job) flag(name string) string {
	words := strings.Fields(j.Command)
	for i, w := range words {
		if w == name && i+1 < len(words) {
			return words[i+1]
		}
		if v, ok := strings.CutPrefix(w, name+"="); ok {
			return v
		}
	}
	return ""
}
