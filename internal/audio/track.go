package audio

import "math"

// Track is a source track's features at one frame rate: its mel spectrogram and the end
// column of each frame's window.
type Track struct {
	Spec [][MelFilters]float64 // column-major: Spec[t][f]
	Ends []int                 // frame i's window is columns [Ends[i]-WindowLength, Ends[i])
}

// Window is one frame's features, FaceFusion's AudioFrame (80 × 16): Window[f][t].
type Window [MelFilters][WindowLength]float64

// NewTrack is read_audio's and read_voice's last steps on a prepared mono track: its
// spectrogram and the frames at fps.
func NewTrack(prepared []float64, fps float64) *Track {
	spec := Spectrogram(prepared)
	return &Track{Spec: spec, Ends: Frames(len(spec), fps)}
}

// Len is the number of frames the track has features for.
func (t *Track) Len() int { return len(t.Ends) }

// Frame is frame i's window, as workflows/core.py's conditional_get_source_voice_frame gives
// it: ok is false (FaceFusion's empty frame, create_empty_audio_frame's zeros) past the end of
// the track, before its start, or where the window is all zeros (numpy.any).
func (t *Track) Frame(i int, w *Window) (ok bool) {
	*w = Window{}
	if i < 0 || i >= len(t.Ends) {
		return false
	}
	end := t.Ends[i]
	any := false
	for c := 0; c < WindowLength; c++ {
		col := &t.Spec[end-WindowLength+c]
		for f := 0; f < MelFilters; f++ {
			w[f][c] = col[f]
			// NaN counts as non-zero, as numpy.any counts it.
			any = any || col[f] != 0 || math.IsNaN(col[f])
		}
	}
	if !any {
		*w = Window{}
	}
	return any
}

// AudioTrack is read_audio: interleaved 16-bit stereo at SampleRate, made mono, prepared and
// cut into frames at fps, with no resampling (FaceFusion computes this track's 16 kHz mel
// bank over 48 kHz samples).
func AudioTrack(pcm []int16, fps float64) *Track {
	x := make([]float64, len(pcm))
	for i, v := range pcm {
		x[i] = float64(v)
	}
	return NewTrack(Prepare(Mono(x, Channels)), fps)
}

// VoiceTrack is read_voice after the voice extractor: the extracted stereo voice (interleaved,
// float32 as FaceFusion keeps it) resampled to 16 kHz channel by channel, made mono, prepared
// and cut into frames at fps.
func VoiceTrack(voice []float32, fps float64) *Track {
	return NewTrack(Prepare(Mono(ResampleVoice(voice), Channels)), fps)
}

// ResampleVoice is prepare_voice's scipy.signal.resample of each channel of interleaved stereo
// at SampleRate to VoiceSamples of them, interleaved again.
func ResampleVoice(voice []float32) []float64 {
	n := len(voice) / Channels
	num := VoiceSamples(n)
	out := make([]float64, num*Channels)
	ch := make([]float64, n)
	for c := 0; c < Channels; c++ {
		for i := range ch {
			ch[i] = float64(voice[i*Channels+c])
		}
		for i, v := range Resample(ch, num) {
			out[i*Channels+c] = v
		}
	}
	return out
}

// FeatureRate is the frame rate FaceFusion cuts the voice into windows at (workflows/core.py's
// temp_video_fps): restrict_video_fps of output_video_fps, the smaller of it and the target's
// rate (ffprobe's r_frame_rate as a float), where output_video_fps is FaceFusion's
// normalize_fps of the option (clamped to 1..60), or the target's rate when it is not given
// (outputFPS 0). Output frame i (counted from the trim start, as FaceFusion's frame_number −
// trim_frame_start) takes window i.
func FeatureRate(targetFPS, outputFPS float64) float64 {
	if outputFPS == 0 {
		return targetFPS
	}
	return min(targetFPS, max(1, min(outputFPS, 60)))
}
