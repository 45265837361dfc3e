package audio

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/cmplx"
)

// Track is a source track's features at one frame rate: its mel spectrogram and the end
// column of each frame's window. A part of a track (Part) holds the columns of a run of frames
// only: Base is its first column's number in the whole track, First its first frame's, Frames
// the whole track's frame count.
type Track struct {
	Spec   [][MelFilters]float64 // column-major: Spec[t][f], column Base+t of the track
	Ends   []int                 // frame First+i's window is columns [Ends[i]-WindowLength, Ends[i])
	Base   int
	First  int
	Frames int
}

// Window is one frame's features, FaceFusion's AudioFrame (80 × 16): Window[f][t].
type Window [MelFilters][WindowLength]float64

// NewTrack is read_audio's and read_voice's last steps on a prepared mono track: its
// spectrogram and the frames at fps.
func NewTrack(prepared []float64, fps float64) *Track {
	spec := Spectrogram(prepared)
	ends := Frames(len(spec), fps)
	return &Track{Spec: spec, Ends: ends, Frames: len(ends)}
}

// Len is the number of frames the track has features for.
func (t *Track) Len() int { return t.Frames }

// Part is the track's features of frames [lo, hi) alone, what a rank that processes those
// frames needs: their windows' columns (at 25 fps a frame adds 3.2 columns, 2.6 KB). Its
// Frame answers for those frames as the whole track does, and with the empty window for a frame
// past the track's end; it must not be asked for another frame of the track.
func (t *Track) Part(lo, hi int) *Track {
	lo, hi = max(lo, t.First), min(hi, t.First+len(t.Ends))
	p := &Track{First: lo, Frames: t.Frames}
	if lo >= hi {
		return p
	}
	ends := t.Ends[lo-t.First : hi-t.First]
	from, to := ends[0]-WindowLength, ends[len(ends)-1]
	p.Base = from
	p.Spec = t.Spec[from-t.Base : to-t.Base]
	p.Ends = ends
	return p
}

// Frame is frame i's window, as workflows/core.py's conditional_get_source_voice_frame gives
// it: ok is false (FaceFusion's empty frame, create_empty_audio_frame's zeros) past the end of
// the track, before its start, or where the window is all zeros (numpy.any).
func (t *Track) Frame(i int, w *Window) (ok bool) {
	*w = Window{}
	if i < t.First || i >= t.First+len(t.Ends) {
		return false
	}
	end := t.Ends[i-t.First] - t.Base
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
// float32 as FaceFusion keeps it) resampled to 16 kHz and made mono (ResampleVoiceMono, whose
// scratch folder goes under scratch), prepared and cut into frames at fps.
func VoiceTrack(ctx context.Context, voice []float32, fps float64, scratch string) (*Track, error) {
	mono, err := ResampleVoiceMono(ctx, voice, scratch)
	if err != nil {
		return nil, err
	}
	prepareInPlace(mono)
	return NewTrack(mono, fps), nil
}

// diskAbove is the longest channel (samples) ResampleVoiceMono transforms in memory (87 s at
// 48 kHz; its chirp transforms then take 270 MB at most). A longer one is transformed with
// its values on disk (diskDFT).
var diskAbove = 1 << 22

// ResampleVoiceMono is Mono(ResampleVoice(voice), Channels): prepare_voice's resample of each
// channel, and the channels' mean. A track up to diskAbove samples is exactly that. A longer
// one is the resample of the channels' mean (the same sum, the transform being linear: it
// differs by rounding alone, some 1e-15 of the peak), through transforms whose values lie in
// a scratch folder of its own under scratch (os.TempDir() when ""), removed when done: in
// memory it holds the mono result, a sixth as many spectrum bins at 16 bytes, and block
// buffers of 64 MB, whatever the length; on disk, 32 bytes for each of some 1.17 × the
// track's samples a channel (13 GB for two hours).
func ResampleVoiceMono(ctx context.Context, voice []float32, scratch string) ([]float64, error) {
	n := len(voice) / Channels
	num := VoiceSamples(n)
	if !onDisk(n) {
		return Mono(ResampleVoice(voice), Channels), nil
	}
	half := make([]complex128, num/2+1) // num < n: the output's bins, all cut from the track's
	bufs := &diskBuffers{}
	fwd, err := newDiskDFT(ctx, scratch, n, len(half), bufs)
	if err != nil {
		return nil, err
	}
	err = fwd.transform(func(j int) complex128 {
		s := 0.0
		for _, v := range voice[j*Channels : (j+1)*Channels] {
			s += float64(v)
		}
		return complex(s/Channels, 0)
	}, func(k int, v complex128) { half[k] = v })
	if cerr := fwd.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	cutNyquist(half, n, num)
	inv, err := newDiskDFT(ctx, scratch, num, num, bufs)
	if err != nil {
		return nil, err
	}
	mono := make([]float64, num)
	bin := hermitian(half, num)
	scale := float64(num) / float64(n)
	// irfft's real part of the conjugate transform, divided by num, times num/n (resampleBack).
	err = inv.transform(func(k int) complex128 { return cmplx.Conj(bin(k)) },
		func(k int, v complex128) { mono[k] = real(v) / float64(num) * scale })
	if cerr := inv.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return mono, nil
}

// onDisk is whether ResampleVoiceMono transforms a track of n samples a channel on disk.
func onDisk(n int) bool { return n > diskAbove && VoiceSamples(n) >= 1 }

// ScratchBytes is what ResampleVoiceMono's scratch folder holds at its largest for a track
// of n samples a channel (its forward transform's two files): 0 when it needs none. Rank 0
// compares it with the temp folder's room before the voice extractor's minutes, not after.
func ScratchBytes(n int) int64 {
	if !onDisk(n) {
		return 0
	}
	num := VoiceSamples(n)
	fwd1, fwd2 := diskLengths(n + num/2)
	inv1, inv2 := diskLengths(2*num - 1)
	return 32 * int64(max(fwd1*fwd2, inv1*inv2))
}

// ResampleVoice is prepare_voice's scipy.signal.resample of each channel of interleaved stereo
// at SampleRate to VoiceSamples of them, interleaved again.
//
// The channels go through each length's transforms one after the other, on plans and a work
// buffer made once (trackPlans): the forward transforms of every channel, keeping their cut
// spectra, then the track's plans let go, then the inverse ones.
func ResampleVoice(voice []float32) []float64 {
	n := len(voice) / Channels
	num := VoiceSamples(n)
	spectra := make([][]complex128, Channels)
	fwd := &trackPlans{}
	ch := make([]float64, n)
	for c := range spectra {
		for i := range ch {
			ch[i] = float64(voice[i*Channels+c])
		}
		spectra[c] = resampleCut(fwd, ch, num)
	}
	inv := &trackPlans{work: fwd.work} // the forward plans go; the buffer serves again
	out := make([]float64, num*Channels)
	for c, half := range spectra {
		for i, v := range resampleBack(inv, half, n, num) {
			out[i*Channels+c] = v
		}
		spectra[c] = nil
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

// Remap is the track as frames that show the track's frames src[0], src[1], … (ascending): the
// output of a video resampled to a higher rate repeats frames, and each repeat takes the
// window of the frame it repeats (FaceFusion cuts the windows at the lower rate and repeats
// the processed frames). A frame whose source is past the track's end has the empty window.
func (t *Track) Remap(src []int) *Track {
	r := &Track{Spec: t.Spec, Base: t.Base, First: 0, Frames: len(src)}
	for _, j := range src {
		if j < t.First || j >= t.First+len(t.Ends) {
			break
		}
		r.Ends = append(r.Ends, t.Ends[j-t.First])
	}
	return r
}

// MarshalBinary encodes the track (or a part) for another rank: its numbers, then the end
// columns and the columns' values as float64, little-endian. Every rank reads its windows from
// the same bytes, so the answer is the same whichever rank computed it.
func (t *Track) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 8*(4+len(t.Ends)+len(t.Spec)*MelFilters))
	for _, v := range []int{t.Base, t.First, t.Frames, len(t.Ends), len(t.Spec)} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	for _, e := range t.Ends {
		b = binary.LittleEndian.AppendUint64(b, uint64(e))
	}
	for i := range t.Spec {
		for _, v := range t.Spec[i] {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	return b, nil
}

// UnmarshalBinary decodes MarshalBinary's bytes, checking that every window lies in the
// columns sent.
func (t *Track) UnmarshalBinary(b []byte) error {
	bad := errors.New("audio: the voice features received are malformed")
	word := func() (int, bool) {
		if len(b) < 8 {
			return 0, false
		}
		v := binary.LittleEndian.Uint64(b)
		b = b[8:]
		return int(v), v < 1<<40
	}
	var head [5]int
	for i := range head {
		v, ok := word()
		if !ok {
			return bad
		}
		head[i] = v
	}
	nEnds, nCols := head[3], head[4]
	if len(b) != 8*nEnds+8*MelFilters*nCols {
		return bad
	}
	*t = Track{Base: head[0], First: head[1], Frames: head[2], Ends: make([]int, nEnds), Spec: make([][MelFilters]float64, nCols)}
	for i := range t.Ends {
		t.Ends[i], _ = word()
		if c := t.Ends[i] - t.Base; c < WindowLength || c > nCols {
			return bad
		}
	}
	for i := range t.Spec {
		for f := range t.Spec[i] {
			t.Spec[i][f] = math.Float64frombits(binary.LittleEndian.Uint64(b))
			b = b[8:]
		}
	}
	return nil
}

// WriteTo writes MarshalBinary's bytes to w a column at a time: a two-hour voice's features
// (some 370 MB) are not held twice in memory to be saved.
func (t *Track) WriteTo(w io.Writer) (int64, error) {
	var n int64
	buf := make([]byte, 0, 8*MelFilters)
	flush := func() error {
		k, err := w.Write(buf)
		n += int64(k)
		buf = buf[:0]
		return err
	}
	for _, v := range []int{t.Base, t.First, t.Frames, len(t.Ends), len(t.Spec)} {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(v))
	}
	if err := flush(); err != nil {
		return n, err
	}
	for _, e := range t.Ends {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(e))
		if len(buf) == cap(buf) {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := flush(); err != nil {
		return n, err
	}
	for i := range t.Spec {
		for _, v := range t.Spec[i] {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		}
		if err := flush(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// ReadTrack decodes WriteTo's size bytes from r as UnmarshalBinary does, streamed: the track
// alone is held, not its bytes too.
func ReadTrack(r io.Reader, size int64) (*Track, error) {
	bad := errors.New("audio: the voice features are malformed")
	var word [8]byte
	next := func() (uint64, error) {
		_, err := io.ReadFull(r, word[:])
		return binary.LittleEndian.Uint64(word[:]), err
	}
	var head [5]int
	for i := range head {
		v, err := next()
		if err != nil {
			return nil, err
		}
		if v >= 1<<40 {
			return nil, bad
		}
		head[i] = int(v)
	}
	nEnds, nCols := head[3], head[4]
	if size != 8*(5+int64(nEnds)+MelFilters*int64(nCols)) {
		return nil, bad
	}
	t := &Track{Base: head[0], First: head[1], Frames: head[2], Ends: make([]int, nEnds), Spec: make([][MelFilters]float64, nCols)}
	for i := range t.Ends {
		v, err := next()
		if err != nil {
			return nil, err
		}
		if c := int64(v) - int64(t.Base); v >= 1<<40 || c < WindowLength || c > int64(nCols) {
			return nil, bad
		}
		t.Ends[i] = int(v)
	}
	col := make([]byte, 8*MelFilters)
	for i := range t.Spec {
		if _, err := io.ReadFull(r, col); err != nil {
			return nil, err
		}
		for f := range t.Spec[i] {
			t.Spec[i][f] = math.Float64frombits(binary.LittleEndian.Uint64(col[8*f:]))
		}
	}
	return t, nil
}
