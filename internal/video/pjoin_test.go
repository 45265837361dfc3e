package video

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// chaptered makes (in dir) a 29.97 fps target of n frames with audio, a title, a tag and two
// chapters: what the side file must carry.
func chaptered(t *testing.T, dir string, n int) string {
	t.Helper()
	meta := filepath.Join(dir, "meta.txt")
	text := ";FFMETADATA1\ntitle=Join me\ncomment=kept\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=300\ntitle=One\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=300\nEND=800\ntitle=Two\n"
	if err := os.WriteFile(meta, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "chaptered.mp4")
	ffmpegRun(t, "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=30000/1001", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
		"-i", meta, "-map", "0:v", "-map", "1:a", "-map_metadata", "2", "-map_chapters", "2",
		"-frames:v", fmt.Sprint(n), "-t", fmt.Sprintf("%.6f", float64(n)*1001/30000),
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", p)
	return p
}

// ffprobeOut is ffprobe's output for args, failing the test on an error.
func ffprobeOut(t *testing.T, args ...string) string {
	t.Helper()
	out, err := runTool(context.Background(), testenv.Tool(t, "ffprobe"), append([]string{"-v", "error"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// The parallel join (side file, the MP4 segments' tables, bytes at their offsets) gives what
// the serial join gives for the same frames in NUT segments (every other container's, and the
// previous version's): the same decoded frames, the same video packets (times, flags, bytes),
// the same audio packets, tags and chapters, a file ffmpeg reads without a warning; and the
// serial join of the MP4 segments themselves (the parallel join's fallbacks) gives the same
// frames, frame times and bytes; for a 29.97 fps target and a variable-rate one, with B-frames (libx264's default
// preset). Its layout does not depend on how the segments are shared among ranks: each segment
// is its own piece.
func TestParallelJoinMatchesSerial(t *testing.T) {
	for _, tc := range []struct {
		name string
		cuts []int
		src  func(t *testing.T, dir string) string
	}{
		{"29.97fps", []int{0, 9, 10, 24}, func(t *testing.T, dir string) string { return chaptered(t, dir, 24) }},
		{"vfr", []int{0, 25, 40, 60}, func(t *testing.T, dir string) string { return clip(t, "vfr.mp4") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			src := tc.src(t, dir)
			info := probe(t, src)
			var keep []Carry
			for _, s := range info.Others {
				keep = append(keep, Carry{Stream: s})
			}
			times := info.Times
			if ok, why := ParallelJoin("out.mp4", "libx264", times); !ok {
				t.Fatalf("ParallelJoin refuses an MP4 of libx264: %s", why)
			}
			ext := SegmentExtFor("out.mp4", "libx264", times)
			if ext != MP4SegmentExt {
				t.Fatalf("the segments of an MP4 joined in parallel are %s, want %s", ext, MP4SegmentExt)
			}
			// The same frames encoded as NUT segments (every other container's) and as MP4 ones.
			var nuts, segs []JoinSegment
			for i := 0; i+1 < len(tc.cuts); i++ {
				nut, seg := filepath.Join(dir, fmt.Sprintf("seg-%d%s", i, SegmentExt)), filepath.Join(dir, fmt.Sprintf("seg-%d%s", i, ext))
				opt := EncodeOptions{Quality: DefaultQuality, Times: times, First: tc.cuts[i]}
				transcodeEach(t, info, tc.cuts[i], tc.cuts[i+1], []string{nut, seg}, []EncodeOptions{opt, opt})
				nuts = append(nuts, JoinSegment{Path: nut, Start: times.At(tc.cuts[i])})
				segs = append(segs, JoinSegment{Path: seg, Start: times.At(tc.cuts[i])})
			}
			serial := filepath.Join(dir, "serial.mp4")
			if err := Join(ctx, dir, nuts, times, src, Span{}, keep, serial, AudioOptions{}); err != nil {
				t.Fatal(err)
			}
			// The serial join's fallbacks join the MP4 segments themselves.
			fallback := filepath.Join(dir, "fallback.mp4")
			if err := Join(ctx, dir, segs, times, src, Span{}, keep, fallback, AudioOptions{}); err != nil {
				t.Fatal(err)
			}
			side := filepath.Join(dir, "side.mp4")
			if err := WriteSide(ctx, dir, times, src, Span{}, keep, "out.mp4", AudioOptions{}, "libx264", side); err != nil {
				t.Fatal(err)
			}
			par := filepath.Join(dir, "parallel.mp4")
			if err := JoinMP4(ctx, segs, times, side, par); err != nil {
				t.Fatal(err)
			}
			want := referenceHashes(t, serial)
			for _, f := range []string{par, fallback} {
				if got := referenceHashes(t, f); !slices.Equal(got, want) {
					t.Errorf("%s's decoded frames: %d, want %d; first difference at %d", filepath.Base(f), len(got), len(want), firstDiff(got, want))
				}
			}
			// The parallel join's packets of every stream (times, durations, flags, bytes), tags,
			// chapters and streams in one ffprobe run a file.
			all := []string{"-show_entries", "packet=stream_index,pts,dts,duration,flags,data_hash:format_tags:chapter=start,end,time_base:chapter_tags:stream=index,codec_name,time_base",
				"-show_data_hash", "sha256", "-of", "csv"}
			for _, c := range []struct {
				got string
				q   []string
			}{
				{par, all},
				// The fallback's times are exact, and its bytes those of the NUT segments; its
				// decode times are the MP4 segments' own (a segment shorter than the encoder's
				// reordering delay decodes with none), which ffmpeg's muxer nudges to rise.
				{fallback, []string{"-select_streams", "v", "-show_entries", "packet=pts,flags,data_hash", "-show_data_hash", "sha256", "-of", "csv"}},
			} {
				got, want := ffprobeOut(t, append(c.q, c.got)...), ffprobeOut(t, append(c.q, serial)...)
				gs, ws := map[string][]string{"rest": strings.Split(got, "\n")}, map[string][]string{"rest": strings.Split(want, "\n")}
				if c.got == par {
					gs, ws = byStream(got), byStream(want)
				}
				for _, k := range []string{"video", "audio", "rest"} {
					if gl, wl := gs[k], ws[k]; !slices.Equal(gl, wl) {
						i := firstDiff(gl, wl)
						t.Errorf("%s: ffprobe %s: %s line %d is %q, want %q", filepath.Base(c.got), strings.Join(c.q, " "), k, i, at(gl, i), at(wl, i))
					}
				}
				if c.got == par && tc.name == "29.97fps" && !strings.Contains(got, "Two") {
					t.Error("the chapters were not carried")
				}
				if c.got == par && (!strings.Contains(got, "packet,0,") || !strings.Contains(got, "packet,1,")) {
					t.Errorf("the parallel join's output lacks the video's or the audio's packets:\n%s", got)
				}
			}
			if out := ffmpegWarnings(t, par); out != "" {
				t.Errorf("ffmpeg warns reading the parallel join's output: %s", out)
			}
		})
	}
}

// byStream splits ffprobe's csv lines into the video's packets (stream 0, each without its
// duration: the serial join's MP4 muxer leaves the video's unset), the audio's (stream 1) and
// the rest in order: the two joins interleave the streams' packets differently.
func byStream(out string) map[string][]string {
	m := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, ",")
		switch {
		case f[0] == "packet" && len(f) > 4 && f[1] == "0":
			m["video"] = append(m["video"], strings.Join(append(f[:4:4], f[5:]...), ","))
		case f[0] == "packet" && len(f) > 1 && f[1] == "1":
			m["audio"] = append(m["audio"], line)
		default:
			m["rest"] = append(m["rest"], line)
		}
	}
	return m
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(none)"
}

// ffmpegWarnings is what ffmpeg prints at -v warning decoding the whole of path.
func ffmpegWarnings(t *testing.T, path string) string {
	t.Helper()
	return strings.TrimSpace(string(ffmpegRunAll(t, "-v", "warning", "-i", path, "-f", "null", "-")))
}

// ffmpegRunAll runs ffmpeg and returns its stdout and stderr together.
func ffmpegRunAll(t *testing.T, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(testenv.Tool(t, "ffmpeg"), append([]string{"-nostdin", "-hide_banner"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return out
}

// ParallelContainer's reasons name the output's container as it is: a flv output (a muxer
// ffmpeg picks by the extension) is joined by ffmpeg, not "unknown".
func TestParallelContainerSaysWhy(t *testing.T) {
	for out, want := range map[string]string{
		"a.mp4": "", "a.MOV": "", "": "",
		"a.flv": "a flv output is joined by ffmpeg (serial)",
		"a.mkv": "a matroska output is joined by ffmpeg",
	} {
		ok, why := ParallelContainer(out, "libx264")
		if ok != (want == "") || !strings.HasPrefix(why, want) {
			t.Errorf("ParallelContainer(%q) = %v, %q; want %q", out, ok, why, want)
		}
	}
}

// The parallel join's timecode track (the side file's, one sample counted at the video's rate)
// covers the whole video, as the serial join's does: the same sample time and duration, the
// same track duration, and the timecode itself.
func TestParallelJoinTimecodeSpansTheVideo(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	target := filepath.Join(dir, "target.mp4")
	ffmpegRun(t, "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25", "-frames:v", "12", "-c:v", "libx264", "-preset", "ultrafast",
		"-pix_fmt", "yuv420p", "-timecode", "01:00:00:00", target)
	info := probe(t, target)
	times := info.Times
	span := Span{Timecode: info.Timecode, Rate: info.FPS}
	var nuts, segs []JoinSegment
	for _, c := range [][2]int{{0, 6}, {6, 12}} {
		nut, seg := filepath.Join(dir, fmt.Sprintf("seg-%d%s", c[0], SegmentExt)), filepath.Join(dir, fmt.Sprintf("seg-%d%s", c[0], MP4SegmentExt))
		opt := EncodeOptions{Preset: "ultrafast", Quality: DefaultQuality, Times: times, First: c[0]}
		transcodeEach(t, info, c[0], c[1], []string{nut, seg}, []EncodeOptions{opt, opt})
		nuts = append(nuts, JoinSegment{Path: nut, Start: times.At(c[0])})
		segs = append(segs, JoinSegment{Path: seg, Start: times.At(c[0])})
	}
	serial := filepath.Join(dir, "serial.mp4")
	if err := Join(ctx, dir, nuts, times, target, span, nil, serial, AudioOptions{}); err != nil {
		t.Fatal(err)
	}
	side, par := filepath.Join(dir, "side.mp4"), filepath.Join(dir, "parallel.mp4")
	if err := WriteSide(ctx, t.TempDir(), times, target, span, nil, par, AudioOptions{}, "libx264", side); err != nil {
		t.Fatal(err)
	}
	if err := JoinMP4(ctx, segs, times, side, par); err != nil {
		t.Fatal(err)
	}
	q := []string{"-select_streams", "d", "-show_entries", "stream=codec_tag_string,time_base,duration_ts,duration:stream_tags=timecode:packet=pts,duration", "-of", "csv"}
	got, want := ffprobeOut(t, append(q, par)...), ffprobeOut(t, append(q, serial)...)
	if got != want || !strings.Contains(want, "tmcd") || !strings.Contains(want, "01:00:00:00") {
		t.Errorf("the parallel join's timecode track:\n%s\nwant the serial join's:\n%s", got, want)
	}
}
