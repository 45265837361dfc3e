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

// encodeSegments decodes the target's frames and encodes them in segments cut at cuts (frame
// numbers), each stamped from times as a job's chunks are, once in each container of exts (from
// one decode), and joins each container's segments with the target's other streams into
// outs[i] (Join: ffmpeg's concat demuxer).
func encodeSegments(t *testing.T, info *Info, cuts []int, exts, outs []string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	segs := make([][]JoinSegment, len(exts))
	for i := 0; i+1 < len(cuts); i++ {
		paths := make([]string, len(exts))
		opts := make([]EncodeOptions, len(exts))
		for k, ext := range exts {
			paths[k] = filepath.Join(dir, "seg-"+strconv.Itoa(i)+ext)
			opts[k] = EncodeOptions{Preset: "ultrafast", Quality: DefaultQuality, Times: info.Times, First: cuts[i]}
			segs[k] = append(segs[k], JoinSegment{Path: paths[k], Start: info.Times.At(cuts[i])})
		}
		transcodeEach(t, info, cuts[i], cuts[i+1], paths, opts)
	}
	var keep []Carry
	for _, s := range info.Others {
		keep = append(keep, Carry{Stream: s})
	}
	span := Span{End: time.Duration(info.Times.Micros(info.Times.End)) * time.Microsecond}
	for k := range exts {
		if err := Join(ctx, "", segs[k], info.Times, info.Path, span, keep, outs[k], AudioOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// Every output frame is at the target's time exactly, in the target's time base: a 29.97 fps
// target (1/30000: frame 1 at 1001, not a rounded 33 ms) and a variable-rate one, whose
// duration and audio are kept too; segments cut anywhere. The serial join is exact from NUT
// segments and from the MP4 ones of an output joined in parallel (its fallbacks join those).
func TestOutputKeepsFrameTimes(t *testing.T) {
	exts := []string{SegmentExt, MP4SegmentExt}
	for _, c := range []struct {
		clip string
		cuts []int
		even bool
	}{
		{"bf.mp4", []int{0, 40, 41, 123}, true},
		{"vfr.mp4", []int{0, 29, 45, 60}, false},
	} {
		// Both containers' segments from one decode of each cut; each output checked alike.
		info := probe(t, clip(t, c.clip))
		if even := info.Times.Step > 0; even != c.even || !info.Times.Valid() {
			t.Fatalf("%s: probed times %v: evenly spaced %v, want %v", c.clip, info.Times, even, c.even)
		}
		dir := t.TempDir()
		var outs []string
		for _, ext := range exts {
			outs = append(outs, filepath.Join(dir, strings.TrimPrefix(ext, ".")+".out.mp4"))
		}
		if SegmentExtFor(outs[1], "libx264", info.Times) != MP4SegmentExt {
			t.Fatalf("%s's MP4 output is not joined from MP4 segments", c.clip)
		}
		encodeSegments(t, info, c.cuts, exts, outs)
		for k, ext := range exts {
			t.Run(c.clip+ext, func(t *testing.T) {
				out := outs[k]
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
}
