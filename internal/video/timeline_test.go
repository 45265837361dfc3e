package video

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// timing is what ffprobe reads of a file's times, from one ffprobe run (each question its own
// run cost a process start apiece): the first video stream's time base, packet times in
// presentation order, duration (in its time base and in seconds) and nominal rate, the first
// audio stream's duration and the file's. A test clip's is read once a test binary.
type timing struct {
	TB                            Rational
	PTS                           []int64
	DurationTS, Duration, Rate    string
	AudioDuration, FormatDuration string
}

// packetPTS is fileTiming's time base and packet times alone.
func packetPTS(t *testing.T, path string) (Rational, []int64) {
	t.Helper()
	tm := fileTiming(t, path)
	return tm.TB, tm.PTS
}

func fileTiming(t *testing.T, path string) timing {
	t.Helper()
	type answer struct {
		tm  timing
		err error
	}
	a := onceForClip(path, "timing", func() answer {
		out, err := runTool(context.Background(), testenv.Tool(t, "ffprobe"), "-v", "error", "-show_entries",
			"stream=index,codec_type,time_base,duration_ts,duration,r_frame_rate:packet=stream_index,pts:format=duration", "-of", "json", path)
		if err != nil {
			return answer{err: err}
		}
		var p struct {
			Packets []struct {
				StreamIndex int    `json:"stream_index"`
				PTS         *int64 `json:"pts"`
			}
			Streams []struct {
				Index      int
				CodecType  string `json:"codec_type"`
				TimeBase   string `json:"time_base"`
				DurationTS *int64 `json:"duration_ts"`
				Duration   string
				RFrameRate string `json:"r_frame_rate"`
			}
			Format struct{ Duration string }
		}
		if err := json.Unmarshal(out, &p); err != nil {
			return answer{err: fmt.Errorf("%s: %v", path, err)}
		}
		var tm timing
		video, audio := -1, false
		for _, s := range p.Streams {
			switch {
			case s.CodecType == "video" && video < 0:
				video = s.Index
				if tm.TB, err = ParseRational(s.TimeBase); err != nil {
					return answer{err: err}
				}
				tm.Duration, tm.Rate = s.Duration, s.RFrameRate
				if s.DurationTS != nil {
					tm.DurationTS = strconv.FormatInt(*s.DurationTS, 10)
				}
			case s.CodecType == "audio" && !audio:
				audio, tm.AudioDuration = true, s.Duration
			}
		}
		for _, k := range p.Packets {
			if k.StreamIndex == video && k.PTS != nil {
				tm.PTS = append(tm.PTS, *k.PTS)
			}
		}
		slices.Sort(tm.PTS)
		tm.FormatDuration = p.Format.Duration
		return answer{tm: tm}
	})
	if a.err != nil {
		t.Fatal(a.err)
	}
	return a.tm
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
	var segOuts [][]string
	var opts [][]EncodeOptions
	for i := 0; i+1 < len(cuts); i++ {
		paths := make([]string, len(exts))
		segOpts := make([]EncodeOptions, len(exts))
		for k, ext := range exts {
			paths[k] = filepath.Join(dir, "seg-"+strconv.Itoa(i)+ext)
			segOpts[k] = EncodeOptions{Preset: "ultrafast", Quality: DefaultQuality, Times: info.Times, First: cuts[i]}
			segs[k] = append(segs[k], JoinSegment{Path: paths[k], Start: info.Times.At(cuts[i])})
		}
		segOuts, opts = append(segOuts, paths), append(opts, segOpts)
	}
	transcodeCuts(t, info, cuts, segOuts, opts)
	var keep []Carry
	for _, s := range info.Others {
		keep = append(keep, Carry{Stream: s})
	}
	span := Span{End: time.Duration(info.Times.Micros(info.Times.End)) * time.Microsecond}
	for k := range exts {
		if err := Join(ctx, Mux{Times: info.Times, Target: info.Path, Span: span, Keep: keep}, segs[k], outs[k]); err != nil {
			t.Fatal(err)
		}
	}
}

// Every output frame is at the target's time exactly, in the target's time base: a 29.97 fps
// target (1/30000: frame 1 at 1001, not a rounded 33 ms) and a variable-rate one, whose
// duration and audio are kept too; segments cut anywhere. The serial join is exact from NUT
// segments and from the MP4 ones of an output joined in parallel (its fallbacks join those).
func TestOutputKeepsFrameTimes(t *testing.T) {
	testenv.Full(t, "encodes and joins clips of every frame timing")
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
				got, want := fileTiming(t, out), fileTiming(t, info.Path)
				if got.TB != want.TB || !slices.Equal(got.PTS, want.PTS) {
					t.Errorf("frame times %v in %v, want the target's %v in %v", got.PTS, got.TB, want.PTS, want.TB)
				}
				if c.even {
					for _, f := range [][2]string{{"duration_ts", got.DurationTS}, {"duration", got.Duration}} {
						if w := map[string]string{"duration_ts": want.DurationTS, "duration": want.Duration}[f[0]]; f[1] != w {
							t.Errorf("video stream=%s %s, want the target's %s", f[0], f[1], w)
						}
					}
					// The stream's own timing (H.264's VUI, what a tool reading the bare stream goes
					// by) is the nominal rate, not the time base: with the time base, 29.97 fps
					// would read as 30000.
					if got.Rate != want.Rate {
						t.Errorf("r_frame_rate %s, want the target's %s", got.Rate, want.Rate)
					}
					raw := filepath.Join(t.TempDir(), "bare.h264")
					ffmpegRun(t, "-i", out, "-map", "0:v", "-c", "copy", "-f", "h264", raw)
					if g := ffprobeField(t, raw, "v:0", "stream=r_frame_rate"); g != want.Rate {
						t.Errorf("the bare stream's rate %s, want the target's %s (its VUI says the time base)", g, want.Rate)
					}
				}
				// The file lasts as long as the target, within the last frame's display time (which
				// the target's own edit list may shorten: this one says 3.8 s for a frame at 3.9 s).
				last := time.Duration(info.Times.Micros(info.Times.End-info.Times.At(info.Frames-1))) * time.Microsecond
				g := time.Duration(seconds(got.FormatDuration) * float64(time.Second))
				w := time.Duration(seconds(want.FormatDuration) * float64(time.Second))
				if absDur(g-w) > last {
					t.Errorf("the output lasts %v, want the target's %v within its last frame's %v", g, w, last)
				}
				if g, w := time.Duration(seconds(got.AudioDuration)*float64(time.Second)), time.Duration(seconds(want.AudioDuration)*float64(time.Second)); absDur(g-w) > 25*time.Millisecond {
					t.Errorf("audio lasts %v, want the target's %v", g, w)
				}
			})
		}
	}
}
