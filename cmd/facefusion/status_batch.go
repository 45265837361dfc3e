package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/batch"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// The states of a batch's entries as status shows them, in the order it lists them.
const (
	entryDone        = "done"
	entryFailed      = "failed"
	entryQuarantined = "quarantined"
	entryPending     = "pending"
	entryRunning     = "running"
)

var entryStates = []string{entryDone, entryFailed, entryQuarantined, entryPending, entryRunning}

// batchLines is the most entries listed per state: a cron inbox's done records grow without
// end; the count says how many there are.
const batchLines = 50

// batchRow is one entry of a batch as status shows it.
type batchRow struct {
	target, output, state, detail string
}

// isBatchFolder says whether dir is a batch's state folder: one with no manifest, holding the
// done or failed folder batch-run makes.
func isBatchFolder(dir string) bool {
	if _, err := os.Lstat((&lustre.JobDir{Path: dir}).Manifest()); err == nil {
		return false
	}
	for _, sub := range []string{"done", "failed"} {
		if st, err := os.Lstat(filepath.Join(dir, sub)); err == nil && st.IsDir() {
			return true
		}
	}
	return false
}

// batchStatus prints a batch folder's entries by state, counts first: done (its records whose
// output is still there), failed and quarantined (its failure records, with the last one's
// why), running (a live claim in the entry's job folder) and pending (the rest of the entry
// list: cfg's patterns expanded when the job file was given, else the newest frozen list and
// summary). cfg is nil without a job file: max_failures is then the default.
func batchStatus(w io.Writer, d batch.Dir, cfg *job.Config) error {
	if st, err := os.Stat(d.Path); err != nil || !st.IsDir() {
		return fault.AsInput(fmt.Errorf("status: there is no batch folder %s: the batch has not run yet (batch-run makes it at its start)", d.Path))
	}
	maxFailures := job.Default().MaxFailures
	if cfg != nil {
		maxFailures = cfg.MaxFailures
	}
	rows := map[string]*batchRow{} // by output
	doneRows(d, rows)
	failedRows(d, rows, maxFailures)
	entries, from := batchEntries(d, cfg)
	for _, e := range entries {
		if e.Skip == "" && rows[e.Output] == nil {
			rows[e.Output] = &batchRow{target: e.Target, output: e.Output, state: entryPending}
		}
	}
	for _, r := range rows {
		if r.state != entryDone {
			if h, ok := liveClaim(entryJobDir(cfg, r.output)); ok {
				r.state, r.detail = entryRunning, h
			}
		}
	}
	byState := map[string][]*batchRow{}
	for _, r := range rows {
		byState[r.state] = append(byState[r.state], r)
	}
	var counts []string
	for _, s := range entryStates {
		counts = append(counts, fmt.Sprintf("%d %s", len(byState[s]), s))
	}
	fmt.Fprintf(w, "batch folder: %s\n", d.Path)
	fmt.Fprintf(w, "entries:    %s (max_failures %d)\n", strings.Join(counts, ", "), maxFailures)
	fmt.Fprintf(w, "list:       %s\n", from)
	printLastRun(w, d)
	for _, s := range entryStates {
		printRows(w, s, byState[s])
	}
	return nil
}

// printRows prints the rows of one state, by target, at most batchLines of them.
func printRows(w io.Writer, state string, rows []*batchRow) {
	sort.Slice(rows, func(a, b int) bool { return rows[a].target < rows[b].target })
	for i, r := range rows {
		if i == batchLines {
			fmt.Fprintf(w, "%-11s … and %d more\n", state, len(rows)-i)
			return
		}
		line := fmt.Sprintf("%-11s %s", state, safefs.Name(r.target, safefs.PathLen))
		if r.output != "" {
			line += " → " + safefs.Name(r.output, safefs.PathLen)
		}
		if r.detail != "" {
			line += " (" + r.detail + ")"
		}
		fmt.Fprintln(w, line)
	}
}

// doneRows adds a row per done record whose output is still in place (batch.Dir.Done: one
// removed or replaced is due again).
func doneRows(d batch.Dir, rows map[string]*batchRow) {
	for _, key := range recordKeys(filepath.Join(d.Path, "done"), ".json") {
		if rec, ok := d.Done(key); ok {
			rows[rec.Output] = &batchRow{target: rec.Target, output: rec.Output, state: entryDone, detail: "finished " + rec.Finished.Format(time.RFC3339)}
		}
	}
}

// failedRows adds a row per contents with failure records and no done output: quarantined at
// maxFailures failures that count (a usage failure does not), else failed, with its last
// failure's why.
func failedRows(d batch.Dir, rows map[string]*batchRow, maxFailures int) {
	for _, key := range recordKeys(filepath.Join(d.Path, "failed"), "") {
		all := d.Failures(key, false)
		if len(all) == 0 {
			continue
		}
		last := all[len(all)-1]
		if r := rows[last.Output]; r != nil && r.state == entryDone {
			continue // done since (a later run of it)
		}
		counting := len(d.Failures(key, true))
		state, detail := entryFailed, fmt.Sprintf("%d of %d allowed failures; a later run retries it", counting, maxFailures)
		switch {
		case counting >= maxFailures:
			state, detail = entryQuarantined, fmt.Sprintf("%d failures: not tried again; remove %s to retry it", counting, filepath.Join(d.Path, "failed", key))
		case !last.Counts():
			detail = "the settings' fault, not the file's: fix them; never quarantined"
		}
		detail += fmt.Sprintf("; last: exit %d at %s on %s: %s", last.ExitStatus, last.Time.Format(time.RFC3339), safefs.Name(last.Host, safefs.HostLen), safefs.Clip(last.Reason))
		rows[last.Output] = &batchRow{target: last.Target, output: last.Output, state: state, detail: detail}
	}
}

// recordKeys are the record keys in folder: its file names less ext, or its folders' names
// (ext ""). Names batch-run did not write (a hidden temp file, a stray) are left out.
func recordKeys(folder, ext string) []string {
	ents, _ := os.ReadDir(folder)
	var keys []string
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, "."):
		case ext == "" && e.IsDir():
			keys = append(keys, name)
		case ext != "" && !e.IsDir() && strings.HasSuffix(name, ext):
			keys = append(keys, strings.TrimSuffix(name, ext))
		}
	}
	return keys
}

// batchEntries is the batch's entry list and where it came from: cfg's patterns expanded
// now, else the newest frozen list's entries and the newest summary's.
func batchEntries(d batch.Dir, cfg *job.Config) ([]batch.Entry, string) {
	if cfg != nil {
		entries, err := batch.Expand(*cfg)
		if err != nil {
			return nil, "the job file's patterns do not expand: " + safefs.Clip(err.Error())
		}
		return entries, fmt.Sprintf("%d entries from the job file's patterns (target_pattern %s), as a run now would see them", len(entries), safefs.Name(cfg.TargetPattern, safefs.PathLen))
	}
	var entries []batch.Entry
	var from []string
	if path := newest(filepath.Join(d.Path, "lists", "*.json")); path != "" {
		var l struct {
			Entries []batch.Entry `json:"entries"`
		}
		if data, err := safefs.ReadOwnFile(path, safefs.ListLimit, "frozen list"); err == nil && json.Unmarshal(data, &l) == nil {
			entries = append(entries, l.Entries...)
			from = append(from, fmt.Sprintf("%d in frozen list %s", len(l.Entries), path))
		}
	}
	if s, path := lastSummary(d); s != nil {
		for _, r := range s.Entries {
			entries = append(entries, r.Entry)
		}
		from = append(from, fmt.Sprintf("%d in summary %s", len(s.Entries), path))
	}
	if len(from) == 0 {
		return nil, "none recorded here (no frozen list, no summary): give the batch's job file to count its pending entries"
	}
	return entries, strings.Join(from, "; ")
}

// lastSummary is the newest summary report in the batch folder (report*.json) and its path;
// nil if none can be read.
func lastSummary(d batch.Dir) (*batch.Summary, string) {
	path := newest(filepath.Join(d.Path, "report*.json"))
	if path == "" {
		return nil, ""
	}
	var s batch.Summary
	data, err := safefs.ReadOwnFile(path, safefs.ListLimit, "batch summary")
	if err != nil || json.Unmarshal(data, &s) != nil {
		return nil, ""
	}
	return &s, path
}

// printLastRun prints how the newest summary's run ended.
func printLastRun(w io.Writer, d batch.Dir) {
	s, path := lastSummary(d)
	if s == nil {
		return
	}
	line := fmt.Sprintf("last run:   %s (exit %d), finished %s on %s", safefs.Clip(s.Outcome), s.ExitStatus, s.Finished.Format(time.RFC3339), safefs.Name(s.Host, safefs.HostLen))
	if s.Slurm.JobID != "" {
		line += ", Slurm job " + safefs.Name(s.Slurm.JobID, safefs.HostLen)
	}
	fmt.Fprintf(w, "%s (%s)\n", line, path)
}

// newest is the most recently modified file matching pattern; "" if none.
func newest(pattern string) string {
	names, _ := filepath.Glob(pattern)
	var best string
	var at time.Time
	for _, n := range names {
		if st, err := os.Lstat(n); err == nil && st.Mode().IsRegular() && (best == "" || st.ModTime().After(at)) {
			best, at = n, st.ModTime()
		}
	}
	return best
}

// entryJobDir is the job folder of the entry writing output: as batch-run names it, inside
// job_dir when the job file gives one (the output's name and a short hash of its path), else
// beside the output.
func entryJobDir(cfg *job.Config, output string) string {
	if cfg == nil || cfg.JobDir == "" {
		return lustre.DefaultPath(output)
	}
	sum := sha256.Sum256([]byte(filepath.Clean(output)))
	return filepath.Join(cfg.JobDir, fmt.Sprintf("%s-%x.job", filepath.Base(output), sum[:4]))
}

// liveClaim describes the holder of the job folder's claim when it is alive.
func liveClaim(folder string) (string, bool) {
	jd := &lustre.JobDir{Path: folder}
	h, held, err := jd.ReadClaim()
	if err != nil || !held {
		return "", false
	}
	me := lustre.Me()
	if dead, _ := h.Dead(&me, time.Now()); dead {
		return "", false
	}
	return h.Describe() + "; job folder " + folder, true
}
