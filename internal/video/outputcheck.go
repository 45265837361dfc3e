package video

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// OutputProblem is the part of a job's output settings that ffmpeg refused.
type OutputProblem int

const (
	UnknownEncoder      OutputProblem = iota + 1 // this ffmpeg has no such encoder
	BadPreset                                    // the encoder has no such preset
	EncoderRefused                               // the encoder refused its settings or the frame size
	NoContainer                                  // the output's extension names no container ffmpeg writes
	ImageContainer                               // the extension names an image format: one frame, not a video
	CodecNotInContainer                          // the container cannot hold the encoder's video
	AudioNotInContainer                          // the container cannot hold the target's audio, copied or as AAC, or the audio encoder's
	UnknownAudioEncoder                          // this ffmpeg has no such audio encoder
	NotReadable                                  // ffmpeg wrote it, but what it wrote does not read back as the video
)

// OutputError says which output setting ffmpeg refused, with ffmpeg's own words in Detail;
// the caller names the flag.
type OutputError struct {
	Problem OutputProblem
	Detail  string
}

func (e *OutputError) Error() string { return e.Detail }

// checkFrames is how many black frames CheckOutput writes: enough for ffprobe to read back an
// MPEG-TS file (two are not).
const checkFrames = 8

// CheckOutput runs the path a job's frames take to out, on checkFrames black frames of the
// job's size, in a temp folder it makes in scratch ("": the system's, $TMPDIR) and removes: the
// segment encoder with opt (OpenEncoder, the same command line as every segment), then the join
// into a file with out's extension, with the target's other streams (its audio copied or
// re-encoded as audio says) over its first frames (Join, the same command line as the job's),
// and reads the result back. ffmpeg refuses a bad encoder, preset, container or codec only when
// it writes, which in a job is after the last frame; here it is before the first. A refusal
// is an *OutputError.
//
// It also decides which of the target's other streams (others) the output keeps: all of them
// when the container takes them (one ffmpeg run, the usual case); otherwise each is tried alone,
// audio that cannot be copied is tried as AAC, a text subtitle in the container's own text format,
// and what the container still refuses is
// dropped, named in Carried.Drop. The first audio stream is never dropped: a container that
// holds it neither copied nor as AAC (nor as the audio encoder's) is refused.
func CheckOutput(ctx context.Context, scratch, out string, opt EncodeOptions, target string, others []Stream, audio AudioOptions) (Carried, error) {
	var carried Carried
	dir, err := os.MkdirTemp(scratch, "facefusion-output-check-")
	if err != nil {
		return carried, fmt.Errorf("video: checking output %s: %v", out, err)
	}
	// The container the job's segments are in (opt.Times' time base alone may be given).
	seg := filepath.Join(dir, "segment"+SegmentExtFor(out, opt.Encoder, opt.Times))
	final := filepath.Join(dir, "output"+filepath.Ext(out))
	defer func() { // the files this function writes, then its folder if nothing else is there
		os.Remove(seg)
		os.Remove(final)
		os.Remove(dir)
	}()
	opt.Times, opt.First = Timeline{}, 0 // black frames, evenly spaced at the output's rate
	if err := encodeBlack(ctx, seg, opt, checkFrames); err != nil {
		return carried, refusal(ctx, err, dir, encoderProblem)
	}
	// An encoder ffmpeg does not have that is the audio's is the audio encoder's refusal,
	// whichever join ffmpeg said it in: -c:a is on every join's command line, the video's alone
	// too, and an ffmpeg may look its encoder up with no audio stream mapped.
	audioFirst := func(classify func(string) OutputProblem) func(string) OutputProblem {
		return func(msg string) OutputProblem {
			if !audio.Copies() && strings.Contains(msg, "Unknown encoder '"+audio.Encoder+"'") {
				return UnknownAudioEncoder
			}
			return classify(msg)
		}
	}
	times := evenTimes(opt.FPS, checkFrames)
	segs := []JoinSegment{{Path: seg}}
	// The streams of the last join when it succeeded ("" when it failed): what final holds. A
	// join of the same streams again would be the same ffmpeg run with the same outcome (a
	// process start, 0.1–0.3 CPU-s, and the join).
	joined := ""
	join := func(keep []Carry) error {
		os.Remove(final)
		span := FrameSpan(0, checkFrames, opt.FPS)
		span.Trim = true // a trim's way with text subtitles (cutCues), the one that can fail
		err := Join(ctx, Mux{Scratch: dir, Times: times, Target: target, Span: span, Keep: keep, Audio: audio}, segs, final)
		joined = ""
		if err == nil {
			joined = carriesKey(keep)
		}
		return err
	}
	if audio.Source != "" || audio.None {
		others = withoutAudio(others)
	}
	candidates, firstAudio := carryCandidates(others, &carried)
	err = join(candidates)
	if err != nil && ctx.Err() == nil && len(candidates) > 0 {
		// Which stream did the container refuse? The video alone tells whether it was the video
		// (with no other stream, the join that failed was the video's alone), then each stream
		// alone.
		if verr := join(nil); verr != nil {
			return carried, refusal(ctx, verr, dir, audioFirst(containerProblem))
		}
		var keep []Carry
		for _, c := range candidates {
			c, cerr := joinAlone(ctx, c, out, audio, join)
			switch {
			case ctx.Err() != nil:
				return carried, ctx.Err()
			case cerr == nil:
				keep = append(keep, c)
			case c.Index == firstAudio:
				return carried, refusal(ctx, cerr, dir, audioProblem)
			default:
				carried.Drop = append(carried.Drop, Dropped{c.Stream, ffmpegWords(cerr, dir)})
			}
		}
		candidates = keep
		if carriesKey(candidates) != joined { // else the last trial joined just these
			err = join(candidates)
		} else {
			err = nil
		}
	}
	if err != nil {
		return carried, refusal(ctx, err, dir, audioFirst(containerProblem))
	}
	carried.Keep = candidates
	return carried, readsBack(ctx, final, opt, &carried, firstAudio >= 0 || audio.Source != "", audio.codec())
}

// CheckSourceAudio checks that path, a source audio that replaces the target's
// (AudioOptions.Source), has an audio stream ffprobe reads: one that does not is refused as
// itself, before the output check's join would fail on it as if the container were at fault.
func CheckSourceAudio(ctx context.Context, path string) error {
	out, err := runTool(ctx, FFprobe, "-v", "error", "-select_streams", "a", "-show_entries", "stream=index", "-of", "csv=p=0", mediaPath(path))
	if err != nil {
		return fmt.Errorf("video: reading the audio of %s: %w", path, err)
	}
	if len(strings.TrimSpace(string(out))) == 0 {
		return fmt.Errorf("video: %s has no audio stream", path)
	}
	return nil
}

// withoutAudio is others but their audio streams: a source audio replaces them
// (AudioOptions.Source: the output holds the source's audio alone, as FaceFusion's does), or
// the output has none (AudioOptions.None).
func withoutAudio(others []Stream) []Stream {
	var kept []Stream
	for _, s := range others {
		if s.Type != "audio" {
			kept = append(kept, s)
		}
	}
	return kept
}

// carryCandidates lists the target's other streams a join may carry, and where the first
// audio stream is among them (its Index, -1 with none); another video stream is never
// carried: it goes to carried.Drop.
func carryCandidates(others []Stream, carried *Carried) (candidates []Carry, firstAudio int) {
	firstAudio = -1
	for _, s := range others {
		if s.Type == "video" && !s.AttachedPic {
			carried.Drop = append(carried.Drop, Dropped{s, "only the first video stream is processed"})
			continue
		}
		if s.Type == "audio" && firstAudio < 0 {
			firstAudio = s.Index
		}
		candidates = append(candidates, Carry{Stream: s})
	}
	return candidates, firstAudio
}

// joinAlone tries a join of the video with c alone; where the container refuses it, audio
// that would be copied is tried as AAC and a text subtitle in out's own text format. It
// returns c as it was carried, or the last join's error.
func joinAlone(ctx context.Context, c Carry, out string, audio AudioOptions, join func([]Carry) error) (Carry, error) {
	cerr := join([]Carry{c})
	if cerr != nil && ctx.Err() == nil && c.Type == "audio" && audio.Copies() && containerRefusedCodec(cerr) {
		c.AAC = true // ffmpeg's AAC at its own default bit rate: no audio setting asked for another
		cerr = join([]Carry{c})
	}
	if enc := textSubtitleEncoder(out); cerr != nil && ctx.Err() == nil && c.Type == "subtitle" && textSubtitles[c.Codec] && enc != "" {
		c.Text = enc // the same cues in the container's text format
		if cerr = join([]Carry{c}); cerr != nil {
			c.Text = ""
		}
	}
	return c, cerr
}

// carriesKey names the streams a join carries and how, for telling two joins apart.
func carriesKey(keep []Carry) string { return fmt.Sprintf("joined %+v", keep) }

// readsBack checks that what the join wrote reads back as the job's video and the streams
// carried (its first audio of audioCodec when that is not ""): some containers take any stream
// without complaint and store what no reader can use (ffv1 in MPEG-TS becomes a data stream, raw
// .yuv has no frame size, FLAC in MPEG-TS is dropped), which a job would find only after its last
// frame, or never. A carried stream that does not read back is moved to carried.Drop; the first
// audio stream must.
func readsBack(ctx context.Context, path string, opt EncodeOptions, carried *Carried, audio bool, audioCodec string) error {
	info, err := probeFile(ctx, path, false) // the streams are enough: no frame count
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return &OutputError{Problem: NotReadable, Detail: "what it writes does not read back as a video (ffprobe finds no playable video stream)"}
	case info.Width != opt.Width || info.Height != opt.Height:
		return &OutputError{Problem: NotReadable, Detail: fmt.Sprintf("it reads back as %dx%d frames, not %dx%d", info.Width, info.Height, opt.Width, opt.Height)}
	case audio && !info.HasAudio:
		return &OutputError{Problem: AudioNotInContainer, Detail: "the audio was dropped"}
	case audio && audioCodec != "" && info.AudioCodec != audioCodec:
		return &OutputError{Problem: AudioNotInContainer, Detail: fmt.Sprintf("the audio reads back as %q, not %s", info.AudioCodec, audioCodec)}
	}
	// The streams read back in the order they were mapped; one the muxer left out is missing.
	back, keep := info.Others, carried.Keep[:0:0]
	for _, c := range carried.Keep {
		if len(back) > 0 && back[0].Type == c.Type {
			back = back[1:]
			keep = append(keep, c)
			continue
		}
		carried.Drop = append(carried.Drop, Dropped{c.Stream, "the container takes it but does not store it readably"})
	}
	carried.Keep = keep
	return nil
}

// encodeBlack writes n black frames through OpenEncoder.
func encodeBlack(ctx context.Context, path string, opt EncodeOptions, n int) error {
	enc, err := OpenEncoder(ctx, path, opt)
	if err != nil {
		return err
	}
	frame := make([]byte, opt.FrameSize())
	for i := 0; i < n; i++ {
		if err := enc.Write(frame); err != nil {
			return err
		}
	}
	return enc.Close()
}

// refusal classifies a failed step; a cancelled context is not a refusal.
func refusal(ctx context.Context, err error, dir string, classify func(string) OutputProblem) error {
	if ctx.Err() != nil {
		return err
	}
	return &OutputError{Problem: classify(err.Error()), Detail: ffmpegWords(err, dir)}
}

func encoderProblem(msg string) OutputProblem {
	switch {
	case strings.Contains(msg, "Unknown encoder"):
		return UnknownEncoder
	case strings.Contains(msg, "invalid preset"), strings.Contains(msg, "Error setting preset"):
		return BadPreset
	}
	return EncoderRefused
}

func audioProblem(msg string) OutputProblem {
	if strings.Contains(msg, "Unknown encoder") {
		return UnknownAudioEncoder
	}
	return AudioNotInContainer
}

func containerProblem(msg string) OutputProblem {
	switch {
	case strings.Contains(msg, "Unable to find a suitable output format"), strings.Contains(msg, "Unable to choose an output format"):
		return NoContainer
	case strings.Contains(msg, "Cannot write more than one file with the same name"):
		return ImageContainer // image2: one file per frame
	}
	return CodecNotInContainer
}

// ffmpegWords is the first line ffmpeg said, without our "video: muxing …: ffmpeg failed (exit
// status 1)" around it and without the temp folder's name: it is gone when anyone reads it.
func ffmpegWords(err error, dir string) string {
	s := err.Error()
	if i := strings.Index(s, "ffmpeg failed ("); i >= 0 {
		if _, after, ok := strings.Cut(s[i:], "): "); ok {
			s = after
		}
	}
	s, _, _ = strings.Cut(s, " | ") // the first line is the specific one; the rest say "Invalid argument"
	s = muxerTag.ReplaceAllString(s, "")
	return strings.ReplaceAll(s, dir+string(filepath.Separator), "")
}

// muxerTag is ffmpeg's "[mp4 @ 0x55c1f9e79b80] " before a line: a pointer, no help to a user.
var muxerTag = regexp.MustCompile(`\[[\w.-]+ @ 0x[0-9a-f]+\] `)
