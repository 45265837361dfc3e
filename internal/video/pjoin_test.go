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

// The parallel join (side file, segment tables, bytes at their offsets) gives the same bytes
// however the segments are split into pieces (ranks), and what the serial join gives for the
// same segments: the same decoded frames, the same video packets (times,
// flags, bytes), the same audio packets, tags and chapters, a file ffmpeg reads without a
// warning; for a 29.97 fps target and a variable-rate one, with B-frames (libx264's default
// preset).
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
			var segs []JoinSegment
			for i := 0; i+1 < len(tc.cuts); i++ {
				seg := filepath.Join(dir, fmt.Sprintf("seg-%d.nut", i))
				transcode(t, info, tc.cuts[i], tc.cuts[i+1], seg, EncodeOptions{Quality: DefaultQuality, Times: times, First: tc.cuts[i]})
				segs = append(segs, JoinSegment{Path: seg, Start: times.At(tc.cuts[i])})
			}
			serial := filepath.Join(dir, "serial.mp4")
			if err := Join(ctx, dir, segs, times, src, Span{}, keep, serial, AudioOptions{}); err != nil {
				t.Fatal(err)
			}
			if ok, why := ParallelJoin("out.mp4", "libx264", times); !ok {
				t.Fatalf("ParallelJoin refuses an MP4 of libx264: %s", why)
			}
			side := filepath.Join(dir, "side.mp4")
			if err := WriteSide(ctx, times, src, Span{}, keep, "out.mp4", AudioOptions{}, "libx264", side); err != nil {
				t.Fatal(err)
			}
			scratch := t.TempDir()
			par := filepath.Join(dir, "parallel.mp4")
			if err := JoinMP4(ctx, scratch, segs, nil, times, side, par); err != nil {
				t.Fatal(err)
			}
			// Split into pieces as 2 and 3 ranks share the segments: the same bytes.
			for _, bounds := range [][]int{{0, 1, 3}, {0, 1, 2, 3}} {
				split := filepath.Join(dir, "split.mp4")
				if err := JoinMP4(ctx, scratch, segs, bounds, times, side, split); err != nil {
					t.Fatal(err)
				}
				a, _ := os.ReadFile(par)
				b, _ := os.ReadFile(split)
				if len(a) == 0 || string(a) != string(b) {
					t.Errorf("pieces %v: %d bytes, other than the one piece's %d", bounds, len(b), len(a))
				}
			}
			if left, _ := os.ReadDir(scratch); len(left) > 0 {
				t.Errorf("the segments' remuxes were left in scratch: %s", left[0].Name())
			}
			if got, want := referenceHashes(t, par), referenceHashes(t, serial); !slices.Equal(got, want) {
				t.Errorf("decoded frames: %d, want %d; first difference at %d", len(got), len(want), firstDiff(got, want))
			}
			for _, q := range [][]string{
				{"-select_streams", "v", "-show_entries", "packet=pts,dts,flags,data_hash", "-show_data_hash", "sha256", "-of", "csv"},
				{"-select_streams", "a", "-show_entries", "packet=pts,dts,duration,flags,data_hash", "-show_data_hash", "sha256", "-of", "csv"},
				{"-show_entries", "format_tags:chapter=start,end,time_base:chapter_tags:stream=index,codec_name,time_base", "-of", "csv"},
			} {
				got, want := ffprobeOut(t, append(q, par)...), ffprobeOut(t, append(q, serial)...)
				if got != want {
					gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
					i := firstDiff(gl, wl)
					t.Errorf("ffprobe %s: line %d is %q, want %q", strings.Join(q, " "), i, at(gl, i), at(wl, i))
				}
			}
			if tc.name == "29.97fps" && !strings.Contains(ffprobeOut(t, "-show_entries", "chapter_tags", "-of", "csv", par), "Two") {
				t.Error("the chapters were not carried")
			}
			if out := ffmpegWarnings(t, par); out != "" {
				t.Errorf("ffmpeg warns reading the parallel join's output: %s", out)
			}
		})
	}
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
