package video

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Text subtitles are not stream-copied from a seek (-ss before the target): ffmpeg starts each
// stream at a packet boundary near the seek point, so a cue that began before the span's start
// is lost or kept at its old time, and one ending before it can come along. Instead the cues are
// read out (ffmpeg decodes any text subtitle into the same events), cut here to the span, and
// muxed from that file: each cue that overlaps the span is at its own time minus the span's
// start, clipped to the span, and none outside it is kept.

// cueLookback is how long before the span's start the cues are read from: a cue that began
// earlier and still shows at the start is missed (no subtitle lasts this long in practice), and
// a late span does not read the whole file.
const cueLookback = 60 * time.Second

// cueEncoders is the encoder a text subtitle codec is written back with.
var cueEncoders = map[string]string{"subrip": "srt", "srt": "srt", "ass": "ass", "ssa": "ssa", "mov_text": "mov_text", "webvtt": "webvtt", "text": "text"}

// cutsCues reports whether c's cues are cut to the span (cutCues) rather than stream-copied.
func cutsCues(c Carry) bool { return c.Type == "subtitle" && cueEncoders[c.Codec] != "" }

// ContentChecked reports whether CheckOutput's answer for a target with the streams others
// depends on what they hold, not only on their parameters (Stream.Params): a text subtitle is
// checked through the cue path (cutCues), which reads the target's own cues, so a pass for one
// target is no answer for another, and is not kept (RememberCheck) or shared for it.
func ContentChecked(others []Stream) bool {
	for _, s := range others {
		if cutsCues(Carry{Stream: s}) {
			return true
		}
	}
	return false
}

// cueFormat is the file format c's cues are read into: ASS for ASS and SSA (their styles),
// SubRip (millisecond times) for the others.
func cueFormat(c Carry) string {
	if c.Codec == "ass" || c.Codec == "ssa" {
		return "ass"
	}
	return "srt"
}

// cueEncoder is the encoder c's cut cues are written into the output with: its Text encoder
// when the container needs another format, else its own codec's.
func cueEncoder(c Carry) string {
	if c.Text != "" {
		return c.Text
	}
	return cueEncoders[c.Codec]
}

// cutCues writes the cues of target's subtitle stream c over span into a temp file in dir
// ("": the system's) and returns its path.
func cutCues(ctx context.Context, dir, target string, c Carry, span Span) (string, error) {
	from := max(0, span.Start-cueLookback)
	f := cueFormat(c)
	args := ffmpegArgs()
	if from > 0 {
		args = append(args, "-ss", secondsArg(from))
	}
	if span.End > span.Start {
		args = append(args, "-t", secondsArg(span.End-from))
	}
	args = append(args, "-i", mediaPath(target), "-map", "0:"+strconv.Itoa(c.Index), "-c:s", f, "-f", f, "pipe:1")
	out, err := runTool(ctx, FFmpeg, args...)
	if err != nil {
		return "", fmt.Errorf("reading the cues of subtitle stream #%d of %s: %w", c.Index, target, err)
	}
	win := Span{Start: span.Start - from}
	if span.End > span.Start {
		win.End = span.End - from
	}
	cut := clipSRT(out, win)
	if f == "ass" {
		cut = clipASS(out, win)
	}
	file, err := os.CreateTemp(dir, "facefusion-cues-*."+f)
	if err != nil {
		return "", fmt.Errorf("cannot write the cues of subtitle stream #%d: %v", c.Index, err)
	}
	_, err = file.Write(cut)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(file.Name())
		return "", fmt.Errorf("cannot write the cues of subtitle stream #%d: %v", c.Index, err)
	}
	return file.Name(), nil
}

// clipCue is a cue [start, end) seen through win (End 0: no end): its times from win's start,
// clipped to it, and whether any of it shows there.
func clipCue(start, end time.Duration, win Span) (time.Duration, time.Duration, bool) {
	if end <= win.Start || end <= start || (win.End > 0 && start >= win.End) {
		return 0, 0, false
	}
	if win.End > 0 {
		end = min(end, win.End)
	}
	return max(start, win.Start) - win.Start, end - win.Start, true
}

// clipSRT is the SubRip cues of data that show in win, renumbered, each clipped to win and
// timed from its start (clipCue); cues whose times do not read are left out.
func clipSRT(data []byte, win Span) []byte {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	var out bytes.Buffer
	n := 0
	for _, block := range strings.Split(text, "\n\n") {
		lines := strings.Split(strings.Trim(block, "\n"), "\n")
		at := -1
		for i, l := range lines {
			if strings.Contains(l, "-->") {
				at = i
				break
			}
		}
		if at < 0 {
			continue
		}
		a, b, _ := strings.Cut(lines[at], "-->")
		bf := strings.Fields(b)
		if len(bf) == 0 {
			continue
		}
		start, ok1 := srtTime(strings.TrimSpace(a))
		end, ok2 := srtTime(bf[0])
		if !ok1 || !ok2 {
			continue
		}
		s, e, ok := clipCue(start, end, win)
		if !ok {
			continue
		}
		n++
		fmt.Fprintf(&out, "%d\n%s --> %s\n%s\n\n", n, fmtSRTTime(s), fmtSRTTime(e), strings.Join(lines[at+1:], "\n"))
	}
	return out.Bytes()
}

// maxCueField bounds each field of a cue's time: a million hours is far past any subtitle and
// still inside a time.Duration, which a larger field would overflow into some other time.
const maxCueField = 1_000_000

// srtTime reads HH:MM:SS,mmm.
func srtTime(s string) (time.Duration, bool) {
	hms, ms, ok := strings.Cut(s, ",")
	if !ok {
		hms, ms, ok = strings.Cut(s, ".")
	}
	p := strings.Split(hms, ":")
	if !ok || len(p) != 3 || len(ms) != 3 {
		return 0, false
	}
	var v [4]int64
	for i, f := range append(p, ms) {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n < 0 || n >= maxCueField {
			return 0, false
		}
		v[i] = n
	}
	return time.Duration(((v[0]*60+v[1])*60+v[2])*1000+v[3]) * time.Millisecond, true
}

func fmtSRTTime(d time.Duration) string {
	ms := d.Milliseconds()
	return fmt.Sprintf("%02d:%02d:%02d,%03d", ms/3_600_000, ms/60_000%60, ms/1000%60, ms%1000)
}

// clipASS is an ASS file's header and the Dialogue events of data that show in win, each
// clipped to win and timed from its start (clipCue); other event lines are kept as they are.
func clipASS(data []byte, win Span) []byte {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	var out bytes.Buffer
	for _, l := range strings.SplitAfter(text, "\n") {
		body, ok := strings.CutPrefix(l, "Dialogue:")
		if !ok {
			out.WriteString(l)
			continue
		}
		f := strings.SplitN(body, ",", 4) // layer, start, end, the rest
		if len(f) < 4 {
			continue
		}
		start, ok1 := assTime(strings.TrimSpace(f[1]))
		end, ok2 := assTime(strings.TrimSpace(f[2]))
		if !ok1 || !ok2 {
			continue
		}
		s, e, ok := clipCue(start, end, win)
		if !ok {
			continue
		}
		fmt.Fprintf(&out, "Dialogue:%s,%s,%s,%s", f[0], fmtASSTime(s), fmtASSTime(e), f[3])
	}
	return out.Bytes()
}

// assTime reads H:MM:SS.cc.
func assTime(s string) (time.Duration, bool) {
	hms, cs, ok := strings.Cut(s, ".")
	p := strings.Split(hms, ":")
	if !ok || len(p) != 3 || len(cs) != 2 {
		return 0, false
	}
	var v [4]int64
	for i, f := range append(p, cs) {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n < 0 || n >= maxCueField {
			return 0, false
		}
		v[i] = n
	}
	return time.Duration(((v[0]*60+v[1])*60+v[2])*100+v[3]) * 10 * time.Millisecond, true
}

func fmtASSTime(d time.Duration) string {
	cs := (d + 5*time.Millisecond) / (10 * time.Millisecond)
	return fmt.Sprintf("%d:%02d:%02d.%02d", cs/360_000, cs/6000%60, cs/100%60, cs%100)
}
