package video

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

// Segments whose encoders differ (another ffmpeg or x265 build on some nodes) cannot share the
// parallel join's one sample entry: PlanJoin says which piece and which codec, and whether
// ffmpeg's concat, the serial join, can join them instead: yes for H.264 (it re-sends the
// parameter sets inside the stream), no for HEVC, whose pieces it would all decode with the
// first one's configuration; the driver then fails the job with that reason.
func TestPlanJoinRefusesDifferentConfigurations(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.mp4")
	ffmpegRun(t, "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25", "-frames:v", "8",
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", src)
	info := probe(t, src)
	times := info.Times
	for _, tc := range []struct {
		encoder string
		concat  bool
	}{{"libx264", true}, {"libx265", false}} {
		t.Run(tc.encoder, func(t *testing.T) {
			var pieces []*Piece
			var tables []PieceTable
			// The second segment at another quality: another CRF, other parameter sets.
			for k, q := range []int{80, 20} {
				seg := filepath.Join(dir, fmt.Sprintf("%s-%d%s", tc.encoder, k, MP4SegmentExt))
				transcode(t, info, 4*k, 4*k+4, seg, EncodeOptions{Encoder: tc.encoder, Quality: q, Preset: "ultrafast", Times: times, First: 4 * k})
				p, err := ReadSegment(JoinSegment{Path: seg, Start: times.At(4 * k)}, times)
				if err != nil {
					t.Fatal(err)
				}
				pieces, tables = append(pieces, p), append(tables, p.Table)
			}
			_, err := PlanJoin(&Side{}, tables, pieces[0], times)
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("PlanJoin of %s segments at qualities 80 and 20: %v, want a *ConfigError", tc.encoder, err)
			}
			if ce.Piece != 1 || ce.Codec == "" || ce.Codec != ce.Other {
				t.Errorf("the refusal names piece %d, codecs %q and %q; want piece 1, one codec", ce.Piece, ce.Codec, ce.Other)
			}
			if (ce.Codec == "avc1") != (tc.encoder == "libx264") {
				t.Errorf("%s's sample entry is %q", tc.encoder, ce.Codec)
			}
			if ce.Concatenable() != tc.concat {
				t.Errorf("%s (%s): Concatenable %v, want %v", tc.encoder, ce.Codec, ce.Concatenable(), tc.concat)
			}
		})
	}
}
