package video

import (
	"math"
	"strconv"
)

// AudioEncoder is one of FaceFusion's output audio encoders: the ffmpeg encoder, the codec
// ffprobe names in what it writes, and how FaceFusion's 0–100 quality maps onto its options.
type AudioEncoder struct {
	Name    string
	Codec   string
	quality func(q int) []string // nil: the encoder has no quality setting (lossless)
}

// AudioEncoders are FaceFusion 3.8's output_audio_encoder choices in its order (types.py
// AudioEncoder), with ffmpeg_builder.set_audio_quality's mapping: numpy.interp of the quality
// onto the encoder's scale, rounded as numpy rounds (halves to even; aac and vorbis to one
// decimal).
var AudioEncoders = []AudioEncoder{
	{Name: "flac", Codec: "flac"},
	{Name: "aac", Codec: "aac", quality: func(q int) []string {
		return []string{"-q:a", strconv.FormatFloat(roundTenths(numpyInterp(q, 0.1, 2.0)), 'f', 1, 64)}
	}},
	{Name: "libmp3lame", Codec: "mp3", quality: func(q int) []string {
		return []string{"-q:a", strconv.Itoa(int(math.RoundToEven(numpyInterp(q, 9, 0))))}
	}},
	{Name: "libopus", Codec: "opus", quality: func(q int) []string {
		return []string{"-b:a", strconv.Itoa(int(math.RoundToEven(numpyInterp(q, 64, 256)))) + "k"}
	}},
	{Name: "libvorbis", Codec: "vorbis", quality: func(q int) []string {
		return []string{"-q:a", strconv.FormatFloat(roundTenths(numpyInterp(q, -1, 10)), 'f', 1, 64)}
	}},
	{Name: "pcm_s16le", Codec: "pcm_s16le"},
	{Name: "pcm_s32le", Codec: "pcm_s32le"},
}

// AudioEncoderNames are the names of AudioEncoders, in order.
func AudioEncoderNames() []string {
	names := make([]string, len(AudioEncoders))
	for i, e := range AudioEncoders {
		names[i] = e.Name
	}
	return names
}

func audioEncoder(name string) (AudioEncoder, bool) {
	for _, e := range AudioEncoders {
		if e.Name == name {
			return e, true
		}
	}
	return AudioEncoder{}, false
}

// numpyInterp is numpy.interp(q, [0, 100], [lo, hi]) for q in 0..100 as numpy computes it: the
// end points exactly, between them slope × (q − 0) + lo. The conversion keeps Go from fusing
// the multiply-add, which numpy does not do.
func numpyInterp(q int, lo, hi float64) float64 {
	switch x := float64(min(max(q, 0), 100)); x {
	case 0:
		return lo
	case 100:
		return hi
	default:
		return float64((hi-lo)/(100-0)*(x-0)) + lo
	}
}

// roundTenths is numpy.round(v, 1): v × 10 rounded half to even, divided by 10.
func roundTenths(v float64) float64 { return math.RoundToEven(v*10) / 10 }

// AudioOptions says how the target's audio goes into the output. Encoder "" copies it as it
// is (as AAC only where the container cannot hold its codec: Carry.AAC, decided by CheckOutput), and Quality and
// Volume do not apply; otherwise it is re-encoded with Encoder at Quality (0–100, FaceFusion's
// output_audio_quality) and Volume (0–100 % of the target's loudness; 100 leaves it).
//
// Source, when not "", is an audio file that replaces the target's audio, as FaceFusion's
// replace_audio does when an audio file is among the sources (lip_syncer's voice): its first
// audio stream from its start (a trim does not move it), cut to the output video's length,
// re-encoded with Encoder, which is then never "". The target's audio streams are left out.
//
// None is an output without audio: FaceFusion's output_audio_volume 0, where its restore_audio
// skips the audio (neither the target's nor a source's) rather than writing silence.
type AudioOptions struct {
	Encoder string
	Quality int
	Volume  int
	Source  string `json:",omitempty"`
	None    bool   `json:",omitempty"`
}

// Copies reports whether the audio is copied rather than re-encoded.
func (a AudioOptions) Copies() bool { return a.Encoder == "" }

// DefaultAudioEncoder is the encoder for an output whose audio is re-encoded without a named
// encoder (only its quality or volume was set): aac, which every container this program writes
// holds, except WebM, which holds only Opus and Vorbis (FaceFusion's fix_audio_encoder turns
// every encoder into libopus there).
func DefaultAudioEncoder(out string) string {
	if muxerFor(out) == "webm" {
		return "libopus"
	}
	return "aac"
}

// args are the ffmpeg output options for the audio: -c:a, then FaceFusion's quality options
// for the encoder and its volume filter (left out at 100 %, where it changes nothing).
func (a AudioOptions) args() []string {
	if a.Copies() {
		return []string{"-c:a", "copy"}
	}
	args := []string{"-c:a", a.Encoder}
	if e, ok := audioEncoder(a.Encoder); ok && e.quality != nil {
		args = append(args, e.quality(a.Quality)...)
	}
	if a.Volume != 100 {
		args = append(args, "-filter:a", "volume="+strconv.FormatFloat(float64(a.Volume)/100, 'f', -1, 64))
	}
	return args
}

// codec is the codec ffprobe should find in the output's audio, "" when the audio is copied
// (whatever the target's codec is, or AAC).
func (a AudioOptions) codec() string {
	if e, ok := audioEncoder(a.Encoder); ok {
		return e.Codec
	}
	return ""
}
