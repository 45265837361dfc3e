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
	testenv.Full(t, "joins clips both ways with ffmpeg")
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
			var outs [][]string
			var opts [][]EncodeOptions
			for i := 0; i+1 < len(tc.cuts); i++ {
				nut, seg := filepath.Join(dir, fmt.Sprintf("seg-%d%s", i, SegmentExt)), filepath.Join(dir, fmt.Sprintf("seg-%d%s", i, ext))
				opt := EncodeOptions{Quality: DefaultQuality, Times: times, First: tc.cuts[i]}
				outs, opts = append(outs, []string{nut, seg}), append(opts, []EncodeOptions{opt, opt})
				nuts = append(nuts, JoinSegment{Path: nut, Start: times.At(tc.cuts[i])})
				segs = append(segs, JoinSegment{Path: seg, Start: times.At(tc.cuts[i])})
			}
			transcodeCuts(t, info, tc.cuts, outs, opts)
			serial := filepath.Join(dir, "serial.mp4")
			if err := Join(ctx, Mux{Scratch: dir, Times: times, Target: src, Keep: keep}, nuts, serial); err != nil {
				t.Fatal(err)
			}
			// The serial join's fallbacks join the MP4 segments themselves.
			fallback := filepath.Join(dir, "fallback.mp4")
			if err := Join(ctx, Mux{Scratch: dir, Times: times, Target: src, Keep: keep}, segs, fallback); err != nil {
				t.Fatal(err)
			}
			side := filepath.Join(dir, "side.mp4")
			if err := WriteSide(ctx, Mux{Scratch: dir, Times: times, Target: src, Keep: keep}, "out.mp4", "libx264", side); err != nil {
				t.Fatal(err)
			}
			par := filepath.Join(dir, "parallel.mp4")
			if err := JoinMP4(ctx, segs, times, side, par); err != nil {
				t.Fatal(err)
			}
			// The parallel join's frames, decoded at -v warning: what ffmpeg warns of reading it.
			parHashes, warned := warningsAndHashes(t, par)
			h := referenceHashesOf(t, serial, fallback) // one ffmpeg for both
			want := h[0]
			for _, f := range []struct {
				name string
				got  []string
			}{{"parallel.mp4", parHashes}, {"fallback.mp4", h[1]}} {
				if !slices.Equal(f.got, want) {
					t.Errorf("%s's decoded frames: %d, want %d; first difference at %d", f.name, len(f.got), len(want), firstDiff(f.got, want))
				}
			}
			if warned != "" {
				t.Errorf("ffmpeg warns reading the parallel join's output: %s", warned)
			}
			// Every file's packets of every stream (times, durations, flags, bytes), tags,
			// chapters and streams in one ffprobe run a file: the parallel join's all of them
			// against the serial join's; the fallback's, the video packets' times, flags and
			// bytes: its times are exact, and its bytes those of the NUT segments; its decode
			// times are the MP4 segments' own (a segment shorter than the encoder's reordering
			// delay decodes with none), which ffmpeg's muxer nudges to rise.
			all := []string{"-show_entries", "packet=stream_index,pts,dts,duration,flags,data_hash:format_tags:chapter=start,end,time_base:chapter_tags:stream=index,codec_name,time_base",
				"-show_data_hash", "sha256", "-of", "csv"}
			serialOut := ffprobeOut(t, append(all, serial)...)
			for _, c := range []struct {
				got   string
				split func(string) map[string][]string
			}{{par, byStream}, {fallback, videoPacketTimesAndBytes}} {
				got := ffprobeOut(t, append(all, c.got)...)
				gs, ws := c.split(got), c.split(serialOut)
				if c.got == fallback && len(ws["rest"]) == 0 {
					t.Fatalf("no video packets in the serial join's ffprobe output:\n%s", serialOut)
				}
				for _, k := range []string{"video", "audio", "rest"} {
					if gl, wl := gs[k], ws[k]; !slices.Equal(gl, wl) {
						i := firstDiff(gl, wl)
						t.Errorf("%s: ffprobe %s: %s line %d is %q, want %q", filepath.Base(c.got), strings.Join(all, " "), k, i, at(gl, i), at(wl, i))
					}
				}
				if c.got == par && tc.name == "29.97fps" && !strings.Contains(got, "Two") {
					t.Error("the chapters were not carried")
				}
				if c.got == par && (!strings.Contains(got, "packet,0,") || !strings.Contains(got, "packet,1,")) {
					t.Errorf("the parallel join's output lacks the video's or the audio's packets:\n%s", got)
				}
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

// videoPacketTimesAndBytes keeps, of byStream's ffprobe csv lines, the video packets' (stream
// 0) presentation times, flags and hashes, in order, as "rest": what -select_streams v
// -show_entries packet=pts,flags,data_hash would print.
func videoPacketTimesAndBytes(out string) map[string][]string {
	m := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		// packet,stream_index,pts,dts,duration,flags,data_hash[,side data]
		if f := strings.Split(line, ","); f[0] == "packet" && len(f) >= 7 && f[1] == "0" {
			m["rest"] = append(m["rest"], strings.Join(append([]string{"packet", f[2]}, f[5:]...), ","))
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

// warningsAndHashes is referenceHashes of path and what ffmpeg prints at -v warning decoding
// the whole of it, from one ffmpeg.
func warningsAndHashes(t *testing.T, path string) (hashes []string, warned string) {
	t.Helper()
	cmd := exec.Command(testenv.Tool(t, "ffmpeg"), "-nostdin", "-hide_banner", "-v", "warning", "-i", path,
		"-map", "0:v:0", "-fps_mode", "passthrough", "-pix_fmt", "rgb24", "-f", "framemd5", "-")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ffmpeg framemd5 of %s: %v: %s", path, err, stderr.String())
	}
	if hashes = frameMD5s(out); len(hashes) == 0 {
		t.Fatalf("framemd5 of %s gave no frames", path)
	}
	return hashes, strings.TrimSpace(stderr.String())
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
	testenv.Full(t, "joins clips both ways with ffmpeg")
	ctx := context.Background()
	dir := t.TempDir()
	target := filepath.Join(dir, "target.mp4")
	ffmpegRun(t, "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25", "-frames:v", "12", "-c:v", "libx264", "-preset", "ultrafast",
		"-pix_fmt", "yuv420p", "-timecode", "01:00:00:00", target)
	info := probe(t, target)
	times := info.Times
	span := Span{Timecode: info.Timecode, Rate: info.FPS}
	var nuts, segs []JoinSegment
	var outs [][]string
	var opts [][]EncodeOptions
	cuts := []int{0, 6, 12}
	for _, c := range cuts[:2] {
		nut, seg := filepath.Join(dir, fmt.Sprintf("seg-%d%s", c, SegmentExt)), filepath.Join(dir, fmt.Sprintf("seg-%d%s", c, MP4SegmentExt))
		opt := EncodeOptions{Preset: "ultrafast", Quality: DefaultQuality, Times: times, First: c}
		outs, opts = append(outs, []string{nut, seg}), append(opts, []EncodeOptions{opt, opt})
		nuts = append(nuts, JoinSegment{Path: nut, Start: times.At(c)})
		segs = append(segs, JoinSegment{Path: seg, Start: times.At(c)})
	}
	transcodeCuts(t, info, cuts, outs, opts)
	serial := filepath.Join(dir, "serial.mp4")
	if err := Join(ctx, Mux{Scratch: dir, Times: times, Target: target, Span: span}, nuts, serial); err != nil {
		t.Fatal(err)
	}
	side, par := filepath.Join(dir, "side.mp4"), filepath.Join(dir, "parallel.mp4")
	if err := WriteSide(ctx, Mux{Scratch: t.TempDir(), Times: times, Target: target, Span: span}, par, "libx264", side); err != nil {
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
