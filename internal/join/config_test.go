package join

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// Segments of an HEVC output whose encoders differ (another x265 on some nodes) fail the join as
// the nodes' doing (Environment), naming both segments, and are not handed to the serial join,
// which would decode them all with the first one's configuration; H.264 segments that differ
// are (ffmpeg's concat re-sends their parameter sets). It covers video.ConfigError's choice too.
func TestJoinRefusesHEVCSegmentsThatDiffer(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.mp4")
	testenv.Clip(t, src, 8, "25")
	info, err := video.Probe(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	// The side file: any MP4 of one mdat will do, the refusal comes before its tracks are used.
	sidePath := filepath.Join(dir, "side.mp4")
	testenv.Clip(t, sidePath, 1, "25")
	for _, tc := range []struct {
		encoder string
		serial  bool
	}{{"libx265", false}, {"libx264", true}} {
		var segs []video.JoinSegment
		var pieces []*video.Piece
		var tables [][]byte
		for k, q := range []int{80, 20} { // another quality: other parameter sets
			seg := video.JoinSegment{Path: filepath.Join(dir, fmt.Sprintf("%s-%d%s", tc.encoder, k, video.MP4SegmentExt)), Start: info.Times.At(4 * k)}
			opt := video.EncodeOptions{Encoder: tc.encoder, Quality: q, Preset: "ultrafast", FPS: info.FPS, Width: info.Width, Height: info.Height, Times: info.Times, First: 4 * k}
			e, err := video.OpenEncoder(ctx, seg.Path, opt)
			if err != nil {
				t.Fatal(err)
			}
			frame := make([]byte, opt.FrameSize())
			for i := 0; i < 4; i++ {
				if err := e.Write(frame); err != nil {
					t.Fatal(err)
				}
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			p, err := video.ReadSegment(seg, info.Times)
			if err != nil {
				t.Fatal(err)
			}
			b, err := p.Table.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			segs, pieces, tables = append(segs, seg), append(pieces, p), append(tables, b)
		}
		report, err := json.Marshal(segmentTables{Tables: tables})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		close(done)
		ins := &instruction{Segs: segs, Times: info.Times, Out: filepath.Join(dir, tc.encoder+".mp4.part")}
		var log strings.Builder
		dec := planOutput(ctx, ins, &Side{path: sidePath, done: done}, pieces, [][]byte{report}, 1, logging.New(&log, logging.Debug))
		if dec.Err == "" || dec.Serial != tc.serial {
			t.Errorf("%s segments that differ: serial %v, error %q; want an error, serial %v", tc.encoder, dec.Serial, dec.Err, tc.serial)
		}
		if tc.serial {
			continue
		}
		if !dec.Environment || !strings.Contains(dec.Err, segs[0].Path) || !strings.Contains(dec.Err, segs[1].Path) || !strings.Contains(dec.Err, "--fresh") {
			t.Errorf("the refusal %q (environment %v) should be the nodes' doing and name both segments and --fresh", dec.Err, dec.Environment)
		}
		if !strings.Contains(dec.Err, "different hev1 configurations") && !strings.Contains(dec.Err, "different hvc1 configurations") {
			t.Errorf("the refusal %q should name HEVC's sample entry (hev1 or hvc1)", dec.Err)
		}
		// One configuration on two clocks is the serial join's (ffmpeg's concat rescales), not a
		// refusal.
		other := pieces[0].Table
		other.Timescale++
		b0, err := pieces[0].Table.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		b1, err := other.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		clocks, err := json.Marshal(segmentTables{Tables: [][]byte{b0, b1}})
		if err != nil {
			t.Fatal(err)
		}
		if d := planOutput(ctx, ins, &Side{path: sidePath, done: done}, []*video.Piece{pieces[0], pieces[0]}, [][]byte{clocks}, 1, logging.New(&log, logging.Debug)); !d.Serial || d.Environment {
			t.Errorf("one %s configuration on two clocks: serial %v, environment %v (%s); want the serial join", tc.encoder, d.Serial, d.Environment, d.Err)
		}
		// joinShare passes the decision's kind on: the exit code of an environment error.
		if err := decisionError(dec); fault.KindOf(err) != fault.Environment {
			t.Errorf("the refusal's kind is %v, want Environment", fault.KindOf(err))
		}
	}
}
