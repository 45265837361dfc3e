package video

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/mp4"
)

// Span is a time range of a media file; End 0 means to its end. Timecode is the file's SMPTE
// timecode at Start ("": none), which the output's first frame takes, counting Rate frames a
// second (the file's nominal rate). Trim marks a span that is less than the whole video: text
// subtitles' cues are then cut to it (cutCues) rather than copied, which reads the file again.
type Span struct {
	Start, End time.Duration
	Timecode   string   `json:",omitempty"`
	Rate       Rational `json:",omitempty"`
	Trim       bool     `json:",omitempty"`
}

// FrameSpan is the time range of frames [start, end) at rate fps.
func FrameSpan(start, end int, fps Rational) Span {
	return Span{Start: fps.FrameTime(start), End: fps.FrameTime(end)}
}

func secondsArg(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 6, 64) }

// containerRefusedCodec: ffmpeg's words when out's container cannot hold a stream's codec
// (PCM in MP4, say): CheckOutput then tries that audio as AAC.
func containerRefusedCodec(err error) bool {
	s := err.Error()
	return strings.Contains(s, "codec not currently supported in container") ||
		strings.Contains(s, "Could not find tag for codec")
}

// Carry is one of the target's other streams as the output keeps it: stream copy, except
// audio that is re-encoded (AudioOptions) or that the container holds only as AAC.
type Carry struct {
	Stream
	AAC bool `json:",omitempty"`
	// Text is the text-subtitle encoder a subtitle the container cannot hold as it is goes in as
	// (mov_text in MP4, srt in Matroska, webvtt in WebM): the same cues, in the container's
	// own text format. "": copied.
	Text string `json:",omitempty"`
	// cues is the file a text subtitle's cues were cut into for one join (withCues).
	cues string
}

// textSubtitles are the text-subtitle codecs one can be converted into another from; bitmap
// subtitles (DVD, PGS) cannot become text.
var textSubtitles = map[string]bool{"subrip": true, "srt": true, "ass": true, "ssa": true, "mov_text": true, "webvtt": true, "text": true}

// textSubtitleEncoder is the text-subtitle encoder out's container holds, or "".
func textSubtitleEncoder(out string) string {
	switch muxerFor(out) {
	case "mp4", "mov":
		return "mov_text"
	case "matroska":
		return "srt"
	case "webm":
		return "webvtt"
	}
	return ""
}

// Dropped is a stream of the target the output cannot hold, and why.
type Dropped struct {
	Stream
	Why string
}

// Carried is what the output keeps of the target's streams besides the video, decided before
// the first frame by CheckOutput.
type Carried struct {
	Keep []Carry   `json:",omitempty"`
	Drop []Dropped `json:",omitempty"`
}

// Note is the one log line that names the streams out leaves out, "" when it keeps them all.
func (c Carried) Note(out string) string {
	if len(c.Drop) == 0 {
		return ""
	}
	parts := make([]string, len(c.Drop))
	for i, d := range c.Drop {
		parts[i] = d.Stream.String() + " (" + d.Why + ")"
	}
	line := fmt.Sprintf("the output %s leaves out %d of the target's streams: %s", filepath.Base(out), len(c.Drop), strings.Join(parts, ", "))
	if m := muxerFor(out); m != "matroska" && m != "webm" {
		line += "; a .mkv output holds more kinds of stream"
	}
	return line
}

// JoinSegment is one encoded segment and the output time of its first frame.
type JoinSegment struct {
	Path  string
	Start int64 // in the output timeline's ticks
}

// Mux is what a join muxes beside the segments' video, the same for the serial join (Join) and
// the parallel join's side file (WriteSide): the streams Keep of Target over Span (stream copy,
// or the Audio options), with the target's global metadata and chapters (Target "": none), on
// the output's timeline Times. Scratch is the node-local folder of the join's own temp files
// ("": the system's), never the shared file system.
type Mux struct {
	Scratch string
	Times   Timeline
	Target  string
	Span    Span
	Keep    []Carry
	Audio   AudioOptions
}

// Join writes out in one ffmpeg run: the segments, in order, joined by the concat demuxer with
// stream copy, and what m muxes beside them.
// m.Times is the output's timeline: each segment's duration is given to the concat demuxer from
// it, so every frame keeps its time exactly (the demuxer counts in microseconds; a segment's
// offset is within one of the exact time, and each frame's time rounds back to its tick for
// any time base coarser than 1/500000 s). The segment list is a temp file in m.Scratch.
func Join(ctx context.Context, m Mux, segs []JoinSegment, out string) error {
	return join(ctx, m, segs, out, nil)
}

// JoinFile is Join into the file out the caller created (its name's extension chooses the
// container): ffmpeg writes through the descriptor and never opens the name, which another
// user who can write into its folder could have replaced with a link meanwhile. ffmpeg gets
// a name with the output's extension, so that it picks the container it would for the output
// (any extension it knows, not only muxerFor's): a link to the descriptor, in a folder of
// its own in scratch that only this user can write into.
func JoinFile(ctx context.Context, m Mux, segs []JoinSegment, out *os.File) error {
	return join(ctx, m, segs, out.Name(), out)
}

func join(ctx context.Context, m Mux, segs []JoinSegment, out string, file *os.File) error {
	if len(segs) == 0 {
		return fmt.Errorf("video: joining into %s: no segments given", out)
	}
	list, cleanup, err := writeConcatList(m.Scratch, segs, m.Times, m.Times.End)
	if err != nil {
		return fmt.Errorf("video: joining into %s: %w", out, err)
	}
	defer cleanup()
	keep, done, err := withCues(ctx, m.Scratch, m.Target, m.Span, m.Keep)
	defer done()
	if err != nil {
		return fmt.Errorf("video: joining into %s: %w", out, err)
	}
	m.Keep = keep
	args := joinArgs(list, asTheyAre(segs), m, out)
	if file != nil {
		dir, err := os.MkdirTemp(m.Scratch, "facefusion-join-") // rwx------: no one else's links
		if err != nil {
			return fmt.Errorf("video: joining into %s: %w", out, err)
		}
		name := filepath.Join(dir, "output"+filepath.Ext(out))
		defer func() {
			os.Remove(name)
			os.Remove(dir)
		}()
		if err := os.Symlink(fdOutput, name); err != nil {
			return fmt.Errorf("video: joining into %s: %w", out, err)
		}
		args[len(args)-1] = mediaPath(name) // outputArgs' last: the file written
	}
	cmd, tail := command(ctx, FFmpeg, args)
	if file != nil {
		cmd.ExtraFiles = []*os.File{file}
	}
	err = cmd.Run()
	if err != nil {
		err = exitError(ctx, FFmpeg, err, tail)
	} else if said := tail.String(); writeFailed(said) {
		err = fault.RoomSaid(fmt.Errorf("ffmpeg exited 0 but did not write it all: %s", said), said)
	}
	if err != nil {
		return fmt.Errorf("video: joining %d segment(s) and %d stream(s) of %s into %s: %w", len(segs), len(keep), m.Target, out, err)
	}
	return nil
}

// writeConcatList writes the concat demuxer's list of segs into a temp file in scratch and
// returns its path and what removes it: each segment with its duration from times (the last
// one's ending at end), so that every frame keeps its time exactly (see Join).
//
// The list is one line a segment, and its quoting holds every byte but a line break: a segment
// whose path has one (a job folder named after an output named after a target "a\nb.mkv") is
// listed as a link to it in a folder of the program's own, made with a name no one can predict.
func writeConcatList(scratch string, segs []JoinSegment, times Timeline, end int64) (string, func(), error) {
	var links string  // the folder of links, once made
	var made []string // the links made in it: removed one by one, then the folder
	cleanup := func() {
		for _, l := range made {
			os.Remove(l)
		}
		if links != "" {
			os.Remove(links)
		}
	}
	list := strings.Builder{}
	list.WriteString("ffconcat version 1.0\n")
	for i, s := range segs {
		abs, err := filepath.Abs(s.Path)
		if err != nil {
			cleanup()
			return "", nil, err
		}
		if _, err := os.Stat(abs); err != nil {
			cleanup()
			return "", nil, fmt.Errorf("segment %s is missing: rerun to produce it", abs)
		}
		if strings.ContainsAny(abs, "\n\r") {
			if links == "" {
				if links, err = os.MkdirTemp(scratch, "facefusion-concat-*"); err != nil {
					return "", nil, fmt.Errorf("cannot write the segment list: %v", err)
				}
			}
			link := filepath.Join(links, fmt.Sprintf("%06d%s", i, filepath.Ext(abs)))
			if err := os.Symlink(abs, link); err != nil {
				cleanup()
				return "", nil, fmt.Errorf("cannot write the segment list: %v", err)
			}
			made = append(made, link)
			abs = link
		}
		next := end
		if i+1 < len(segs) {
			next = segs[i+1].Start
		}
		us := times.Micros(next) - times.Micros(s.Start)
		// The list's quoting: inside '…', a quote is written '\''.
		fmt.Fprintf(&list, "file '%s'\nduration %d.%06d\n", strings.ReplaceAll(abs, "'", `'\''`), us/1_000_000, us%1_000_000)
	}
	f, err := os.CreateTemp(scratch, "facefusion-concat-*.txt")
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("cannot write the segment list: %v", err)
	}
	_, err = f.WriteString(list.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		cleanup()
		return "", nil, fmt.Errorf("cannot write the segment list: %v", err)
	}
	return f.Name(), func() { os.Remove(f.Name()); cleanup() }, nil
}

// withCues is keep with the cues of each text subtitle cut to span (cutCues) into a file in dir;
// done removes those files.
func withCues(ctx context.Context, dir, target string, span Span, keep []Carry) ([]Carry, func(), error) {
	var files []string
	done := func() {
		for _, f := range files {
			os.Remove(f)
		}
	}
	cut := make([]Carry, len(keep))
	for i, c := range keep {
		if span.Trim && cutsCues(c) {
			f, err := cutCues(ctx, dir, target, c, span)
			if err != nil {
				return nil, done, err
			}
			files = append(files, f)
			c.cues = f
		}
		cut[i] = c
	}
	return cut, done, nil
}

// asTheyAre reports whether segs are MP4 segments (MP4SegmentExt) of one sample entry, whose
// packets the concat demuxer must pass as they are: by default it puts the parameter sets into
// every H.264 keyframe (h264_mp4toannexb), which the parallel join's copy of the same segments
// does not. Segments whose codec configurations differ keep that, so that each decodes with its
// own.
func asTheyAre(segs []JoinSegment) bool {
	var first []byte
	for i, s := range segs {
		if filepath.Ext(s.Path) != MP4SegmentExt {
			return false
		}
		stsd, err := sampleEntry(s.Path)
		if err != nil || i > 0 && !bytes.Equal(stsd, first) {
			return false
		}
		first = stsd
	}
	return len(segs) > 0
}

// sampleEntry is the video sample entry (stsd, bit rates left out) of the MP4 file path.
func sampleEntry(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	mf, err := mp4.ReadIndex(f, st.Size())
	if err != nil {
		return nil, err
	}
	t := mf.Video()
	if t == nil {
		return nil, fmt.Errorf("%s has no video track", path)
	}
	return mp4.WithoutBitrate(t.Stsd)
}

func joinArgs(list string, asIs bool, m Mux, out string) []string {
	input := []string{"-f", "concat", "-safe", "0", "-i", mediaPath(list)}
	if asIs {
		input = append([]string{"-auto_convert", "0"}, input...)
	}
	args := muxArgs(input, []string{"-c:0", "copy"}, m, out)
	return append(args, outputArgs(out, true)...)
}

// muxArgs is an ffmpeg command line up to its output's options: input 0 (video, its first
// stream written with the options video) and what m muxes beside it, as Join writes them (m's
// text subtitles already cut by withCues); the parallel join's side file (WriteSide) is the
// same command with a placeholder for the video.
func muxArgs(input, video []string, m Mux, out string) []string {
	times, target, span, keep, audio := m.Times, m.Target, m.Span, m.Keep, m.Audio
	args := ffmpegArgs(input...)
	if target != "" {
		if span.Start > 0 {
			args = append(args, "-ss", secondsArg(span.Start))
		}
		if span.End > span.Start {
			args = append(args, "-t", secondsArg(span.End-span.Start))
		}
		args = append(args, "-i", mediaPath(target))
	}
	cues := 0 // text subtitles come from their cut cues, inputs 2, 3, …
	for _, c := range keep {
		if c.cues != "" {
			args = append(args, "-f", cueFormat(c), "-i", mediaPath(c.cues))
			cues++
		}
	}
	voice := -1 // the source audio's input, -1: none
	if audio.Source != "" {
		// From its start, cut to the video's length: replace_audio's -t of the merged video's
		// duration, given to the input so that only the audio is cut.
		voice = 1 + cues
		if target != "" {
			voice++
		}
		length := time.Duration(times.Micros(times.End)) * time.Microsecond
		args = append(args, "-t", secondsArg(length), "-i", mediaPath(audio.Source))
	}
	args = append(args, "-map", "0:v:0")
	if target != "" {
		// The target's title, tags and chapters (cut to the span), not the segments'.
		args = append(args, "-map_metadata", "1", "-map_chapters", "1")
	}
	if span.Timecode != "" {
		// The target's timecode at the first output frame: a new tmcd track in MOV and MP4, a
		// tag elsewhere.
		args = append(args, "-metadata", "timecode="+span.Timecode)
	}
	in := 2
	for i, c := range keep {
		if c.cues != "" {
			// A stream takes its disposition from the input it is mapped from: the cut cues'
			// file has none, so the target stream's (default, forced, …) is given.
			disp := c.Disposition
			if disp == "" {
				disp = "0"
			}
			args = append(args, "-map", strconv.Itoa(in)+":0", "-disposition:"+strconv.Itoa(i+1), disp)
			in++
		} else {
			args = append(args, "-map", "1:"+strconv.Itoa(c.Index))
		}
		if cues > 0 {
			// Naming one stream's metadata source stops ffmpeg copying the others': name all.
			args = append(args, "-map_metadata:s:"+strconv.Itoa(i+1), "1:s:"+strconv.Itoa(c.Index))
		}
	}
	if voice >= 0 {
		args = append(args, "-map", strconv.Itoa(voice)+":a:0")
	}
	if cues > 0 {
		args = append(args, "-map_metadata:s:0", "0:s:0")
	}
	args = append(args, video...)
	if !audio.Copies() {
		args = append(args, audio.args()...)
	}
	for i, c := range keep {
		o := "-c:" + strconv.Itoa(i+1)
		switch {
		case c.Type == "audio" && !audio.Copies():
		case c.AAC:
			args = append(args, o, "aac")
		case c.cues != "":
			args = append(args, o, cueEncoder(c))
		case c.Text != "":
			args = append(args, o, c.Text)
		default:
			args = append(args, o, "copy")
			if m := muxerFor(out); span.Start > 0 && m != "mp4" && m != "mov" {
				// A copied stream starts at the packet before the seek point, at a negative
				// time, which Matroska and the others shift the whole file by: leave it out (MOV
				// and MP4 hide it precisely in an edit list).
				args = append(args, "-copypriorss:"+strconv.Itoa(i+1), "0")
			}
		}
	}
	if m := muxerFor(out); (m == "mp4" || m == "mov") && times.TimeBase.Num == 1 {
		// The track's clock is the target's time base (MOV doubles one under 10000 otherwise).
		args = append(args, "-video_track_timescale", strconv.Itoa(times.TimeBase.Den))
	}
	// Matroska writes random segment and track UIDs unless bitexact: without it two runs of one
	// job, or one job on 1 and 3 ranks, give other bytes for the same streams.
	return append(args, "-fflags", "+bitexact")
}
