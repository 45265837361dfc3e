package batch

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
	"github.com/facefusion-hpc/facefusion/internal/slurm"
	"github.com/facefusion-hpc/facefusion/internal/spec"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// Dir is the batch's state folder. Its layout is stated here once:
//
//	lists/array-ID.json      a frozen entry list, shared by the tasks (and restarts) of one job array
//	claims/array-ID/         which task runs, and which finished, each entry of that list (Claims)
//	done/KEY.json            a target's contents done with these settings: where the output went
//	failed/KEY/attempt-N.json one record per failed run of those contents (quarantined at its
//	                         first bad-input failure, or at max_failures)
//	report.json              the last run's summary (report-JOB.json in a Slurm job, report-JOB_TASK.json in an array task)
//
// Every file is written whole under a temp name and linked or renamed into place: each failure
// is its own file (made with O_EXCL semantics that hold on Lustre and NFS), a list is linked
// into place by the first task, and a done record, which two runs of one contents could both
// write, is replaced whole (either one is right).
// The program deletes nothing here but its own claims once released; deleting a failure folder
// retries its target.
type Dir struct{ Path string }

// DirFor is cfg's state folder: batch_dir, else .facefusion-batch in output_pattern's folder
// (the part before the first placeholder).
func DirFor(cfg job.Config) Dir {
	if cfg.BatchDir != "" {
		return Dir{cfg.BatchDir}
	}
	fixed, _, _ := strings.Cut(cfg.OutputPattern, "{")
	base := filepath.Dir(fixed)
	if strings.HasSuffix(fixed, string(filepath.Separator)) {
		base = filepath.Clean(fixed)
	}
	return Dir{filepath.Join(base, ".facefusion-batch")}
}

func (d Dir) list(id string) string      { return filepath.Join(d.Path, "lists", id+".json") }
func (d Dir) done(key string) string     { return filepath.Join(d.Path, "done", key+".json") }
func (d Dir) failures(key string) string { return filepath.Join(d.Path, "failed", key) }

// Report is where a run's summary goes: report-JOB_TASK.json for a task of a Slurm array (each
// task summarises the entries it took), report-JOB.json in any other Slurm job (two jobs over one inbox
// keep one each), report.json outside Slurm (the last run's).
func (d Dir) Report(s slurm.Env) string {
	switch {
	case s.ArrayJobID != "":
		return filepath.Join(d.Path, "report-"+s.ArrayJobID+"_"+s.ArrayTaskID+".json")
	case s.JobID != "":
		return filepath.Join(d.Path, "report-"+s.JobID+".json")
	}
	return filepath.Join(d.Path, "report.json")
}

// batchFix is what to do about a batch folder the program refuses.
const batchFix = "choose another batch_dir (--batch-dir), a folder of your own that only you can write into"

// Make creates the folder and its subfolders (safefs.FolderMode), or checks those that exist:
// the folder must be the running user's, writable by no one else (the group only with
// FACEFUSION_GROUP_WRITABLE=1), and its subfolders folders of the same kind, not links: its
// records decide which targets are skipped as done or quarantined, and its list which files a
// job array processes.
func (d Dir) Make() error {
	if err := safefs.ForeignLink(d.Path); err != nil {
		return fmt.Errorf("batch folder %w: %s", err, batchFix)
	}
	if err := os.MkdirAll(d.Path, safefs.FolderMode()); err != nil {
		return fmt.Errorf("batch folder %s: %v: choose another batch_dir (--batch-dir)", d.Path, err)
	}
	if err := safefs.CheckFolder(d.Path, "batch folder", batchFix); err != nil {
		return err
	}
	for _, sub := range []string{"lists", "claims", "done", "failed"} {
		if err := d.makeSub(filepath.Join(d.Path, sub)); err != nil {
			return err
		}
	}
	return nil
}

// makeSub makes the folder p inside the batch folder, or checks the one there: a folder of
// the running user's, never a link.
func (d Dir) makeSub(p string) error {
	if err := os.Mkdir(p, safefs.FolderMode()); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("batch folder %s: %v: choose another batch_dir (--batch-dir)", d.Path, err)
	}
	st, err := os.Lstat(p)
	if err != nil {
		return fmt.Errorf("batch folder %s: %v", d.Path, err)
	}
	if !st.IsDir() {
		return &safefs.FolderError{Path: p, What: "batch folder's", Reason: "is " + safefs.KindOf(st.Mode()) + ", not the folder facefusion made", Fix: batchFix}
	}
	return safefs.CheckFolder(p, "batch folder's", batchFix)
}

// Key identifies an entry's work by content: the job's settings (every key that can change a
// pixel, job.Config.Settings, and the output's container, audio and image settings) and the
// contents of its target and sources (lustre.Identity: a file up to 64 MiB by its whole
// SHA-256, a larger one by its size and 16 evenly spaced 1 MiB samples, so a cron run over an
// inbox of multi-GB videos reads 16 MiB of each, not the file).
// A re-delivered copy of a file, under any name, has the same key.
func Key(cfg job.Config, e Entry) (string, error) {
	h := sha256.New()
	writeSettings(h, cfg)
	// What the output's file is besides its frames (not in Settings, since a resume may change
	// them): its container, its audio, an image's quality and scale.
	fmt.Fprintf(h, "container=%s\naudio=%+v\nimage=%d %g\n", strings.ToLower(filepath.Ext(e.Output)), spec.AudioOptions(cfg), cfg.OutputImageQuality, cfg.OutputImageScale)
	for _, p := range append([]string{e.Target}, e.Sources...) {
		id, err := lustre.Identity(p)
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", p, err)
		}
		fmt.Fprintf(h, "file=%s\n", id)
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:32], nil
}

// writeSettings writes cfg's settings (job.Config.Settings) to w, one "key=value" line each in
// key order.
func writeSettings(w io.Writer, cfg job.Config) {
	settings := cfg.Settings()
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s=%s\n", k, settings[k])
	}
}

// UnreadableKey is the key of an entry whose target or sources cannot be read (permissions): its
// settings and paths, marked as such, so that its failures still count towards quarantine.
func UnreadableKey(cfg job.Config, e Entry) string {
	h := sha256.New()
	fmt.Fprintf(h, "unreadable\n")
	writeSettings(h, cfg)
	for _, p := range append([]string{e.Target}, e.Sources...) {
		abs, _ := filepath.Abs(p)
		fmt.Fprintf(h, "path=%s\n", abs)
	}
	return "unreadable-" + fmt.Sprintf("%x", h.Sum(nil))[:21]
}

// DoneRecord is a target's contents done: where its output went.
type DoneRecord struct {
	Key        string    `json:"key"`
	Target     string    `json:"target"`
	Sources    []string  `json:"sources,omitempty"`
	Output     string    `json:"output"`
	OutputSize int64     `json:"output_size"`
	Finished   time.Time `json:"finished"`
}

// Done is the done record of key whose output is still in place (same size); ok is false when
// there is none or its output was removed or replaced (then the work is due again).
func (d Dir) Done(key string) (DoneRecord, bool) {
	var r DoneRecord
	data, err := safefs.ReadOwnFile(d.done(key), safefs.RecordLimit, "done record")
	if err != nil || json.Unmarshal(data, &r) != nil || r.OutputSize < 0 {
		return r, false
	}
	st, err := os.Stat(r.Output)
	return r, err == nil && st.Size() == r.OutputSize
}

// MarkDone records e's output as the work of key. A record already there (another run of the
// same contents, or an output removed and made again) is replaced.
func (d Dir) MarkDone(key string, e Entry) error {
	st, err := os.Stat(e.Output)
	if err != nil {
		return err
	}
	data, _ := json.MarshalIndent(DoneRecord{Key: key, Target: e.Target, Sources: e.Sources, Output: e.Output, OutputSize: st.Size(), Finished: time.Now().UTC()}, "", "  ")
	return lustre.WriteAtomic(d.done(key), append(data, '\n'))
}

// Failure is one failed run of an entry's contents.
type Failure struct {
	Target     string   `json:"target"`
	Sources    []string `json:"sources,omitempty"`
	Output     string   `json:"output"`
	ExitStatus int      `json:"exit_status"`
	Reason     string   `json:"reason"`
	// BadInput is a failure of the file itself (its run failed as bad input, exit 3: a corrupt
	// or truncated target, a source without a face): a retry of the same contents would fail
	// the same way, so it quarantines them at once.
	BadInput bool      `json:"bad_input,omitempty"`
	Time     time.Time `json:"time"`
	Host     string    `json:"host"`
	SlurmJob string    `json:"slurm_job,omitempty"`
}

// Counts says whether a failure counts towards quarantine. A usage failure (exit 2: an output
// pattern or format ffmpeg cannot write, an output that exists from another job, a bad setting)
// is the settings' fault, not the file's: it is found before the first frame, costs nothing,
// and once the settings are fixed the target must not be found quarantined.
func (f Failure) Counts() bool { return f.ExitStatus != fault.ExitUsage }

// Quarantined is why key's contents are not tried again, "" when they are: a bad-input failure
// (Failure.BadInput), or max failures that count (Failure.Counts).
func (d Dir) Quarantined(key string, max int) (why string, failures int) {
	fails := d.Failures(key, true)
	retry := "fix or replace the file (new contents are a new target), or remove " + d.failures(key) + " to retry it"
	for _, f := range fails {
		if f.BadInput {
			return fmt.Sprintf("quarantined at its first failure, as bad input (exit %d, %s): a retry would fail the same way, so it is not tried again: %s", f.ExitStatus, f.Reason, retry), len(fails)
		}
	}
	if len(fails) >= max && len(fails) > 0 {
		last := fails[len(fails)-1]
		return fmt.Sprintf("quarantined after %d failed runs (last: exit %d, %s); it is not tried again: %s", len(fails), last.ExitStatus, last.Reason, retry), len(fails)
	}
	return "", len(fails)
}

// Failures are key's failed runs, oldest first; counting only those that count towards
// quarantine (Failure.Counts).
func (d Dir) Failures(key string, counting bool) []Failure {
	names, _ := filepath.Glob(filepath.Join(d.failures(key), "attempt-*.json"))
	sort.Slice(names, func(a, b int) bool { return attemptNumber(names[a]) < attemptNumber(names[b]) })
	var out []Failure
	for _, n := range names {
		var f Failure
		if data, err := safefs.ReadOwnFile(n, safefs.RecordLimit, "failure record"); err == nil && json.Unmarshal(data, &f) == nil && (!counting || f.Counts()) {
			out = append(out, f)
		}
	}
	return out
}

func attemptNumber(path string) int {
	n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "attempt-"), ".json"))
	return n
}

// AddFailure records a failed run of key as its own file, numbered after the last; two runs
// recording at once get two numbers. It returns the new record's number.
func (d Dir) AddFailure(key string, f Failure) (int, error) {
	if key == "" {
		return 0, errors.New("a failure without a key")
	}
	dir := d.failures(key)
	for _, p := range []string{filepath.Dir(dir), dir} {
		if err := d.makeSub(p); err != nil {
			return 0, err
		}
	}
	data, _ := json.MarshalIndent(f, "", "  ")
	for n := len(d.Failures(key, false)) + 1; ; n++ {
		err := lustre.WriteNew(filepath.Join(dir, fmt.Sprintf("attempt-%d.json", n)), append(data, '\n'))
		if err == nil {
			return n, nil
		}
		if !errors.Is(err, os.ErrExist) || n > 10000 {
			return 0, err
		}
	}
}

// frozenList is a list file: the entries as the first task expanded them.
type frozenList struct {
	Created time.Time `json:"created"`
	Host    string    `json:"host"`
	Target  string    `json:"target_pattern"`
	Source  string    `json:"source_pattern,omitempty"`
	Output  string    `json:"output_pattern"`
	Entries []Entry   `json:"entries"`
}

// Frozen is the entry list of the Slurm job id: the one a task of it froze first (every task of
// an array, and every restart, works on that one list; a file arriving meanwhile waits for the
// next run), or expand's, frozen now. path is the list file.
func (d Dir) Frozen(id string, cfg job.Config, expand func() ([]Entry, error)) (entries []Entry, path string, err error) {
	path = d.list(id)
	read := func() ([]Entry, error) { return readFrozen(path, cfg, id) }
	if entries, err = read(); err == nil || !errors.Is(err, os.ErrNotExist) {
		return entries, path, err
	}
	if entries, err = expand(); err != nil {
		return nil, path, err
	}
	host, _ := os.Hostname()
	data, _ := json.MarshalIndent(frozenList{Created: time.Now().UTC(), Host: host, Target: cfg.TargetPattern, Source: cfg.SourcePattern, Output: cfg.OutputPattern, Entries: entries}, "", "  ")
	if err = lustre.WriteNew(path, append(data, '\n')); errors.Is(err, os.ErrExist) {
		entries, err = read() // another task froze it first: its list is the batch's
	}
	return entries, path, err
}

// readFrozen reads the frozen list at path of the Slurm job id, made for cfg's patterns.
func readFrozen(path string, cfg job.Config, id string) ([]Entry, error) {
	var l frozenList
	data, err := safefs.ReadOwnFile(path, safefs.ListLimit, "frozen list")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("frozen list %s: %s", path, safefs.Clip(err.Error()))
	}
	if l.Target != cfg.TargetPattern || l.Source != cfg.SourcePattern || l.Output != cfg.OutputPattern {
		return nil, fmt.Errorf("frozen list %s was made for other patterns (target %s, output %s): Slurm job %s runs one batch", path, safefs.Excerpt(l.Target), safefs.Excerpt(l.Output), id)
	}
	return l.Entries, nil
}
