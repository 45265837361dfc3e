package video

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// joinTrim encodes the target's frames [start, end) in segments cut at cuts (target frame
// numbers) on the trimmed timeline, as a job does, and joins them with the streams keep over
// span both ways: serially into a .mkv (the streams mkvKeep) and in parallel (side file, pieces)
// into a .mp4 (mp4Keep).
func joinTrim(t *testing.T, info *Info, start, end int, cuts []int, mkvKeep, mp4Keep []Carry, span Span) (mkv, mp4 string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	times := info.Times.Slice(start, end, info.Frames)
	// NUT segments for the serial join, MP4 ones (as an MP4 output's job writes them) for the
	// parallel join.
	var segs, mp4Segs []JoinSegment
	var outs [][]string
	var opts [][]EncodeOptions
	for i := 0; i+1 < len(cuts); i++ {
		nut, seg := filepath.Join(dir, fmt.Sprintf("seg-%d%s", i, SegmentExt)), filepath.Join(dir, fmt.Sprintf("seg-%d%s", i, MP4SegmentExt))
		opt := EncodeOptions{Preset: "ultrafast", Quality: DefaultQuality, Times: times, First: cuts[i] - start}
		outs, opts = append(outs, []string{nut, seg}), append(opts, []EncodeOptions{opt, opt})
		segs = append(segs, JoinSegment{Path: nut, Start: times.At(cuts[i] - start)})
		mp4Segs = append(mp4Segs, JoinSegment{Path: seg, Start: times.At(cuts[i] - start)})
	}
	transcodeCuts(t, info, cuts, outs, opts) // one decode, both containers
	mkv = filepath.Join(dir, "serial.mkv")
	if err := Join(ctx, Mux{Scratch: dir, Times: times, Target: info.Path, Span: span, Keep: mkvKeep}, segs, mkv); err != nil {
		t.Fatal(err)
	}
	mp4 = filepath.Join(dir, "parallel.mp4")
	side := filepath.Join(dir, "side.mp4")
	if err := WriteSide(ctx, Mux{Scratch: dir, Times: times, Target: info.Path, Span: span, Keep: mp4Keep}, mp4, "libx264", side); err != nil {
		t.Fatal(err)
	}
	if err := JoinMP4(ctx, mp4Segs, times, side, mp4); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "facefusion-cues-*")); len(left) > 0 {
		t.Errorf("the cut cues were left behind: %v", left)
	}
	return mkv, mp4
}

// trimSpan is the span of the target's frames [start, end) as the pipeline gives it
// (spec.Spec.Span): from the frame times, with the timecode of the first.
func trimSpan(info *Info, start, end int) Span {
	t := info.Times
	us := func(n int64) time.Duration { return time.Duration(t.Micros(n)) * time.Microsecond }
	return Span{Start: us(t.At(start)), End: us(t.At(start) + t.Slice(start, end, info.Frames).End),
		Timecode: TimecodeAt(info.Timecode, info.FPS, start), Rate: info.FPS, Trim: true}
}

// fileStreams is ffprobe's view of a file's streams and its format, from one run (each
// question its own run cost a process start apiece).
type fileStreams struct {
	Streams []probedStream
	Format  struct {
		Tags map[string]string `json:"tags"`
	}
}

type probedStream struct {
	CodecType    string            `json:"codec_type"`
	CodecTag     string            `json:"codec_tag_string"`
	StartTime    string            `json:"start_time"`
	AvgFrameRate string            `json:"avg_frame_rate"`
	Disposition  map[string]int    `json:"disposition"`
	Tags         map[string]string `json:"tags"`
}

func streamsOf(t *testing.T, path string) *fileStreams {
	t.Helper()
	var fs fileStreams
	if err := json.Unmarshal([]byte(ffprobeOut(t, "-show_streams", "-show_format", "-of", "json", path)), &fs); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &fs
}

// first is the first stream of the type (ffprobe's -select_streams TYPE:0), a zero one if none.
func (fs *fileStreams) first(typ string) probedStream {
	for _, st := range fs.Streams {
		if st.CodecType == typ {
			return st
		}
	}
	return probedStream{}
}

// A trimmed output keeps what the target shows over the span, in place, serial join and
// parallel: every text subtitle cue that overlaps the span at its own time minus the span's
// start, clipped to the span, and none outside it (MP4's mov_text and Matroska's SubRip, the
// stream's language and its default and forced flags kept); the audio from the span's start, not from the packet before the seek
// point (Matroska would shift the whole file by it); and the timecode of the first output frame
// (01:00:00:00 at frame 0 becomes 01:00:00:20 at frame 20, a new tmcd track in MP4, a tag in
// Matroska), the target's own tmcd track not copied.
func TestTrimKeepsCuesAudioAndTimecode(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: trims clips with ffmpeg (make test)")
	}
	dir := t.TempDir()
	srt := filepath.Join(dir, "cues.srt")
	cues := "1\n00:00:00,000 --> 00:00:00,300\nbefore\n\n" +
		"2\n00:00:00,500 --> 00:00:00,900\nacross the start\n\n" +
		"3\n00:00:00,900 --> 00:00:01,000\ninside\n\n" +
		"4\n00:00:01,100 --> 00:00:01,500\nacross the end\n\n" +
		"5\n00:00:01,300 --> 00:00:01,500\nafter\n\n"
	if err := os.WriteFile(srt, []byte(cues), 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "target.mp4")
	ffmpegRun(t, "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-i", srt,
		"-map", "0", "-map", "1", "-map", "2", "-t", "1.6", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
		"-c:a", "aac", "-c:s", "mov_text", "-metadata:s:s:0", "language=fra", "-disposition:s:0", "default+forced", "-timecode", "01:00:00:00", target)
	info := probe(t, target)
	if info.Timecode != "01:00:00:00" {
		t.Errorf("probed timecode %q, want 01:00:00:00", info.Timecode)
	}
	var keep []Carry
	for _, s := range info.Others {
		if s.Type == "data" {
			t.Errorf("the target's timecode track %v is among the streams to carry: the output writes its own", s)
		}
		c := Carry{Stream: s}
		if s.Type == "subtitle" {
			c.Text = "mov_text" // what CheckOutput chooses for the .mp4; the .mkv takes SubRip
		}
		keep = append(keep, c)
	}
	// Frames [20, 30): 0.8 s to 1.2 s.
	span := trimSpan(info, 20, 30)
	mkvKeep := append([]Carry(nil), keep...)
	for i := range mkvKeep {
		if mkvKeep[i].Type == "subtitle" {
			mkvKeep[i].Text = "srt"
		}
	}
	mkv, mp4 := joinTrim(t, info, 20, 30, []int{20, 25, 30}, mkvKeep, keep, span)
	want := "1\n00:00:00,000 --> 00:00:00,100\nacross the start\n\n" +
		"2\n00:00:00,100 --> 00:00:00,200\ninside\n\n" +
		"3\n00:00:00,300 --> 00:00:00,400\nacross the end\n\n"
	for _, out := range []string{mkv, mp4} {
		name := filepath.Ext(out)
		if got := strings.ReplaceAll(string(ffmpegRun(t, "-i", out, "-map", "0:s:0", "-f", "srt", "-")), "\r\n", "\n"); got != want {
			t.Errorf("%s: the cues are\n%s\nwant\n%s", name, got, want)
		}
		st := streamsOf(t, out)
		if got := tag(st.first("subtitle").Tags, "language"); got != "fra" {
			t.Errorf("%s: the subtitle's language is %q, want fra", name, got)
		}
		if d := st.first("subtitle").Disposition; d["default"] != 1 || d["forced"] != 1 {
			t.Errorf("%s: the subtitle's default,forced flags are %v, want the target's 1,1", name, d)
		}
		if v := seconds(st.first("video").StartTime); v != 0 {
			t.Errorf("%s: the video starts at %v s, want 0", name, v)
		}
		// The audio starts within one AAC packet (1024 samples, 21 ms) of the span's start.
		if a := seconds(st.first("audio").StartTime); a < 0 || a > 0.0214 {
			t.Errorf("%s: the audio starts at %v s, want within a packet after 0", name, a)
		}
		if out != mkv {
			continue
		}
		if got := tag(st.Format.Tags, "timecode"); got != "01:00:00:20" {
			t.Errorf(".mkv: timecode tag %q, want 01:00:00:20", got)
		}
	}
	var f []string
	for _, s := range streamsOf(t, mp4).Streams {
		if s.CodecType == "data" {
			f = append(f, s.CodecTag, s.AvgFrameRate, tag(s.Tags, "timecode"))
		}
	}
	if len(f) != 3 || f[0] != "tmcd" || f[2] != "01:00:00:20" {
		t.Errorf(".mp4: data streams %q, want one tmcd track reading 01:00:00:20", f)
	} else if r, _ := ParseRational(f[1]); r != (Rational{25, 1}) {
		t.Errorf(".mp4: the timecode track counts %s frames a second, want the video's 25", f[1])
	}
}

// Every frame of a trimmed variable-rate output keeps the target's time and duration, the last
// one included (the gap to the target's next frame), trimmed inside the 30 fps stretch and
// inside the 10 fps one, where a last frame of 1/rate would be 67 ms short. The parallel join
// (MP4) writes the index from the output's timeline.
func TestTrimKeepsLastFrameDuration(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: trims clips with ffmpeg (make test)")
	}
	info := probe(t, clip(t, "vfr.mp4"))
	tb, pts := packetPTS(t, info.Path)
	for _, r := range [][2]int{{10, 20}, {35, 45}} {
		start, end := r[0], r[1]
		_, mp4 := joinTrim(t, info, start, end, []int{start, (start + end) / 2, end}, nil, nil, trimSpan(info, start, end))
		gotTB, got := packetPTS(t, mp4)
		if gotTB != tb || len(got) != end-start {
			t.Fatalf("frames %d–%d: %d frames in %v, want %d in %v", start, end, len(got), gotTB, end-start, tb)
		}
		for i, p := range got {
			if w := pts[start+i] - pts[start]; p-got[0] != w {
				t.Errorf("frames %d–%d: output frame %d at %d, want %d", start, end, i, p-got[0], w)
			}
		}
		dur, err := strconv.ParseInt(fileTiming(t, mp4).DurationTS, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if last, want := dur-(got[len(got)-1]-got[0]), pts[end]-pts[end-1]; last != want {
			t.Errorf("frames %d–%d: the last frame lasts %d ticks of %v, want the target's %d", start, end, last, tb, want)
		}
	}
}
