package report

import (
	"fmt"
	"math"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// A report is read back by `facefusion status`, `plan --costs` and the scaling study: every
// number in it is checked against the bounds of the job folder's files (lustre.Fields) before
// anything uses it.

// check checks every number of r, read from its file.
func (r *Report) check() *lustre.Fields {
	var f lustre.Fields
	f.In("version", int64(r.Version), 1, math.MaxInt32)
	f.In("exit_status", int64(r.ExitStatus), 0, 255)
	f.In("frame_start", int64(r.FrameStart), 0, lustre.MaxFrames)
	f.In("frame_end", int64(r.FrameEnd), int64(r.FrameStart), lustre.MaxFrames)
	f.In("chunks", int64(r.Chunks), 0, lustre.MaxFrames)
	f.Seconds("seconds", r.Seconds)
	f.Seconds("attempt_seconds", r.LastSeconds)
	f.In("ranks", int64(r.Ranks), 0, lustre.MaxRanks)
	f.In("output_bytes", r.OutputBytes, 0, math.MaxInt64)
	f.In("output_hash_block_bytes", r.OutputHashBlock, 0, math.MaxInt64)
	for i, a := range r.Attempts {
		f.Attempt(fmt.Sprintf("attempts[%d]", i), a, r.Chunks)
	}
	if len(r.PerRank) > lustre.MaxRanks {
		f.Fail("per_rank", fmt.Sprintf("has %d ranks, more than %d", len(r.PerRank), lustre.MaxRanks))
	}
	for i, p := range r.PerRank {
		checkRank(&f, fmt.Sprintf("per_rank[%d]", i), p, 0)
	}
	if r.Totals != nil {
		checkRank(&f, "totals", *r.Totals, -1) // no rank's: -1
	}
	if m := r.Identity; m != nil {
		f.In("identity.faces", int64(m.Faces), 0, math.MaxInt64)
		f.In("identity.every", int64(m.Every), 0, lustre.MaxFrames)
		f.Finite("identity.after", m.After, 1)
		f.Finite("identity.before", m.Before, 1)
		f.Finite("identity.to_target", m.ToTarget, 1)
	}
	return &f
}

// checkRank checks one rank's figures of a report (or their totals, whose rank is lowest, -1).
func checkRank(f *lustre.Fields, field string, p Rank, lowest int64) {
	f.In(field+".rank", int64(p.Rank), lowest, lustre.MaxRanks-1)
	f.In(field+".frames", int64(p.Frames), 0, lustre.MaxFrames)
	f.In(field+".chunks", int64(p.Chunks), 0, lustre.MaxFrames)
	for _, n := range []struct {
		name string
		v    int
	}{{"faces_found", p.FacesFound}, {"faces_swapped", p.FacesSwapped}, {"faces_enhanced", p.FacesEnhanced},
		{"faces_expression_restored", p.FacesExpressionRestored}, {"faces_edited", p.FacesEdited}} {
		f.In(field+"."+n.name, int64(n.v), 0, math.MaxInt64)
	}
	f.Seconds(field+".seconds", p.Seconds)
	f.Finite(field+".frames_per_second", p.FramesPerSecond, lustre.MaxFrames)
	for stage, s := range p.StageSeconds {
		f.Seconds(field+".stage_seconds."+safefs.Excerpt(stage), s)
	}
	if b := p.ModelBroadcast; b != nil {
		f.In(field+".model_broadcast.files", int64(b.Files), 0, math.MaxInt32)
		f.In(field+".model_broadcast.bytes", b.Bytes, 0, math.MaxInt64)
		f.Seconds(field+".model_broadcast.read_seconds", b.ReadSeconds)
		f.Seconds(field+".model_broadcast.seconds", b.Seconds)
	}
	if s := p.Identity; s != nil {
		f.Identity(field+".identity", *s, math.MaxInt32)
	}
}
