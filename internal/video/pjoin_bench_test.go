package video

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// BenchmarkPlanOutput is rank 0's own part of the parallel join of 2 h of 25 fps (180000 frames
// in 7200 segments of 25): every segment's gathered table decoded, the joined samples laid out
// and their decode times sorted (PlanJoin), and the index written; the other ranks read and
// encode their tables at once (ReadSegmentIndex). Reported as seconds a frame: the scaling
// model's rank-0 per-frame term.
func BenchmarkPlanOutput(b *testing.B) {
	const segments, per = 7200, 25
	dir := b.TempDir()
	info, target, seg := benchSegment(b, dir) // a segment of per frames
	side := filepath.Join(dir, "side.mp4")
	if err := WriteSide(context.Background(), Mux{Scratch: dir, Times: info.Times, Target: target}, "out.mp4", "libx264", side); err != nil {
		b.Fatal(err)
	}
	s, err := ReadSide(side)
	if err != nil {
		b.Fatal(err)
	}
	times := info.Times
	times.End = times.At(segments * per)
	// Every segment's table as its rank sends it: the one segment's, moved to its place.
	tmpl, err := ReadSegment(JoinSegment{Path: seg, Start: times.At(0)}, times)
	if err != nil {
		b.Fatal(err)
	}
	gathered := make([][]byte, segments)
	for k := range gathered {
		t := tmpl.Table
		t.Samples = slices.Clone(t.Samples)
		for i := range t.Samples {
			t.Samples[i].DTS += times.At(k * per)
		}
		gathered[k], _ = t.MarshalBinary()
	}
	out, err := os.Create(filepath.Join(dir, "out.mp4"))
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	for b.Loop() {
		tables := make([]PieceTable, segments)
		for k, g := range gathered {
			if err := tables[k].UnmarshalBinary(g); err != nil {
				b.Fatal(err)
			}
		}
		l, err := PlanJoin(s, tables, tmpl, times)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.WriteHead(out, s, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(segments*per), "ns/frame")
	b.ReportMetric(float64(segments*per), "frames")
}
