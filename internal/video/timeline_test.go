package video

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// packetPTS are a stream's packet times in presentation order, and its time base, as ffprobe
// reads them: the reference the output is held to.
func packetPTS(t *testing.T, path string) (Rational, []int64) {
	t.Helper()
	tb, err := ParseRational(ffprobeField(t, path, "v:0", "stream=time_base"))
	if err != nil {
		t.Fatal(err)
	}
	var pts []int64
	for _, l := range strings.Fields(ffprobeField(t, path, "v:0", "packet=pts")) {
		v, err := strconv.ParseInt(strings.Trim(l, ","), 10, 64)
		if err != nil {
			t.Fatalf("%s: packet pts %q", path, l)
		}
		pts = append(pts, v)
	}
	slices.Sort(pts)
	return tb, pts
}

// encodeSegments decodes the target's frames and encodes them in segments of the container ext
// cut at cuts (frame numbers), each stamped from times as a job's chunks are, and joins them with
// the target's other streams into out (Join: ffmpeg's concat demuxer).
func encodeSegments(t *testing.T, info *Info, cuts []int, ext, out string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	var segs []JoinSegment
	for i := 0; i+1 < len(cuts); i++ {
		seg := filepath.Join(dir, "seg-"+strconv.Itoa(i)+ext)
		transcode(t, info, cuts[i], cuts[i+1], seg, EncodeOptions{Preset: "ultrafast", Quality: DefaultQuality, Times: info.Times, First: cuts[i]})
		segs = append(segs, JoinSegment{Path: seg, Start: info.Times.At(cuts[i])})
	}
	var keep []Carry
	for _, s := range info.Others {
		keep = append(keep, Carry{Stream: s})
	}
	span := Span{End: time.Duration(info.Times.Micros(info.Times.End)) * time.Microsecond}
	if err := Join(ctx, "", segs, info.Times, info.Path, span, keep, out, AudioOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Every output frame is at the target's time exactly, in the target's time base: a 29.97 fps
// target (1/30000: frame 1 at 1001, not a rounded 33 ms) and a variable-rate one, whose
// duration and audio are kept too; segments cut anywhere. The serial join is exact from NUT
// segments and from the MP4 ones of an output joined in parallel (its fallbacks join those).
func TestOutputKeepsFrameTimes(t *testing.T) {
	for _, c := range []struct {
		clip string
		cuts []int
		even bool
		ext  string
	}{
		{"bf.mp4", []int{0, 40, 41, 123}, true, SegmentExt},
		{"bf.mp4", []int{0, 40, 41, 123}, true, MP4SegmentExt},
		{"vfr.mp4", []int{0, 29, 45, 60}, false, SegmentExt},
		{"vfr.mp4", []int{0, 29, 45, 60}, false, MP4SegmentExt},
	} {
		t.Run(c.clip+c.ext, func(t *testing.T) {
			info := probe(t, clip(t, c.clip))
			if even := info.Times.Step > 0; even != c.even || !info.Times.Valid() {
				t.Fatalf("probed times %v: evenly spaced %v, want %v", info.Times, even, c.even)
			}
			out := filepath.Join(t.TempDir(), "out.mp4")
			if c.ext == MP4SegmentExt && SegmentExtFor(out, "libx264", info.Times) != c.ext {
				t.Fatalf("%s's MP4 output is not joined from MP4 segments", c.clip)
			}
			encodeSegments(t, info, c.cuts, c.ext, out)
			wantTB, want := packetPTS(t, info.Path)
			gotTB, got := packetPTS(t, out)
			if gotTB != wantTB || !slices.Equal(got, want) {
				t.Errorf("frame times %v in %v, want the target's %v in %v", got, gotTB, want, wantTB)
			}
			if c.even {
				for _, f := range []string{"stream=duration_ts", "stream=duration"} {
					if g, w := ffprobeField(t, out, "v:0", f), ffprobeField(t, info.Path, "v:0", f); g != w {
						t.Errorf("video %s %s, want the target's %s", f, g, w)
					}
				}
				// The stream's own timing (H.264's VUI, what a tool reading the bare stream goes
				// by) is the nominal rate, not the time base: with the time base, 29.97 fps
				// would read as 30000.
				if g, w := ffprobeField(t, out, "v:0", "stream=r_frame_rate"), ffprobeField(t, info.Path, "v:0", "stream=r_frame_rate"); g != w {
					t.Errorf("r_frame_rate %s, want the target's %s", g, w)
				}
				raw := filepath.Join(t.TempDir(), "bare.h264")
				ffmpegRun(t, "-i", out, "-map", "0:v", "-c", "copy", "-f", "h264", raw)
				if g, w := ffprobeField(t, raw, "v:0", "stream=r_frame_rate"), ffprobeField(t, info.Path, "v:0", "stream=r_frame_rate"); g != w {
					t.Errorf("the bare stream's rate %s, want the target's %s (its VUI says the time base)", g, w)
				}
			}
			// The file lasts as long as the target, within the last frame's display time (which
			// the target's own edit list may shorten: this one says 3.8 s for a frame at 3.9 s).
			last := time.Duration(info.Times.Micros(info.Times.End-info.Times.At(info.Frames-1))) * time.Microsecond
			g := time.Duration(seconds(ffprobeField(t, out, "", "format=duration")) * float64(time.Second))
			w := time.Duration(seconds(ffprobeField(t, info.Path, "", "format=duration")) * float64(time.Second))
			if absDur(g-w) > last {
				t.Errorf("the output lasts %v, want the target's %v within its last frame's %v", g, w, last)
			}
			if g, w := audioDuration(t, out), audioDuration(t, info.Path); absDur(g-w) > 25*time.Millisecond {
				t.Errorf("audio lasts %v, want the target's %v", g, w)
			}
		})
	}
}
