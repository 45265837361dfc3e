package lustre

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// The files of a job folder, and the report beside its output, are read back by runs, by
// `facefusion status` and by `facefusion plan --costs`; another user, a damaged disk or a hand
// edit can put anything in them. Every number read is checked against what this program writes
// before anything uses it: an index outside its range, a count that would size an allocation, or
// a duration no run takes is an error naming the file and the field.

// Bounds of what the files hold: more is no job's.
const (
	MaxFrames = 1<<31 - 1 // a frame index or count: over 2 years of video at 25 fps
	MaxRanks  = 1 << 20   // a rank count
	// MaxFacesPerFrame bounds the faces a frame adds to a chunk's identity measure (every face
	// swapped in it is measured): a crowd, not a corrupt count.
	MaxFacesPerFrame = 1 << 12
	MaxSeconds       = 1e9 // a duration: over 31 years
)

// maxIdentityFaces is the most faces whose identity sums fit an int64 in IdentityScale's fixed
// point.
const maxIdentityFaces = int64(math.MaxInt64 / int64(IdentityScale))

// FieldError is a number (or record) of a file outside what this program writes.
type FieldError struct {
	Path  string // the file
	What  string // "manifest", "journal", "run report", "progress file"
	Field string // its JSON path: done[3].chunk
	Why   string // "is -1, outside 0..9"
	Fix   string // what to do
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s %s: %s %s: %s", e.What, e.Path, e.Field, e.Why, e.Fix)
}

// Fields checks the numbers of one file the program reads back (the job folder's, and the run
// report beside the output: package report checks its own with it): the first bad one is its
// error.
type Fields struct{ err *FieldError }

// In checks lo ≤ v ≤ hi.
func (f *Fields) In(field string, v, lo, hi int64) {
	if f.err == nil && (v < lo || v > hi) {
		f.err = &FieldError{Field: field, Why: fmt.Sprintf("is %d, outside %d..%d", v, lo, hi)}
	}
}

// Seconds checks a duration: finite, 0 ≤ v ≤ MaxSeconds.
func (f *Fields) Seconds(field string, v float64) {
	if f.err == nil && (math.IsNaN(v) || v < 0 || v > MaxSeconds) {
		f.err = &FieldError{Field: field, Why: fmt.Sprintf("is %g, outside 0..%g seconds", v, float64(MaxSeconds))}
	}
}

// Finite checks a measure: finite and |v| ≤ limit.
func (f *Fields) Finite(field string, v, limit float64) {
	if f.err == nil && (math.IsNaN(v) || math.Abs(v) > limit) {
		f.err = &FieldError{Field: field, Why: fmt.Sprintf("is %g, outside ±%g", v, limit)}
	}
}

// Fail records a problem that is not a number out of range.
func (f *Fields) Fail(field, why string) {
	if f.err == nil {
		f.err = &FieldError{Field: field, Why: why}
	}
}

// Done is the first problem, for the file at path, with what to do; nil when there is none.
func (f *Fields) Done(path, what, fix string) error {
	if f.err == nil {
		return nil
	}
	f.err.Path, f.err.What, f.err.Fix = path, what, fix
	return f.err
}

// frameRange checks a job's frames [start, end) in chunks of chunkFrames: chunks of them.
func (f *Fields) frameRange(start, end, chunkFrames, chunks int) {
	f.In("frame_start", int64(start), 0, MaxFrames)
	f.In("frame_end", int64(end), int64(start), MaxFrames)
	f.In("chunk_frames", int64(chunkFrames), 0, MaxFrames)
	want := 0
	if chunkFrames > 0 {
		want = (end - start + chunkFrames - 1) / chunkFrames
	} else if end > start {
		f.Fail("chunk_frames", "is 0, for frames to cut")
	}
	if f.err == nil && chunks != want {
		f.Fail("chunks", fmt.Sprintf("is %d, but frames [%d,%d) in chunks of %d are %d", chunks, start, end, chunkFrames, want))
	}
}

// Attempt checks an attempt's record; chunks is the job's chunk count.
func (f *Fields) Attempt(field string, a Attempt, chunks int) {
	f.In(field+".ranks", int64(a.Ranks), 0, MaxRanks)
	f.In(field+".planned_chunks", int64(a.Planned), 0, int64(chunks))
	f.In(field+".slurm_restart_count", int64(a.RestartCount), 0, math.MaxInt32)
}

// chunk checks a chunk's record on its own: what holds whatever job it is of.
func (f *Fields) chunk(field string, c Chunk) {
	f.In(field+".chunk", int64(c.Chunk), 0, MaxFrames-1)
	f.In(field+".start", int64(c.Start), 0, MaxFrames-1)
	f.In(field+".end", int64(c.End), int64(c.Start)+1, MaxFrames)
	f.In(field+".frames", int64(c.Frames), int64(c.End-c.Start), int64(c.End-c.Start))
	f.In(field+".size", c.Size, 0, math.MaxInt64)
	f.In(field+".rank", int64(c.Rank), 0, MaxRanks-1)
	f.In(field+".attempt", int64(c.Attempt), 0, math.MaxInt32)
	f.In(field+".faces", int64(c.Faces), 0, int64(c.Frames))
	f.Identity(field+".identity", c.Identity, int64(c.Frames)*MaxFacesPerFrame)
}

// Identity checks identity sums of at most faces faces: a similarity is within ±1, so a sum
// is within ±faces in IdentityScale's fixed point.
func (f *Fields) Identity(field string, s IdentitySums, faces int64) {
	f.In(field+".faces", int64(s.Faces), 0, faces)
	f.In(field+".every", int64(s.Every), 0, MaxFrames)
	limit := int64(math.MaxInt64)
	if int64(s.Faces) <= maxIdentityFaces {
		limit = int64(s.Faces) * IdentityScale
	}
	f.In(field+".after_sum_e9", s.After, -limit, limit)
	f.In(field+".before_sum_e9", s.Before, -limit, limit)
	f.In(field+".to_target_sum_e9", s.ToTarget, -limit, limit)
}

// Check checks every number of m, read from its file: the frame range and its chunks, the
// attempts, and each record (a chunk of the job, its frames the chunk's, listed once, in
// order). The error names the field; FieldError's Path is for the caller to fill.
func (m *Manifest) check() *Fields {
	var f Fields
	var total int64
	f.frameRange(m.FrameStart, m.FrameEnd, m.ChunkFrames, m.NumChunks)
	for i, a := range m.Attempts {
		f.Attempt(fmt.Sprintf("attempts[%d]", i), a, m.NumChunks)
	}
	for i, c := range m.Done {
		field := fmt.Sprintf("done[%d]", i)
		if f.err == nil && i > 0 && c.Chunk <= m.Done[i-1].Chunk {
			f.Fail(field+".chunk", fmt.Sprintf("is %d, after chunk %d: the records are one a chunk, in order", c.Chunk, m.Done[i-1].Chunk))
		}
		f.fitsJob(field, c, m)
		// The job's sums add the records' up: their faces together keep that from overflowing.
		if total += int64(c.Identity.Faces); f.err == nil && total > maxIdentityFaces {
			f.Fail(field+".identity.faces", fmt.Sprintf("brings the job's measured faces to %d, over %d", total, maxIdentityFaces))
		}
	}
	return &f
}

// fitsJob checks that record c (field) is one of m's chunks, with the chunk's frames.
func (f *Fields) fitsJob(field string, c Chunk, m *Manifest) {
	f.chunk(field, c)
	f.In(field+".chunk", int64(c.Chunk), 0, int64(m.NumChunks)-1)
	if f.err != nil {
		return
	}
	start := m.FrameStart + c.Chunk*m.ChunkFrames
	if end := min(start+m.ChunkFrames, m.FrameEnd); c.Start != start || c.End != end {
		f.Fail(field, fmt.Sprintf("holds frames [%d,%d), but chunk %d is [%d,%d)", c.Start, c.End, c.Chunk, start, end))
	}
	f.In(field+".attempt", int64(c.Attempt), 0, int64(len(m.Attempts)))
}

// CheckRecord checks that a journal's record c is one of m's chunks, with the chunk's frames
// (what the journal's read checked not knowing the job); journal is the journal's path.
func (m *Manifest) CheckRecord(c Chunk, journal string) error {
	var f Fields
	f.fitsJob("record of chunk", c, m)
	return f.Done(journal, "journal", "remove the journal, or pass --fresh to start over")
}

// refused reports whether err is safefs's refusal of a file (not a regular file, a link, over
// its limit), which names the file already.
func refused(err error) bool {
	var kind *safefs.KindError
	var limit *safefs.LimitError
	return errors.As(err, &kind) || errors.As(err, &limit)
}

// JSONError is the JSON decoder's error for a message: what it quotes (a number that did not
// fit: all its digits) cut to an excerpt.
func JSONError(err error) string {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		field := typ.Field
		if field == "" {
			field = "the value"
		}
		if n, ok := strings.CutPrefix(typ.Value, "number "); ok {
			return fmt.Sprintf("%s is %s, which is no %s", field, safefs.Excerpt(n), typ.Type)
		}
		return fmt.Sprintf("%s is a JSON %s, not a %s", field, typ.Value, typ.Type)
	}
	return safefs.Clip(err.Error())
}
