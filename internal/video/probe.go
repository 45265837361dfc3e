// Package video moves frames between media files and the pipeline through ffmpeg and ffprobe
// pipes: probe a target, decode an exact frame range to rgb24, encode rgb24 to a segment, mux
// audio, concatenate segments. Frames never touch the disk as files.
package video

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// Rational is an exact frame rate such as 30000/1001; float rates drift over long videos.
type Rational struct {
	Num, Den int
}

// Float is the rate in frames per second (0 when the rate is unknown).
func (r Rational) Float() float64 {
	if r.Den == 0 {
		return 0
	}
	return float64(r.Num) / float64(r.Den)
}

// String is the ffmpeg spelling, "num/den".
func (r Rational) String() string { return strconv.Itoa(r.Num) + "/" + strconv.Itoa(r.Den) }

// Valid reports whether the rate is a positive number of frames per second.
func (r Rational) Valid() bool { return r.Num > 0 && r.Den > 0 }

// FrameTime is the presentation time of frame n at this rate, measured from the first frame.
func (r Rational) FrameTime(n int) time.Duration {
	if !r.Valid() {
		return 0
	}
	return time.Duration(math.Round(float64(n) * float64(r.Den) / float64(r.Num) * float64(time.Second)))
}

// ParseRational reads "30000/1001", "25" or "0/0" (the last gives the zero Rational).
func ParseRational(s string) (Rational, error) {
	num, den, found := strings.Cut(strings.TrimSpace(s), "/")
	if !found {
		den = "1"
	}
	n, err1 := strconv.Atoi(num)
	d, err2 := strconv.Atoi(den)
	if err1 != nil || err2 != nil || n < 0 || d < 0 {
		return Rational{}, fmt.Errorf("not a frame rate: %q", s)
	}
	if n == 0 || d == 0 {
		return Rational{}, nil
	}
	g := gcd(n, d)
	return Rational{n / g, d / g}, nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Info is what the pipeline needs to know about a target before it plans the work.
type Info struct {
	Path          string
	Width, Height int      // as decoded: display rotation already applied, as ffmpeg does
	FPS           Rational // r_frame_rate: the rate frames are stamped at
	Frames        int      // exact number of decoded frames (1 for an image)
	Duration      time.Duration
	HasAudio      bool
	AudioCodec    string // the first audio stream's (the one CheckOutput never drops), e.g. aac; "" without audio
	Codec         string // e.g. h264, hevc, png
	Profile       string `json:",omitempty"` // the codec's, e.g. High, High 4:4:4 Predictive, Main 10
	PixFmt        string
	Format        string // ffprobe's format_name, e.g. "mov,mp4,m4a,3gp,3g2,mj2"
	IsImage       bool
	// VideoStart is the video stream's start time minus the container's; ffmpeg seeks in
	// container time, so frame n of the stream sits at VideoStart + n/FPS.
	VideoStart time.Duration
	// VFR marks a variable (or inconsistent) frame rate: a frame index cannot be turned into a
	// seek time, so ranges are selected by counting decoded frames from the start.
	VFR bool
	// Times are the first video stream's frame times, read from its packets, in its own time
	// base (zero for an image).
	Times Timeline
	// Others are the target's streams other than that video stream, in the file's order: what
	// the output keeps of them is decided before the first frame (CheckOutput).
	Others []Stream `json:",omitempty"`
	// Timecode is the target's SMPTE timecode at its first frame (a `timecode` tag: the video
	// stream's, else a timecode track's, else the file's), "" when it has none. A timecode track
	// (MOV/MP4 tmcd) is not among Others: the output's is written anew (TimecodeAt).
	Timecode string `json:",omitempty"`

	streamTB    Rational // the video stream's time base
	streamStart int64    // start_pts of the video stream, in its time base
	streamEnd   int64    // start_pts + duration_ts of the video stream, in its time base (0: unknown)
	// evenClock: the header shows a constant rate (avg_frame_rate is r_frame_rate) that the
	// stream's clock holds exactly (a whole number of ticks a frame) from a known start, so Times
	// is arithmetic (rateTimes) and the probe reads no packet; otherwise it reads their times.
	evenClock bool
}

// Stream is one stream of a media file, as ffprobe names it.
type Stream struct {
	Index int    // in the file
	Type  string // audio, subtitle, data, attachment, video
	Codec string // e.g. aac, subrip; "" when ffmpeg does not know it
	// AttachedPic marks a cover picture: a video stream that is not a video.
	AttachedPic bool `json:",omitempty"`
	// Disposition is the stream's disposition flags as ffmpeg's -disposition spells them
	// ("default+forced"; "" none): a stream written from another input (a trim's cut cues) is
	// given them, as a stream copied from the target takes them along.
	Disposition string `json:",omitempty"`
	// Params are the stream's codec parameters as ffprobe gives them (sample rate, channels and
	// layout, sample format, bits per sample, profile, codec tag, frame size, time base,
	// disposition, …): whether a container takes the stream depends on them (FLV takes 44.1 kHz
	// PCM but not 48 kHz), so a kept output check is kept under them. Left out is what differs
	// between files of one kind and no muxer checks (perFileFields), so a batch of targets alike
	// still checks once.
	Params string `json:",omitempty"`
}

func (s Stream) String() string {
	c := s.Codec
	if c == "" {
		c = "unknown codec"
	}
	return fmt.Sprintf("#%d %s %s", s.Index, s.Type, c)
}

// The subset of `ffprobe -of json -show_format -show_streams` that Info is built from.
type probeJSON struct {
	Streams []struct {
		Index        int               `json:"index"`
		CodecName    string            `json:"codec_name"`
		Profile      string            `json:"profile"`
		CodecType    string            `json:"codec_type"`
		CodecTag     string            `json:"codec_tag_string"`
		Width        int               `json:"width"`
		Height       int               `json:"height"`
		PixFmt       string            `json:"pix_fmt"`
		TimeBase     string            `json:"time_base"`
		StartPTS     *int64            `json:"start_pts"`
		DurationTS   *int64            `json:"duration_ts"`
		RFrameRate   string            `json:"r_frame_rate"`
		AvgFrameRate string            `json:"avg_frame_rate"`
		StartTime    string            `json:"start_time"`
		Duration     string            `json:"duration"`
		NbFrames     string            `json:"nb_frames"`
		Tags         map[string]string `json:"tags"`
		Disposition  map[string]int    `json:"disposition"`
		SideData     []struct {
			Type     string  `json:"side_data_type"`
			Rotation float64 `json:"rotation"`
		} `json:"side_data_list"`
	} `json:"streams"`
	Format struct {
		FormatName string            `json:"format_name"`
		StartTime  string            `json:"start_time"`
		Duration   string            `json:"duration"`
		Tags       map[string]string `json:"tags"`
	} `json:"format"`
}

// perFileFields are the fields of ffprobe's stream object that Stream.Params leaves out: the
// index (Stream.Index), the stream's length, bit rate and start, and its tags (language, title,
// encoder, creation time, Matroska's DURATION), which muxers copy as they are.
var perFileFields = []string{"index", "codec_long_name", "duration", "duration_ts", "nb_frames", "nb_read_frames",
	"nb_read_packets", "bit_rate", "max_bit_rate", "start_pts", "start_time", "tags"}

// streamParams is Stream.Params of one of ffprobe's stream objects: its fields less
// perFileFields, as JSON with the keys sorted ("" when it does not decode).
func streamParams(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	for _, f := range perFileFields {
		delete(m, f)
	}
	b, err := json.Marshal(m) // sorted keys, each value compacted
	if err != nil {
		return ""
	}
	return string(b)
}

// tag is the value of key in tags, whatever its case (Matroska's tags are upper case).
func tag(tags map[string]string, key string) string {
	for k, v := range tags {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return ""
}

// parseProbe turns ffprobe's JSON into an Info. needCount is true when the stream carries no
// frame count that can be trusted, so the caller must count packets.
func parseProbe(path string, data []byte) (info *Info, needCount bool, err error) {
	var p probeJSON
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, false, fmt.Errorf("video: ffprobe gave unreadable JSON for %s: %v", path, err)
	}
	var raw struct {
		Streams []json.RawMessage `json:"streams"` // the same objects whole, for Stream.Params
	}
	_ = json.Unmarshal(data, &raw) // it decoded above
	info = &Info{Path: path, Format: p.Format.FormatName}
	video := -1
	for i, s := range p.Streams {
		switch s.CodecType {
		case "video":
			// Cover art in audio files is a one-picture "video" stream; it is not a target.
			if video < 0 && s.Disposition["attached_pic"] == 0 {
				video = i
				continue
			}
		case "audio":
			if !info.HasAudio {
				info.AudioCodec = s.CodecName
			}
			info.HasAudio = true
		}
		if s.CodecType == "data" && s.CodecTag == "tmcd" {
			continue // the timecode track: written anew from Timecode
		}
		info.Others = append(info.Others, Stream{Index: s.Index, Type: s.CodecType, Codec: s.CodecName,
			AttachedPic: s.Disposition["attached_pic"] != 0, Disposition: dispositionFlags(s.Disposition),
			Params: streamParams(raw.Streams[i])})
	}
	if video < 0 {
		return nil, false, fmt.Errorf("video: %s has no video stream (audio only?): choose a video or image target", path)
	}
	s := p.Streams[video]
	info.Timecode = tag(s.Tags, "timecode")
	for _, o := range p.Streams {
		if info.Timecode == "" && o.CodecTag == "tmcd" {
			info.Timecode = tag(o.Tags, "timecode")
		}
	}
	if info.Timecode == "" {
		info.Timecode = tag(p.Format.Tags, "timecode")
	}
	info.Codec, info.Profile, info.PixFmt = s.CodecName, s.Profile, s.PixFmt
	info.Width, info.Height = s.Width, s.Height
	if rotation(s.Tags["rotate"], s.SideData) {
		info.Width, info.Height = info.Height, info.Width
	}
	if info.Width <= 0 || info.Height <= 0 {
		return nil, false, fmt.Errorf("video: %s: the video stream has no frame size (%dx%d): the file is damaged; re-encode it", path, s.Width, s.Height)
	}
	info.IsImage = isImageFormat(p.Format.FormatName)
	if info.IsImage {
		info.Frames, info.FPS = 1, Rational{1, 1}
		return info, false, nil
	}
	if info.FPS, err = ParseRational(s.RFrameRate); err != nil || !info.FPS.Valid() {
		return nil, false, fmt.Errorf("video: %s: no usable frame rate (r_frame_rate %q): re-encode the file with a fixed rate", path, s.RFrameRate)
	}
	avg, _ := ParseRational(s.AvgFrameRate)

	dur := seconds(s.Duration)
	if dur <= 0 {
		// Matroska keeps no stream duration; the container's includes the stream's start delay.
		dur = seconds(p.Format.Duration) - (seconds(s.StartTime) - seconds(p.Format.StartTime))
	}
	if dur > 0 {
		info.Duration = time.Duration(math.Round(dur * float64(time.Second)))
	}
	info.VideoStart = time.Duration(math.Round((seconds(s.StartTime) - seconds(p.Format.StartTime)) * float64(time.Second)))

	if tb, err := ParseRational(s.TimeBase); err == nil && tb.Valid() {
		info.streamTB = tb
		if s.StartPTS != nil {
			info.streamStart = *s.StartPTS
			if s.DurationTS != nil {
				info.streamEnd = *s.StartPTS + *s.DurationTS
			}
		}
		info.evenClock = avg == info.FPS && s.StartPTS != nil && ticksPerFrame(info.FPS, tb) > 0
	}
	expected := dur * info.FPS.Float()
	if n, err := strconv.Atoi(s.NbFrames); err == nil && n > 0 && math.Abs(float64(n)-expected) <= 2 && !info.cutBefore(n) {
		info.Frames = n
	} else {
		needCount = true
	}
	info.VFR = avg.Valid() && avg != info.FPS
	info.Times = evenTimes(info.FPS, info.Frames)
	if info.evenClock && !needCount {
		info.Times = info.rateTimes()
	}
	return info, needCount, nil
}

// cutBefore reports whether a header count of n frames cannot all be shown: at a constant rate
// the clock holds, n frames outlast the stream's duration. A stream-copy cut that starts
// between key frames (`ffmpeg -ss 0.5 -i in.mp4 -c copy out.mp4`, an editor's or a camera's
// trim) keeps the packets from the key frame before the cut, marked discard, and an edit list
// that starts at the cut: nb_frames counts every packet, the duration only what a decoder
// shows. Then the frames are counted from the packets (packetTimes leaves the discarded out);
// a plain file's duration holds its frames, so it costs no extra ffprobe run.
func (info *Info) cutBefore(n int) bool {
	step := ticksPerFrame(info.FPS, info.streamTB)
	return info.evenClock && step > 0 && info.streamEnd > info.streamStart && int64(n)*step > info.streamEnd-info.streamStart
}

// needsPacketTimes reports whether the frames' times must be read from the packets (one
// ffprobe pass over the whole file): the rate may vary, the stream's clock cannot hold it
// exactly (Matroska's millisecond at 29.97 fps rounds every time), or the header has no frame
// count to trust. A constant-rate MP4 or MOV needs none: its times are arithmetic.
func (info *Info) needsPacketTimes(needCount bool) bool {
	return needCount || !info.evenClock
}

// setCount records a counted frame total and re-checks it against the rate: a count that the
// duration at FPS cannot explain means frames are not evenly spaced.
func (info *Info) setCount(n int) {
	info.Frames = n
	expected := info.Duration.Seconds() * info.FPS.Float()
	if info.Duration > 0 && math.Abs(float64(n)-expected) > 2 {
		info.VFR = true
	}
}

// rotation reports whether the display matrix turns the picture by a quarter turn, which
// swaps width and height in what ffmpeg decodes (it auto-rotates).
func rotation(tag string, side []struct {
	Type     string  `json:"side_data_type"`
	Rotation float64 `json:"rotation"`
}) bool {
	deg := 0.0
	if v, err := strconv.ParseFloat(tag, 64); err == nil {
		deg = v
	}
	for _, sd := range side {
		if sd.Type == "Display Matrix" {
			deg = sd.Rotation
		}
	}
	q := int(math.Round(deg/90)) % 2
	return q != 0
}

func isImageFormat(name string) bool {
	return name == "image2" || strings.HasSuffix(name, "_pipe")
}

func seconds(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// Probe describes the media file at path. The frame count is exact: it comes from the
// container's index when that agrees with duration × rate, otherwise from counting packets
// (one demux pass, no decoding). The frame times (Times) come from the same pass where the rate
// may vary or the container's clock does not hold it (needsPacketTimes); a constant-rate file
// with a frame count is probed in one ffprobe run, however long it is.
func Probe(ctx context.Context, path string) (*Info, error) { return probeFile(ctx, path, true) }

// ProbeHeader is Probe without the frame count or times a header may lack: the streams, as
// one ffprobe run reads them (enough to name the video's codec, profile, pixel format and size).
func ProbeHeader(ctx context.Context, path string) (*Info, error) {
	return probeFile(ctx, path, false)
}

// probeFile is Probe; without count, a frame count the container's index does not give is left as
// duration × rate (one ffprobe process instead of two).
func probeFile(ctx context.Context, path string, count bool) (*Info, error) {
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("video: %s does not exist: check the target path", path)
		}
		return nil, fmt.Errorf("video: cannot read %s: %v", path, err)
	}
	// A FIFO or device would hold ffprobe (and every reader after it) forever.
	if err := safefs.Regular(path, "media file"); err != nil {
		return nil, fmt.Errorf("video: %w", err)
	}
	out, err := runTool(ctx, FFprobe, "-v", "error", "-of", "json", "-show_format", "-show_streams", mediaPath(path))
	if fault.KindOf(err) == fault.Environment {
		return nil, err // no ffprobe: nothing is known of the file
	}
	if err != nil {
		return nil, fmt.Errorf("video: ffprobe cannot read %s (corrupt, truncated or not media): %v; check that the file plays", path, err)
	}
	info, needCount, err := parseProbe(path, out)
	if err != nil {
		return nil, err
	}
	if count && !info.IsImage && info.needsPacketTimes(needCount) {
		pts, discarded, err := packetTimes(ctx, path)
		if err != nil {
			return nil, err
		}
		if needCount || discarded > 0 {
			// The header's count includes the discarded packets: the shown frames are the rest.
			info.setCount(len(pts))
		}
		info.setTimes(pts)
	}
	if abs, err := filepath.Abs(path); err == nil {
		info.Path = abs
	}
	return info, nil
}

// packetTimes are the timestamps of the first video stream's packets that a decoder shows, in
// its time base, in file (decode) order, and how many packets were left out as discarded: one
// packet per frame for every codec this program writes, and far cheaper than -count_frames,
// which decodes. A packet flagged discard ('D' in ffprobe's flags: one before an edit list's
// start, kept by a stream-copy cut to decode from its key frame) is no frame of the video. A
// packet without a time ("N/A": raw elementary streams) is math.MinInt64.
func packetTimes(ctx context.Context, path string) (pts []int64, discarded int, err error) {
	out, err := runTool(ctx, FFprobe, "-v", "error", "-select_streams", "v:0",
		"-show_entries", "packet=pts,flags", "-of", "csv=p=0", mediaPath(path))
	if err != nil {
		return nil, 0, fmt.Errorf("video: ffprobe cannot read the frames of %s: %v; the file may be truncated", path, err)
	}
	return parsePacketTimes(path, out)
}

// parsePacketTimes reads ffprobe's `pts,flags` lines (csv=p=0).
func parsePacketTimes(path string, data []byte) (pts []int64, discarded int, err error) {
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		field, flags, _ := strings.Cut(line, ",")
		if strings.Contains(flags, "D") {
			discarded++
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(field), 10, 64)
		if err != nil {
			v = math.MinInt64
		}
		pts = append(pts, v)
	}
	if len(pts) == 0 {
		return nil, discarded, fmt.Errorf("video: %s has no video frames (no packets a decoder shows): choose another target", path)
	}
	return pts, discarded, nil
}

// dispositionFlags spells ffprobe's disposition map (flag → 0 or 1) as ffmpeg's -disposition
// takes it: the set flags joined by "+", in name order; "" when none is set.
func dispositionFlags(d map[string]int) string {
	var set []string
	for k, v := range d {
		if v != 0 {
			set = append(set, k)
		}
	}
	sort.Strings(set)
	return strings.Join(set, "+")
}
