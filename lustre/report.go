package lustre

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// The run report: the record of a finished job, beside its output, written when the output is
// in place. It outlives the job folder (removed after success), so `facefusion status` can
// still say what the job was and how it went.

// ReportVersion is the report layout this program writes.
const ReportVersion = 1

// Report is a finished job's record.
type Report struct {
	Version     int               `json:"version"`
	Outcome     string            `json:"outcome"` // complete
	Output      string            `json:"output"`
	Target      string            `json:"target"`
	JobDir      string            `json:"job_dir"`
	FrameStart  int               `json:"frame_start"`
	FrameEnd    int               `json:"frame_end"`
	Chunks      int               `json:"chunks"`
	Attempts    []Attempt         `json:"attempts"`
	Seconds     float64           `json:"seconds"`         // wall time of every attempt, added up
	LastSeconds float64           `json:"attempt_seconds"` // the last attempt's
	Finished    time.Time         `json:"finished"`
	Fingerprint map[string]string `json:"fingerprint"`
}

// ReportPath is where the report of the job writing output lives.
func ReportPath(output string) string { return output + ".report.json" }

// NewReport makes the report of a job whose manifest is m, finished now.
func NewReport(m *Manifest, output, jobDir string) *Report {
	now := time.Now().UTC()
	r := &Report{Version: ReportVersion, Outcome: Complete, Output: output, Target: m.Target, JobDir: jobDir,
		FrameStart: m.FrameStart, FrameEnd: m.FrameEnd, Chunks: m.NumChunks,
		Attempts: append([]Attempt(nil), m.Attempts...), Finished: now, Fingerprint: m.Fingerprint}
	if n := len(r.Attempts); n > 0 {
		r.Attempts[n-1].Outcome, r.Attempts[n-1].Updated = Complete, now // the manifest's copy is rank 0's to save
	}
	for i, a := range m.Attempts {
		end := a.Updated
		if i == len(m.Attempts)-1 {
			end = now
		}
		if d := end.Sub(a.Started).Seconds(); d > 0 {
			r.Seconds += d
			r.LastSeconds = d
		}
	}
	return r
}

// Write puts the report beside the output, atomically.
func (r *Report) Write() error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return WriteAtomic(ReportPath(r.Output), append(data, '\n'))
}

// ReadReport reads the report of the job that wrote output; ok is false when there is none.
func ReadReport(output string) (r *Report, ok bool, err error) {
	data, err := os.ReadFile(ReportPath(output))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	r = new(Report)
	if err := json.Unmarshal(data, r); err != nil {
		return nil, false, fmt.Errorf("run report %s is not valid: %v", ReportPath(output), err)
	}
	return r, true, nil
}
