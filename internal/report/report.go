// Package report is the run report: the record of a run, whatever its outcome, that rank 0
// writes at the end (default: beside the output). It outlives the job folder (removed after
// success), so `facefusion status` can still say what the job was and how it went; `plan
// --costs`, the metrics file and the scaling study read it too.
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// Version is the report layout this program writes. Versions 1 (a finished job only, up
// to "fingerprint") and 2 (the output's sha256 of the whole file, output_sha256) are read as
// well: every field they had keeps its name.
const Version = 3

// Report is a run's record.
type Report struct {
	Version     int               `json:"version"`
	Outcome     string            `json:"outcome"`     // complete, failed, checkpointed
	ExitStatus  int               `json:"exit_status"` // the code the process exits with (fault's table)
	Error       string            `json:"error,omitempty"`
	Output      string            `json:"output"`
	Target      string            `json:"target"`
	Sources     []string          `json:"sources,omitempty"`
	JobDir      string            `json:"job_dir,omitempty"`
	FrameStart  int               `json:"frame_start"`
	FrameEnd    int               `json:"frame_end"`
	Chunks      int               `json:"chunks"`
	Attempts    []lustre.Attempt  `json:"attempts"`
	Seconds     float64           `json:"seconds"`         // wall time of every attempt, added up
	LastSeconds float64           `json:"attempt_seconds"` // the last attempt's
	Finished    time.Time         `json:"finished"`
	Fingerprint map[string]string `json:"fingerprint,omitempty"`

	Slurm   *SlurmIDs `json:"slurm,omitempty"` // absent outside Slurm
	Ranks   int       `json:"ranks,omitempty"`
	Hosts   []string  `json:"hosts,omitempty"`
	PerRank []Rank    `json:"per_rank,omitempty"` // this attempt's work, by rank
	Totals  *Rank     `json:"totals,omitempty"`   // the ranks added up (frames per second: over the attempt's wall time)

	OutputBytes int64 `json:"output_bytes,omitempty"`
	// OutputBlocksSHA256 is the output's block hash (lustre.HashBlocks: each block's SHA-256, hashed
	// again), its block OutputHashBlock bytes: every rank hashes a share of the blocks.
	OutputBlocksSHA256 string `json:"output_sha256_blocks,omitempty"`
	OutputHashBlock    int64  `json:"output_hash_block_bytes,omitempty"`
	// OutputSHA256 is a version 2 report's: the SHA-256 of the whole output (rank 0 alone).
	OutputSHA256 string `json:"output_sha256,omitempty"`

	// Identity is the swapped faces' identity measure (absent when nothing was measured): a
	// video's from the manifest's chunk records, so it covers the job's every attempt; an
	// image's from the ranks' sums.
	Identity *IdentityMeasure `json:"identity,omitempty"`
}

// IdentityMeasure is how much the swapped faces look like the source by a face recognizer: mean
// cosine similarities of its embeddings (1: one face; about 0: two people) over the faces
// swapped in the measured frames, those whose index in the output (counted from the output's
// first frame, whatever the trim) is a multiple of Every (fixed positions of the whole video,
// so any rank count and chunk size measure the same faces).
type IdentityMeasure struct {
	Recognizer string  `json:"recognizer"`
	Every      int     `json:"every"`
	Faces      int     `json:"faces"`
	After      float64 `json:"after"`     // the output face to the source face
	Before     float64 `json:"before"`    // the target face, before the swap, to the source face
	ToTarget   float64 `json:"to_target"` // the output face to the target face before the swap
	// Partial: some of the job's chunks hold no measure (done by an attempt that did not
	// measure, or by a version that did not record it with the chunk); the means are the others'.
	Partial bool `json:"partial,omitempty"`
}

// Means are the sums' means, rounded to 4 decimals; nil without a face. The sums are exact, so
// any rank count and worker order give the same means to the last bit.
func Means(s lustre.IdentitySums) *IdentityMeasure {
	if s.Faces == 0 {
		return nil
	}
	mean := func(sum int64) float64 {
		return math.Round(float64(sum)/(lustre.IdentityScale*float64(s.Faces))*1e4) / 1e4
	}
	return &IdentityMeasure{Recognizer: s.Recognizer, Every: s.Every, Faces: s.Faces, After: mean(s.After), Before: mean(s.Before), ToTarget: mean(s.ToTarget)}
}

// SlurmIDs are the Slurm job a run ran in, from its environment.
type SlurmIDs struct {
	JobID        string `json:"job_id"`
	ArrayJobID   string `json:"array_job_id,omitempty"`
	ArrayTaskID  string `json:"array_task_id,omitempty"`
	RestartCount int    `json:"restart_count"`
}

// SlurmFromEnv reads the Slurm job's ids from the environment; nil outside Slurm.
func SlurmFromEnv(getenv func(string) string) *SlurmIDs {
	id := getenv("SLURM_JOB_ID")
	if id == "" {
		return nil
	}
	var restarts int
	fmt.Sscan(getenv("SLURM_RESTART_COUNT"), &restarts)
	return &SlurmIDs{JobID: id, ArrayJobID: getenv("SLURM_ARRAY_JOB_ID"), ArrayTaskID: getenv("SLURM_ARRAY_TASK_ID"), RestartCount: restarts}
}

// Rank is one rank's share of an attempt. The stage seconds are busy times: the stages run
// in goroutines that overlap (decode, the workers and encode at once), so they add up to more
// than the rank's wall time. Checkpoint is hashing segments and writing journals and (rank 0)
// the manifest; join is rank 0's one ffmpeg run that joins the segments and muxes the target's
// other streams (reports before it have concat and mux, its two passes).
type Rank struct {
	Rank            int                  `json:"rank"`
	Host            string               `json:"host,omitempty"`
	Frames          int                  `json:"frames"` // the frames it processed
	Chunks          int                  `json:"chunks"` // the chunks it encoded (a chunk shared with other ranks: by the one holding its first frame)
	FacesFound      int                  `json:"faces_found"`
	FacesSwapped    int                  `json:"faces_swapped"`
	FacesEnhanced   int                  `json:"faces_enhanced"`
	Seconds         float64              `json:"seconds"` // wall time of the rank's share
	FramesPerSecond float64              `json:"frames_per_second"`
	StageSeconds    map[string]float64   `json:"stage_seconds"`
	GPU             *rank.GPUStats       `json:"gpu,omitempty"`
	CPU             *rank.CPUBudget      `json:"cpu,omitempty"`      // the rank's CPUs, whence, and its thread counts
	Identity        *lustre.IdentitySums `json:"identity,omitempty"` // the rank's share of the identity measure
	ModelBroadcast  *ModelBroadcast      `json:"model_broadcast,omitempty"`

	// The faces age_modifier, deep_swapper and lip_syncer changed (absent where they did not
	// run).
	FacesAgeModified int `json:"faces_age_modified,omitempty"`
	FacesDeepSwapped int `json:"faces_deep_swapped,omitempty"`
	// FacesExpressionRestored are the faces expression_restorer changed (absent: none).
	FacesExpressionRestored int `json:"faces_expression_restored,omitempty"`
	// FacesEdited are the faces face_editor changed (absent: none).
	FacesEdited int `json:"faces_edited,omitempty"`
	// FacesLipSynced are the faces lip_syncer synced (absent: none).
	FacesLipSynced int `json:"faces_lip_synced,omitempty"`
}

// ModelBroadcast is a rank's part of the job's model broadcast (model_broadcast): rank 0 read
// the files and sent them, the others received them.
type ModelBroadcast struct {
	Files       int     `json:"files"` // model files (and MODEL.hash files) sent
	Bytes       int64   `json:"bytes"`
	ReadSeconds float64 `json:"read_seconds,omitempty"` // rank 0's read of the files
	Seconds     float64 `json:"seconds"`                // the broadcast itself, rank 0's read not included
}

// Path is where the report of the job writing output lives by default.
func Path(output string) string { return output + ".report.json" }

// New makes the report of a job whose manifest is m, with outcome now.
func New(m *lustre.Manifest, output, jobDir, outcome string) *Report {
	return newAt(m, output, jobDir, outcome, time.Now().UTC())
}

// newAt is New at the time now (a test's fixed clock gives a report it knows byte for byte).
func newAt(m *lustre.Manifest, output, jobDir, outcome string, now time.Time) *Report {
	r := &Report{Version: Version, Outcome: outcome, Output: output, Target: m.Target, JobDir: jobDir,
		FrameStart: m.FrameStart, FrameEnd: m.FrameEnd, Chunks: m.NumChunks,
		Attempts: append([]lustre.Attempt(nil), m.Attempts...), Finished: now, Fingerprint: m.Fingerprint}
	if n := len(r.Attempts); n > 0 {
		r.Attempts[n-1].Outcome, r.Attempts[n-1].Updated = outcome, now // the manifest's copy is rank 0's to save
	}
	for i, a := range r.Attempts {
		end := a.Updated
		if i == len(r.Attempts)-1 {
			end = now
		}
		if d := end.Sub(a.Started).Seconds(); d > 0 {
			r.Seconds += d
			r.LastSeconds = d
		}
	}
	return r
}

// Replaceable reports whether a run may write its report at path: nothing is there, or a report
// of a run that did not finish. A finished job's report stays (its output is still there and
// unchanged by a run that fails), and so does a file that is not a report.
func Replaceable(path string) bool {
	st, err := os.Lstat(path)
	if err != nil {
		return true // nothing there (or no folder to hold it: the write says so)
	}
	if !st.Mode().IsRegular() { // a link (dangling or not) or a folder is someone's
		return false
	}
	data, err := safefs.ReadOwnFile(path, safefs.ReportLimit, "run report")
	var r Report
	if err != nil || json.Unmarshal(data, &r) != nil || r.Version < 1 || r.Output == "" {
		return false
	}
	return r.Outcome != lustre.Complete
}

// WriteTo puts the report at path, atomically, with the mode the umask gives a new file, as
// the output gets: colleagues and monitoring read reports as other users.
func (r *Report) WriteTo(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return lustre.WriteReadable(path, append(data, '\n'))
}

// Read reads the report of the job that wrote output; ok is false when there is none.
// The report is the program's own file: a link in its place is refused, never followed, and so
// is a FIFO or device, or a file over ReportLimit.
func Read(output string) (r *Report, ok bool, err error) {
	path := Path(output)
	data, err := safefs.ReadOwnFile(path, safefs.ReportLimit, "run report")
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if kind := (*safefs.KindError)(nil); errors.As(err, &kind) {
		return nil, false, fmt.Errorf("%w: move it away", err)
	}
	if err != nil {
		return nil, false, err
	}
	r, err = Decode(data, path)
	return r, err == nil, err
}

// Decode decodes the run report read from path, and checks every number in it (a count,
// a range, a duration) against what this program writes: the error names the file and field.
func Decode(data []byte, path string) (*Report, error) {
	r := new(Report)
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("run report %s is not valid: %s", path, lustre.JSONError(err))
	}
	if err := r.check().Done(path, "run report", "give a report facefusion run wrote"); err != nil {
		return nil, err
	}
	return r, nil
}
