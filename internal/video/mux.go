package video

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Span is a time range of a media file; End 0 means to its end.
type Span struct {
	Start, End time.Duration
}

// FrameSpan is the time range of frames [start, end) at rate fps.
func FrameSpan(start, end int, fps Rational) Span {
	return Span{Start: fps.FrameTime(start), End: fps.FrameTime(end)}
}

func secondsArg(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 6, 64) }

// muxArgs stream-copies the first video stream of video into out with the first audio stream
// (if any) of audioSource within span, with the audio options audioArgs (-c:a copy keeps it
// bit-exact).
func muxArgs(video, audioSource string, span Span, out string, audioArgs []string) []string {
	args := ffmpegArgs("-i", mediaPath(video))
	if span.Start > 0 {
		args = append(args, "-ss", secondsArg(span.Start))
	}
	if span.End > span.Start {
		args = append(args, "-t", secondsArg(span.End-span.Start))
	}
	args = append(args, "-i", mediaPath(audioSource),
		// "?": a target without audio gives a silent output, not an error.
		"-map", "0:v:0", "-map", "1:a:0?",
		"-c:v", "copy")
	args = append(args, audioArgs...)
	return append(args, outputArgs(out, true)...)
}

// Mux writes out with the video of videoPath (stream copy) and the audio of audioSource over
// span, the time range the video covers in the source. The zero AudioOptions copy the audio;
// only if out's container cannot hold that codec (PCM in MP4, say) is it re-encoded to AAC.
// Re-encoded audio (audio.Encoder set) has no such fallback: CheckOutput refuses, before the
// first frame, an encoder the container cannot hold.
func Mux(ctx context.Context, videoPath, audioSource string, span Span, out string, audio AudioOptions) error {
	for _, p := range []string{videoPath, audioSource} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("video: muxing %s: input %s is missing: %v", out, p, err)
		}
	}
	_, err := runTool(ctx, FFmpeg, muxArgs(videoPath, audioSource, span, out, audio.args())...)
	if err != nil && ctx.Err() == nil && audio.Copies() && containerRefusedCodec(err) {
		// ffmpeg's AAC at its own default bit rate: no audio setting asked for another.
		_, err = runTool(ctx, FFmpeg, muxArgs(videoPath, audioSource, span, out, []string{"-c:a", "aac"})...)
	}
	if err != nil {
		return fmt.Errorf("video: muxing %s with the audio of %s: %w", out, audioSource, err)
	}
	return nil
}

func containerRefusedCodec(err error) bool {
	s := err.Error()
	return strings.Contains(s, "codec not currently supported in container") ||
		strings.Contains(s, "Could not find tag for codec")
}

// Concat joins segments, in order, into out with the concat demuxer and stream copy: no
// re-encoding, so the segments must share codec, size and rate (they come from one encoder
// configuration). The segment list is a temp file in scratch ("": the system's, $TMPDIR): node-
// local scratch, not the shared file system the segments and out are on.
func Concat(ctx context.Context, scratch string, segments []string, out string) error {
	if len(segments) == 0 {
		return fmt.Errorf("video: concatenating into %s: no segments given", out)
	}
	var list strings.Builder
	for _, s := range segments {
		abs, err := filepath.Abs(s)
		if err != nil {
			return fmt.Errorf("video: concatenating into %s: %v", out, err)
		}
		if _, err := os.Stat(abs); err != nil {
			return fmt.Errorf("video: concatenating into %s: segment %s is missing: rerun to produce it", out, abs)
		}
		// The list's quoting: inside '…', a quote is written '\''.
		list.WriteString("file '" + strings.ReplaceAll(abs, "'", `'\''`) + "'\n")
	}
	f, err := os.CreateTemp(scratch, "facefusion-concat-*.txt")
	if err != nil {
		return fmt.Errorf("video: concatenating into %s: cannot write the segment list: %v", out, err)
	}
	defer os.Remove(f.Name())
	_, err = f.WriteString(list.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("video: concatenating into %s: cannot write the segment list: %v", out, err)
	}
	args := ffmpegArgs("-f", "concat", "-safe", "0", "-i", mediaPath(f.Name()), "-map", "0", "-c", "copy")
	if _, err := runTool(ctx, FFmpeg, append(args, outputArgs(out, true)...)...); err != nil {
		return fmt.Errorf("video: concatenating %d segments into %s: %w", len(segments), out, err)
	}
	return nil
}
