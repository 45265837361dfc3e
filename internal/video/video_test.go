package video

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// Full decodes give ffmpeg's own frames, one for one, and exactly Info.Frames of them.
func TestDecodeFullMatchesFFmpeg(t *testing.T) {
	testenv.Full(t, "decodes whole clips against ffmpeg's frames")
	for _, name := range []string{"bf.mp4", "bf.mkv", "bf.ts", "vfr.mkv"} {
		t.Run(name, func(t *testing.T) {
			info := probe(t, clip(t, name))
			want := referenceHashes(t, info.Path)
			got := decodeHashes(t, info, 0, info.Frames)
			if len(want) != info.Frames {
				t.Fatalf("probe says %d frames, ffmpeg decodes %d", info.Frames, len(want))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("decoded frames differ from ffmpeg's: %d vs %d frames, first difference at %d", len(got), len(want), firstDiff(got, want))
			}
		})
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// Ranges are frame-exact: B-frames, 29.97 fps, an odd frame count, containers whose video
// starts late, ranges that start on, just after and between keyframes (GOP 24), one frame (the
// last, two after a keyframe: a lone frame mid-clip, [61,62), was the same seek and skip), the
// last frame; and a variable-rate stream. A range from frame 0 (the first keyframe) is
// TestDecodeFullMatchesFFmpeg's, on the same clips.
func TestDecodeRangesExact(t *testing.T) {
	testenv.Full(t, "decodes every range of the clips with ffmpeg")
	ranges := [][2]int{{1, 4}, {23, 26}, {24, 49}, {37, 86}, {100, 123}, {122, 123}}
	for _, name := range []string{"bf.mp4", "bf.mkv", "bf.ts", "vfr.mkv"} {
		t.Run(name, func(t *testing.T) {
			info := probe(t, clip(t, name))
			want := referenceHashes(t, info.Path)
			for _, r := range ranges {
				s, e := r[0], min(r[1], info.Frames)
				if s >= e {
					continue
				}
				got := decodeHashes(t, info, s, e)
				if !slices.Equal(got, want[s:e]) {
					t.Errorf("range [%d,%d): got %d frames, first wrong frame %d", s, e, len(got), s+firstDiff(got, want[s:e]))
				}
			}
		})
	}
}

func TestDecodeRangeErrors(t *testing.T) {
	t.Parallel()
	info := probe(t, clip(t, "bf.mp4"))
	for _, r := range [][2]int{{-1, 3}, {5, 5}, {100, 124}, {9, 3}} {
		_, err := OpenDecoder(context.Background(), info, r[0], r[1])
		if err == nil || !strings.Contains(err.Error(), info.Path) {
			t.Errorf("range %v: %v, want an error naming the file", r, err)
		}
	}
	// A truncated file whose index survived: the probe trusts the index, the decoder notices
	// the missing frames and says which file and range.
	trunc := probe(t, clip(t, "truncated-faststart.mp4"))
	if trunc.Frames != 123 {
		t.Fatalf("truncated faststart file probes as %d frames; the test expects the index's 123", trunc.Frames)
	}
	d, err := OpenDecoder(context.Background(), trunc, 0, trunc.Frames)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	buf := make([]byte, trunc.FrameSize())
	n := 0
	for err = d.Next(buf); err == nil; err = d.Next(buf) {
		n++
	}
	if errors.Is(err, io.EOF) || n >= 123 {
		t.Fatalf("truncated file gave %d frames and %v, want an error", n, err)
	}
	for _, want := range []string{trunc.Path, "[0,123)", fmt.Sprintf("gave %d of 123", n)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestDecoderCancel(t *testing.T) {
	info := probe(t, clip(t, "bf.mp4"))
	ctx, cancel := context.WithCancel(context.Background())
	d, err := OpenDecoder(ctx, info, 0, info.Frames)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, info.FrameSize())
	if err := d.Next(buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	for err = d.Next(buf); err == nil; err = d.Next(buf) {
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %v, want context.Canceled", err)
	}
	if d.cmd.ProcessState == nil {
		t.Fatal("ffmpeg still running after cancel")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestDecoderCloseEarly(t *testing.T) {
	info := probe(t, clip(t, "bf.mp4"))
	d, err := OpenDecoder(context.Background(), info, 10, 100)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, info.FrameSize())
	if err := d.Next(buf); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("closing a decoder early: %v", err)
	}
	if d.cmd.ProcessState == nil {
		t.Fatal("ffmpeg still running after Close")
	}
	if err := d.Next(buf); err == nil {
		t.Fatal("Next after Close succeeded")
	}
}

// ffv1 is lossless: decode → encode → decode gives back the same bytes, frame for frame.
func TestFFV1RoundTrip(t *testing.T) {
	testenv.Full(t, "decodes, encodes and decodes a clip with ffmpeg in both pixel formats")
	info := probe(t, clip(t, "bf.mp4"))
	want := referenceHashes(t, info.Path)
	// Both pixel formats from one decode, read back by one ffmpeg.
	pixfmts := []string{"", "bgr0"}
	var outs []string
	var opts []EncodeOptions
	for i, pixfmt := range pixfmts {
		outs = append(outs, filepath.Join(t.TempDir(), fmt.Sprintf("lossless-%d.mkv.tmp", i)))
		opts = append(opts, EncodeOptions{Encoder: "ffv1", PixFmt: pixfmt})
	}
	transcodeEach(t, info, 0, info.Frames, outs, opts)
	for i, got := range referenceHashesOf(t, outs...) {
		if !slices.Equal(got, want) {
			t.Errorf("ffv1 pix_fmt %q: %d frames, first difference at %d", pixfmts[i], len(got), firstDiff(got, want))
		}
	}
}

// transcode decodes [start,end) of info and encodes it to out with opt (size and rate filled in).
func transcode(t testing.TB, info *Info, start, end int, out string, opt EncodeOptions) {
	t.Helper()
	transcodeEach(t, info, start, end, []string{out}, []EncodeOptions{opt})
}

// transcodeCuts is transcodeEach of each segment [cuts[i],cuts[i+1]) into outs[i] with opts[i],
// from one decode of [cuts[0],cuts[len(cuts)-1]): a segment's encoders open at its first frame
// and close after its last, as a rank's chunks are cut from its one range (a decoder a segment
// was an ffmpeg start each, 0.1–0.3 CPU-s here; a range's frames are a whole decode's,
// TestDecodeRangesExact).
func transcodeCuts(t testing.TB, info *Info, cuts []int, outs [][]string, opts [][]EncodeOptions) {
	t.Helper()
	ctx := context.Background()
	d, err := OpenDecoder(ctx, info, cuts[0], cuts[len(cuts)-1])
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	buf := make([]byte, info.FrameSize())
	for i := 0; i+1 < len(cuts); i++ {
		encs := make([]*Encoder, len(outs[i]))
		for k, out := range outs[i] {
			opt := opts[i][k]
			opt.Width, opt.Height, opt.FPS = info.Width, info.Height, info.FPS
			if encs[k], err = OpenEncoder(ctx, out, opt); err != nil {
				t.Fatal(err)
			}
		}
		for f := cuts[i]; f < cuts[i+1]; f++ {
			if err := d.Next(buf); err != nil {
				t.Fatalf("frame %d: %v", f, err)
			}
			for _, e := range encs {
				if err := e.Write(buf); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, e := range encs {
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			if e.Frames() != cuts[i+1]-cuts[i] {
				t.Fatalf("encoder wrote %d frames, want %d", e.Frames(), cuts[i+1]-cuts[i])
			}
		}
	}
	if err := d.Next(buf); !errors.Is(err, io.EOF) {
		t.Fatalf("after frame %d the decoder gave %v, want io.EOF", cuts[len(cuts)-1], err)
	}
}

// transcodeEach is transcode into several outputs at once, outs[i] with opts[i], from one
// decode of [start,end): the tests that hold two encodings of the same frames side by side.
func transcodeEach(t testing.TB, info *Info, start, end int, outs []string, opts []EncodeOptions) {
	t.Helper()
	transcodeCuts(t, info, []int{start, end}, [][]string{outs}, [][]EncodeOptions{opts})
}

func TestEncodeX264(t *testing.T) {
	t.Parallel()
	info := probe(t, clip(t, "bf.mp4"))
	out := filepath.Join(t.TempDir(), "seg.mp4.tmp") // a temporary name: the container comes from .mp4
	transcode(t, info, 30, 71, out, EncodeOptions{Quality: DefaultQuality, Preset: "ultrafast"})
	got := probe(t, out)
	if got.Frames != 41 || got.FPS != info.FPS || got.Codec != "h264" || got.PixFmt != "yuv420p" || got.HasAudio {
		t.Errorf("encoded segment: %+v", got)
	}
}

func TestQualityMapping(t *testing.T) {
	// FaceFusion's numpy.round(numpy.interp(q, [0,100], [51,0])), halves to even.
	for q, crf := range map[int]string{0: "51", 100: "0", 80: "10", 50: "26", 90: "5", 30: "36", 70: "15", 150: "0", -5: "51"} {
		if got := qualityArgs("libx264", q); !slices.Equal(got, []string{"-crf", crf}) {
			t.Errorf("libx264 quality %d: %v, want -crf %s", q, got, crf)
		}
	}
	if got := qualityArgs("libx265", 80); !slices.Equal(got, []string{"-crf", "10"}) {
		t.Errorf("libx265 quality 80: %v", got)
	}
	if got := qualityArgs("libvpx-vp9", 50); !slices.Equal(got, []string{"-crf", "32"}) { // 31.5 → 32
		t.Errorf("vp9 quality 50: %v", got)
	}
	if got := qualityArgs("ffv1", 10); got != nil {
		t.Errorf("ffv1 takes no quality, got %v", got)
	}
	args := strings.Join(encodeArgs("x.mkv", EncodeOptions{Encoder: "libx264", Quality: 80, Preset: "veryfast", FPS: Rational{25, 1}, Width: 2, Height: 2, PixFmt: "yuv420p"}), " ")
	for _, want := range []string{"-crf 10", "-preset veryfast", "-pix_fmt yuv420p", "-f matroska", "-f nut -i pipe:0", "-r 25/1", "-enc_time_base 1/25", "-nostdin", "-loglevel error", "-hide_banner"} {
		if !strings.Contains(args, want) {
			t.Errorf("encoder command %q lacks %q", args, want)
		}
	}
}

func TestMuxerFor(t *testing.T) {
	for in, want := range map[string]string{"a.mp4": "mp4", "a.MP4.tmp": "mp4", "x/y.mkv.part": "matroska", "a.mov": "mov", "a.webm": "webm", "a.xyz": ""} {
		if got := muxerFor(in); got != want {
			t.Errorf("muxerFor(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEncoderErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := OpenEncoder(ctx, filepath.Join(dir, "odd.mp4"), EncodeOptions{Width: 33, Height: 20, FPS: Rational{25, 1}, PixFmt: "yuv420p"}); err == nil || !strings.Contains(err.Error(), "odd frame size (33x20)") {
		t.Errorf("odd size with yuv420p asked for: %v", err)
	}
	// An encoder ffmpeg does not have: the error names the file and carries ffmpeg's reason.
	out := filepath.Join(dir, "bad.mp4")
	e, err := OpenEncoder(ctx, out, EncodeOptions{Encoder: "no_such_encoder", Width: 64, Height: 48, FPS: Rational{25, 1}})
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 64*48*3)
	for i := 0; i < 100 && err == nil; i++ {
		err = e.Write(frame)
	}
	if err == nil {
		err = e.Close()
	}
	if err == nil || !strings.Contains(err.Error(), out) || !strings.Contains(err.Error(), "no_such_encoder") || strings.Contains(err.Error(), "\n") {
		t.Errorf("unknown encoder: %v", err)
	}
	if err := e.Write(frame[:10]); err == nil {
		t.Error("short frame accepted")
	}
}

// Join keeps the target's audio for the frames the video covers (a trimmed range too), and
// copies the video: the output's frames are the segment's.
func TestJoinKeepsAudioOfSpan(t *testing.T) {
	testenv.Full(t, "encodes and joins clips with audio")
	src := clip(t, "bf.mp4")
	info := probe(t, src)
	frame := info.FPS.FrameTime(1)
	var keep []Carry
	for _, s := range info.Others {
		keep = append(keep, Carry{Stream: s})
	}
	for _, r := range [][2]int{{0, 123}, {31, 94}} {
		t.Run(fmt.Sprintf("%d-%d", r[0], r[1]), func(t *testing.T) {
			dir := t.TempDir()
			seg := filepath.Join(dir, "seg.nut")
			transcode(t, info, r[0], r[1], seg, EncodeOptions{Preset: "ultrafast", Quality: DefaultQuality})
			out := filepath.Join(dir, "out.mp4.tmp")
			times := info.Times.Slice(r[0], r[1], info.Frames)
			if err := Join(context.Background(), Mux{Times: times, Target: src, Span: FrameSpan(r[0], r[1], info.FPS), Keep: keep}, []JoinSegment{{Path: seg}}, out); err != nil {
				t.Fatal(err)
			}
			got := probe(t, out)
			n := r[1] - r[0]
			want := info.FPS.FrameTime(n)
			if !got.HasAudio || got.Frames != n || got.FPS != info.FPS || absDur(got.Duration-want) > frame {
				t.Errorf("joined: audio %v frames %d fps %v duration %v; want audio, %d frames, %v, %v ±1 frame",
					got.HasAudio, got.Frames, got.FPS, got.Duration, n, info.FPS, want)
			}
			if a := audioDuration(t, out); absDur(a-want) > frame {
				t.Errorf("audio lasts %v, want %v ±1 frame", a, want)
			}
			// The video is copied, not re-encoded: the same frames as the segment.
			if !slices.Equal(referenceHashes(t, out), referenceHashes(t, seg)) {
				t.Error("joining changed the video frames")
			}
		})
	}
}

// PCM audio cannot be copied into MP4: CheckOutput decides, before the first frame, that it
// goes as AAC, and Join writes it so; a target with nothing but its video gives a silent output.
func TestJoinAudioAsAACOrNone(t *testing.T) {
	testenv.Full(t, "encodes and joins clips with audio")
	src := clip(t, "pcm.mov")
	info := probe(t, src)
	dir := t.TempDir()
	seg := filepath.Join(dir, "seg.nut")
	transcode(t, info, 0, info.Frames, seg, EncodeOptions{Preset: "ultrafast", Quality: DefaultQuality})
	opt := EncodeOptions{Encoder: "libx264", Quality: DefaultQuality, Preset: "ultrafast", FPS: info.FPS, Width: info.Width, Height: info.Height}
	out := filepath.Join(dir, "out.mp4")
	carried, err := checkOutput(t, out, opt, src, AudioOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(carried.Keep) != 1 || !carried.Keep[0].AAC {
		t.Fatalf("PCM into .mp4: keeps %+v, want its audio as AAC", carried.Keep)
	}
	if err := Join(context.Background(), Mux{Times: info.Times, Target: src, Keep: carried.Keep}, []JoinSegment{{Path: seg}}, out); err != nil {
		t.Fatal(err)
	}
	if codec := ffprobeField(t, out, "a:0", "stream=codec_name"); codec != "aac" {
		t.Errorf("audio codec %q, want aac", codec)
	}

	silent := probe(t, clip(t, "vfr.mkv"))
	seg = filepath.Join(dir, "silent.nut")
	transcode(t, silent, 0, 10, seg, EncodeOptions{Encoder: "ffv1"})
	out = filepath.Join(dir, "silent.mkv")
	if len(silent.Others) != 0 {
		t.Fatalf("vfr.mkv has streams besides its video: %v", silent.Others)
	}
	if err := Join(context.Background(), Mux{Times: silent.Times.Slice(0, 10, silent.Frames), Target: silent.Path}, []JoinSegment{{Path: seg}}, out); err != nil {
		t.Fatal(err)
	}
	if got := probe(t, out); got.HasAudio || got.Frames != 10 {
		t.Errorf("joined without audio: %+v", got)
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func ffprobeField(t *testing.T, path, stream, entry string) string {
	t.Helper()
	// A test clip's answers are asked once a test binary (the clips never change).
	type answer struct {
		out string
		err error
	}
	a := onceForClip(path, "ffprobe "+stream+" "+entry, func() answer {
		out, err := runTool(context.Background(), testenv.Tool(t, "ffprobe"), "-v", "error", "-select_streams", stream,
			"-show_entries", entry, "-of", "csv=p=0", path)
		return answer{strings.TrimSpace(string(out)), err}
	})
	if a.err != nil {
		t.Fatal(a.err)
	}
	return a.out
}

func audioDuration(t *testing.T, path string) time.Duration {
	t.Helper()
	s := ffprobeField(t, path, "a:0", "stream=duration")
	return time.Duration(seconds(s) * float64(time.Second))
}

// Segments encoded separately and joined decode to the segments' frames in order; the segment
// list (a quote in a segment's name) is written in the scratch folder, not beside the output,
// and removed; a missing segment is named.
func TestJoinSegments(t *testing.T) {
	t.Parallel()
	info := probe(t, clip(t, "bf.mp4"))
	dir := t.TempDir()
	cuts := []int{0, 40, 41, 123}
	var segs []JoinSegment
	var paths []string
	var outs [][]string
	var opts [][]EncodeOptions
	for i := 0; i+1 < len(cuts); i++ {
		seg := filepath.Join(dir, fmt.Sprintf("chunk's %d.nut", i)) // a quote in the name
		outs, opts = append(outs, []string{seg}), append(opts, []EncodeOptions{{Preset: "ultrafast", Quality: DefaultQuality}})
		segs = append(segs, JoinSegment{Path: seg, Start: info.Times.At(cuts[i])})
		paths = append(paths, seg)
	}
	transcodeCuts(t, info, cuts, outs, opts)
	out := filepath.Join(dir, "joined.mp4.tmp")
	scratch := t.TempDir()
	if err := Join(context.Background(), Mux{Scratch: scratch, Times: info.Times, Target: info.Path}, segs, out); err != nil {
		t.Fatal(err)
	}
	// The segments' frames and the joined file's, from one ffmpeg.
	h := referenceHashesOf(t, append(paths, out)...)
	var want []string
	for _, seg := range h[:len(paths)] {
		want = append(want, seg...)
	}
	if got := h[len(paths)]; !slices.Equal(got, want) {
		t.Errorf("joined: %d frames, want %d; first difference at %d", len(got), len(want), firstDiff(got, want))
	}
	if got := probe(t, out); got.Frames != 123 || got.FPS != info.FPS {
		t.Errorf("joined: %d frames at %v, want 123 at %v", got.Frames, got.FPS, info.FPS)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), "concat-") {
			t.Errorf("segment list %s written beside the output", e.Name())
		}
	}
	if entries, _ := os.ReadDir(scratch); len(entries) > 0 {
		t.Errorf("segment list %s left in the scratch folder", entries[0].Name())
	}
	missing := []JoinSegment{{Path: filepath.Join(dir, "missing.nut")}}
	if err := Join(context.Background(), Mux{Scratch: scratch, Times: info.Times, Target: info.Path}, missing, out); err == nil || !strings.Contains(err.Error(), "missing.nut") {
		t.Errorf("missing segment: %v", err)
	}
}

// ReadImage loads a target and names a missing one.
func TestReadImage(t *testing.T) {
	img, err := ReadImage(testenv.Sample(t, "astronaut.png"))
	if err != nil || img.W != 512 || img.H != 512 {
		t.Fatalf("astronaut.png: %v, %v", img, err)
	}
	if _, err := ReadImage(filepath.Join(t.TempDir(), "none.png")); err == nil || !strings.Contains(err.Error(), "none.png") {
		t.Errorf("missing image: %v", err)
	}
}

// The per-frame calls allocate nothing: they run once per frame for hours.
func TestNoAllocsPerFrame(t *testing.T) {
	info := probe(t, clip(t, "bf.mp4")) // 123 frames, the other tests' clip: enough for 1+100
	ctx := context.Background()
	d, err := OpenDecoder(ctx, info, 0, info.Frames)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	buf := make([]byte, info.FrameSize())
	if n := testing.AllocsPerRun(100, func() {
		if err := d.Next(buf); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Decoder.Next: %v allocations per frame", n)
	}
	e, err := OpenEncoder(ctx, filepath.Join(t.TempDir(), "a.mkv"), EncodeOptions{Encoder: "ffv1", Width: info.Width, Height: info.Height, FPS: info.FPS})
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if err := e.Write(buf); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Encoder.Write: %v allocations per frame", n)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// An image target goes through the same decoder: one frame, the same pixels as raster.Load.
func TestDecodeImage(t *testing.T) {
	t.Parallel()
	path := testenv.Sample(t, "astronaut.png")
	info := probe(t, path)
	d, err := OpenDecoder(context.Background(), info, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	buf := make([]byte, info.FrameSize())
	if err := d.Next(buf); err != nil {
		t.Fatal(err)
	}
	if err := d.Next(buf[:0:0]); err == nil {
		t.Fatal("a short buffer was accepted")
	}
	want, err := raster.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(buf, want.Bytes()) {
		t.Error("decoded PNG differs from raster.Load")
	}
}

// The writer is FaceFusion's (ffmpeg.create_video_writer): frames through its bt709 colour
// filter, then its -s up-scale, give the very bytes its own command line gives its bgr24 frames
// (rawvideo rgb24, 64x48 frames to 96x72; without the filter a few % of the pixels differ by a
// level).
func TestEncodeIsFaceFusionsWriter(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := func(pixfmt string) []byte {
		return ffmpegRun(t, "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25", "-frames:v", "3", "-pix_fmt", pixfmt, "-f", "rawvideo", "-")
	}
	frames := src("rgb24")
	bgr := filepath.Join(dir, "in.bgr")
	if err := os.WriteFile(bgr, src("bgr24"), 0o644); err != nil {
		t.Fatal(err)
	}
	ff := filepath.Join(dir, "ff.mov")
	ffmpegRun(t, "-f", "rawvideo", "-pix_fmt", "bgr24", "-s", "64x48", "-r", "25", "-i", bgr, "-s", "96x72", "-c:v", "rawvideo",
		"-vf", "fps=25,scale=out_color_matrix=bt709:out_range=tv,setparams=colorspace=bt709:color_primaries=bt709:color_trc=bt709",
		"-pix_fmt", "rgb24", ff)
	ours := filepath.Join(dir, "ours.mov")
	e, err := OpenEncoder(context.Background(), ours, EncodeOptions{Encoder: "rawvideo", FPS: Rational{25, 1}, Width: 96, Height: 72, FrameWidth: 64, FrameHeight: 48})
	if err != nil {
		t.Fatal(err)
	}
	for f := range 3 {
		if err := e.Write(frames[f*64*48*3:][:64*48*3]); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	want, got := referenceHashes(t, ff), referenceHashes(t, ours)
	if len(want) != 3 || !slices.Equal(got, want) {
		t.Errorf("up-scaled rawvideo: %d frames, first difference from FaceFusion's writer at %d", len(got), firstDiff(got, want))
	}
}
