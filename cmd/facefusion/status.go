package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/batch"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
	"github.com/facefusion-hpc/facefusion/internal/slurm"
	"github.com/facefusion-hpc/facefusion/lustre"
)

const statusUsage = "usage: facefusion status JOB_DIR|OUTPUT|JOB.toml|SLURM_JOB_ID|BATCH_DIR (a job folder: --job-dir, or OUTPUT.job beside the output; an output; a job file as run --config or batch-run --config takes it; a Slurm job id, 1234 or 1234_5; a batch folder, .facefusion-batch beside the outputs)"

// cmdStatus is `facefusion status WHAT`: what a job has done and has left, from its manifest,
// the ranks' journals (chunks finished since rank 0's last merge) and the job's progress file
// (every rank's frames, written by rank 0); or a finished job's run report; or a batch's
// entries by state. It only reads, so it works while the job runs and after it stopped.
func cmdStatus(args []string, w io.Writer) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintln(os.Stderr, statusUsage)
		return nil
	}
	if len(args) != 1 {
		return fault.AsUsage(fmt.Errorf("status: give one job folder, output, job file, Slurm job id or batch folder; %s", statusUsage))
	}
	return statusOf(args[0], nil, w)
}

// statusOf prints the status of what arg names; sj is the Slurm job that named it, if one did
// (its relative paths start at the job's working folder).
func statusOf(arg string, sj *slurm.Job, w io.Writer) error {
	st, err := os.Stat(arg)
	switch {
	case err != nil && sj == nil && slurm.IsJobID(arg):
		return slurmStatus(arg, w)
	case err == nil && st.Mode().IsRegular() && strings.HasSuffix(arg, ".toml"):
		return configStatus(arg, sj, w)
	case err == nil && st.IsDir() && isBatchFolder(arg):
		return batchStatus(w, batch.Dir{Path: arg}, nil)
	}
	path, reportOf, err := statusTarget(arg)
	if err != nil {
		return err
	}
	if reportOf != "" {
		return reportStatus(reportOf, w)
	}
	return jobStatus(path, w)
}

// jobStatus prints a job folder's status.
func jobStatus(path string, w io.Writer) error {
	// Status only reads, each file bounded, never through a link, every number range-checked:
	// a colleague's job folder (or one others can write into) is shown as its files say.
	jd := &lustre.JobDir{Path: path}
	m, err := readJobState(jd)
	if err != nil {
		return err
	}
	at := m.Attempts[len(m.Attempts)-1]
	total := m.FrameEnd - m.FrameStart
	framesDone := m.DoneFrames()
	notRunning := printJobSummary(w, jd, m, at, total, framesDone)
	attemptFrames, inFlight := printRanks(w, jd, m, at)
	printRate(w, at, attemptFrames+inFlight, total-framesDone-inFlight, notRunning)
	if pending := pendingChunks(m); len(pending) > 0 {
		fmt.Fprintf(w, "pending:    %s\n", pending)
	}
	return nil
}

// statusTarget resolves what `status PATH` shows: a job folder (path), or the run report
// beside an output (reportOf, when it is the better record).
func statusTarget(path string) (folder, reportOf string, err error) {
	st, err := os.Stat(path)
	if err == nil && !st.IsDir() {
		// An output: a job writing it now (in the default job folder) comes first; otherwise
		// its run report says how the job that wrote it went.
		def := lustre.DefaultPath(path)
		if _, ok, _ := (&lustre.JobDir{Path: def}).ReadManifest(); ok {
			return def, "", nil
		}
		return "", path, nil
	}
	if err != nil {
		// An output a failed run never wrote: its report says how the run went.
		if _, ok, _ := report.Read(path); ok {
			return "", path, nil
		}
		// A finished job's folder is removed; its record is the report beside the output.
		if out := strings.TrimSuffix(filepath.Clean(path), ".job"); out != filepath.Clean(path) {
			if _, ok, _ := report.Read(out); ok {
				return "", out, nil
			}
		}
		return "", "", fault.AsInput(fmt.Errorf("status: there is no folder %s: the job has not started, or it finished and its folder was removed (then `facefusion status OUTPUT` reads the run report beside the output)", path))
	}
	return path, "", nil
}

// readJobState reads a job folder's manifest with the journals of its running attempt merged
// in; a manifest with no attempt is an error, so the result has at least one.
func readJobState(jd *lustre.JobDir) (*lustre.Manifest, error) {
	m, ok, err := jd.ReadManifest()
	if err != nil {
		return nil, fault.AsInput(err)
	}
	if !ok {
		return nil, notJobFolder(jd)
	}
	if len(m.Attempts) == 0 {
		return nil, fault.AsInput(fmt.Errorf("status: manifest %s records no attempt: not a job folder facefusion run started", jd.Manifest()))
	}
	// Chunks finished since the last merge are in the journals of the running attempt: each
	// record is checked against the job before it counts.
	journal, err := jd.Journals()
	if err != nil {
		return nil, fault.AsInput(err)
	}
	for _, c := range journal {
		if err := m.CheckRecord(c, jd.Journal(c.Rank)); err != nil {
			return nil, fault.AsInput(err)
		}
	}
	m.Merge(journal)
	return m, nil
}

// notJobFolder is the error for a folder with no manifest, naming the job folders inside it
// when there are some.
func notJobFolder(jd *lustre.JobDir) error {
	// A folder of the user's given as --job-dir holds the job in a subfolder of its own; an
	// output folder of a batch, the batch's folder.
	var inside []string
	if ents, err := os.ReadDir(jd.Path); err == nil {
		for _, e := range ents {
			if sub := (&lustre.JobDir{Path: filepath.Join(jd.Path, e.Name())}); e.IsDir() && (sub.Owned() || isBatchFolder(sub.Path)) {
				inside = append(inside, sub.Path)
			}
		}
	}
	if len(inside) > 0 {
		return fault.AsInput(fmt.Errorf("status: %s is not a job folder; it holds %s: give one of those", jd.Path, strings.Join(inside, ", ")))
	}
	return fault.AsInput(fmt.Errorf("status: %s has no manifest.json: not a job folder, or the job has not started yet", jd.Path))
}

// printJobSummary prints the job-wide lines: folder, owner, target, state, attempts, and the
// chunks and frames done and pending. notRunning is why the latest attempt is not running ("" if
// it is).
func printJobSummary(w io.Writer, jd *lustre.JobDir, m *lustre.Manifest, at lustre.Attempt, total, framesDone int) (notRunning string) {
	fmt.Fprintf(w, "job folder: %s\n", jd.Path)
	if st, err := os.Stat(jd.Path); err == nil {
		if !safefs.Mine(st) {
			fmt.Fprintf(w, "owner:      %s, not you: shown as its files say; only its owner can resume the job\n", safefs.UserName(safefs.Owner(st)))
		}
	}
	fmt.Fprintf(w, "target:     %s, frames [%d,%d), %d chunk(s) of %d\n", safefs.Name(m.Target, safefs.PathLen), m.FrameStart, m.FrameEnd, m.NumChunks, m.ChunkFrames)
	state, notRunning := attemptState(jd, at)
	fmt.Fprintf(w, "state:      %s\n", state)
	fmt.Fprintf(w, "attempts:   %d (latest started %s on %d rank(s)", len(m.Attempts), at.Started.Format(time.RFC3339), at.Ranks)
	if at.SlurmJob != "" {
		fmt.Fprintf(w, ", Slurm job %s restart %d", safefs.Name(at.SlurmJob, safefs.HostLen), at.RestartCount)
	}
	fmt.Fprintln(w, ")")
	fmt.Fprintf(w, "chunks:     %d done, %d pending, of %d\n", len(m.Done), m.NumChunks-len(m.Done), m.NumChunks)
	fmt.Fprintf(w, "frames:     %d done, %d pending, of %d\n", framesDone, total-framesDone, total)
	return notRunning
}

// attemptState says how the latest attempt stands, with the reason it stopped if it did, and
// in a word or two why it is not running ("" when its claim is live, "unknown" when the claim
// cannot be read).
func attemptState(jd *lustre.JobDir, at lustre.Attempt) (state, notRunning string) {
	state = safefs.Name(at.Outcome, safefs.ExcerptLen)
	notRunning = state
	if at.Outcome == lustre.Running {
		// The manifest of a killed attempt reads "running" too: the claim tells them apart,
		// as the next run's takeover does.
		me := lustre.Me()
		switch h, held, err := jd.ReadClaim(); {
		case err != nil:
			state = fmt.Sprintf("running? (manifest updated %s ago; the claim cannot be read: %v)", time.Since(at.Updated).Round(time.Second), err)
			notRunning = "unknown: the claim cannot be read"
		case !held:
			state = fmt.Sprintf("not running: the attempt ended without recording how (killed?; manifest updated %s ago): rerun the same command to resume", time.Since(at.Updated).Round(time.Second))
			notRunning = "no claim: killed?"
		default:
			if dead, why := h.Dead(&me, time.Now()); dead {
				state = fmt.Sprintf("not running: killed (%s; manifest updated %s ago): rerun the same command to resume", why, time.Since(at.Updated).Round(time.Second))
				notRunning = "killed"
			} else {
				state = fmt.Sprintf("running (%s; manifest updated %s ago)", h.Describe(), time.Since(at.Updated).Round(time.Second))
				notRunning = ""
			}
		}
	}
	if at.Stop != "" {
		state += " (" + safefs.Clip(at.Stop) + ")"
	}
	return state, notRunning
}

// rankState is one rank's work in the latest attempt: finished chunks and their frames, and
// the frames it has encoded in all (the progress file's count).
type rankState struct{ chunks, frames, encoded int }

// printRanks prints a line per rank for the latest attempt and returns the frames of its
// finished chunks and those of chunks still in flight.
func printRanks(w io.Writer, jd *lustre.JobDir, m *lustre.Manifest, at lustre.Attempt) (attemptFrames, inFlight int) {
	// Per rank, this attempt: finished chunks, and frames of the chunk in flight (the progress
	// file counts every encoded frame, journals only finished chunks).
	ranks := map[int]*rankState{}
	for _, c := range m.Done {
		if c.Attempt != len(m.Attempts) {
			continue
		}
		r := ranks[c.Rank]
		if r == nil {
			r = &rankState{}
			ranks[c.Rank] = r
		}
		r.chunks++
		r.frames += c.Frames
		attemptFrames += c.Frames
	}
	progress, _, _ := jd.ReadProgress() // none yet, or unreadable: no frames in flight to show
	for i, n64 := range progress {
		if i >= at.Ranks {
			break
		}
		n := int(n64)
		if ranks[i] == nil {
			ranks[i] = &rankState{}
		}
		ranks[i].encoded = n
		if at.Outcome == lustre.Running && n > ranks[i].frames {
			inFlight += n - ranks[i].frames
		}
	}
	ids := make([]int, 0, len(ranks))
	for r := range ranks {
		ids = append(ids, r)
	}
	sort.Ints(ids)
	for _, r := range ids {
		s := ranks[r]
		fmt.Fprintf(w, "rank %-5d  %d chunk(s), %d frames done this attempt", r, s.chunks, s.frames)
		if at.Outcome == lustre.Running && s.encoded > s.frames {
			fmt.Fprintf(w, "; %d frames of a chunk in flight", s.encoded-s.frames)
		}
		fmt.Fprintln(w)
	}
	return attemptFrames, inFlight
}

// printRate prints the latest attempt's frame rate and, with frames left, the time to finish
// at that rate: only while it runs (notRunning ""), since a stopped job finishes when someone
// reruns it, not at any rate.
func printRate(w io.Writer, at lustre.Attempt, frames, left int, notRunning string) {
	end := time.Now()
	if at.Outcome != lustre.Running || notRunning != "" { // the rate it had when it stopped
		end = at.Updated
	}
	if secs := end.Sub(at.Started).Seconds(); secs > 0 && frames > 0 {
		rate := float64(frames) / secs
		fmt.Fprintf(w, "rate:       %.1f frames/s this attempt\n", rate)
		switch {
		case left > 0 && notRunning != "":
			fmt.Fprintf(w, "eta:        - (not running: %s)\n", notRunning)
		case left > 0:
			if eta := float64(left) / rate; eta < lustre.MaxSeconds {
				fmt.Fprintf(w, "eta:        %s at that rate\n", time.Duration(eta*float64(time.Second)).Round(time.Second))
			} else {
				fmt.Fprintf(w, "eta:        more than %g s at that rate\n", float64(lustre.MaxSeconds))
			}
		}
	}
}

// reportStatus prints a finished job's record from the run report beside its output.
func reportStatus(output string, w io.Writer) error {
	r, ok, err := report.Read(output)
	if err != nil {
		return fault.AsInput(err)
	}
	if !ok {
		return fault.AsInput(fmt.Errorf("status: %s has no run report (%s): it was not written by facefusion run, or the job has not finished; give the job folder instead", output, report.Path(output)))
	}
	fmt.Fprintf(w, "output:     %s\n", safefs.Name(r.Output, safefs.PathLen))
	fmt.Fprintf(w, "target:     %s, frames [%d,%d), %d chunk(s)\n", safefs.Name(r.Target, safefs.PathLen), r.FrameStart, r.FrameEnd, r.Chunks)
	folder := "removed"
	if _, err := os.Stat(r.JobDir); err == nil {
		folder = "kept"
	}
	if r.JobDir == "" { // a run refused before it had one, or an image
		fmt.Fprintf(w, "state:      %s (finished %s)\n", safefs.Name(r.Outcome, safefs.ExcerptLen), r.Finished.Format(time.RFC3339))
	} else {
		fmt.Fprintf(w, "state:      %s (finished %s; job folder %s %s)\n", safefs.Name(r.Outcome, safefs.ExcerptLen), r.Finished.Format(time.RFC3339), safefs.Name(r.JobDir, safefs.PathLen), folder)
	}
	if r.Version >= 2 && r.Outcome != lustre.Complete { // version 1 recorded finished jobs only
		fmt.Fprintf(w, "exit:       %d: %s\n", r.ExitStatus, safefs.Clip(r.Error))
	}
	fmt.Fprintf(w, "attempts:   %d, %.1f s in all, %.1f s the last\n", len(r.Attempts), r.Seconds, r.LastSeconds)
	if r.Outcome == lustre.Complete {
		fmt.Fprintf(w, "frames:     %d done, 0 pending, of %d\n", r.FrameEnd-r.FrameStart, r.FrameEnd-r.FrameStart)
	}
	if r.OutputBlocksSHA256 != "" { // check: split -b BLOCK --filter=sha256sum OUTPUT | sha256sum
		fmt.Fprintf(w, "hash:       %s (%d bytes; sha256 of %d-byte blocks' sha256sum lines)\n", safefs.Name(r.OutputBlocksSHA256, safefs.HostLen), r.OutputBytes, r.OutputHashBlock)
	}
	if r.OutputSHA256 != "" { // a version 2 report's
		fmt.Fprintf(w, "sha256:     %s (%d bytes)\n", safefs.Name(r.OutputSHA256, safefs.HostLen), r.OutputBytes)
	}
	return nil
}

// pendingChunks lists the chunks not done as compact ranges: "3 5-9 12". It walks the records
// (checked: in range, one a chunk), not the chunks, so that its time and memory grow with the
// manifest's size, not with the chunk count it states.
func pendingChunks(m *lustre.Manifest) string {
	done := make([]int, 0, len(m.Done))
	for _, c := range m.Done {
		done = append(done, c.Chunk)
	}
	sort.Ints(done)
	var parts []string
	gap := func(from, to int) { // chunks [from, to) pending
		switch {
		case to-from == 1:
			parts = append(parts, strconv.Itoa(from))
		case to-from > 1:
			parts = append(parts, fmt.Sprintf("%d-%d", from, to-1))
		}
	}
	next := 0
	for _, c := range done {
		if c >= next {
			gap(next, c)
			next = c + 1
		}
	}
	gap(next, m.NumChunks)
	return strings.Join(parts, " ")
}
