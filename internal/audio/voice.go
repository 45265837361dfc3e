package audio

import (
	"context"
	"fmt"
	"math"
	"sync"
)

// The voice extractor's framing (voice_extractor.py, audio.py's read_voice).
const (
	VoiceChunk     = 240 * 1024 // samples of the track one extract_voice call takes
	VoiceStep      = 180 * 1024 // and the step between calls: a quarter overlaps
	voiceTrim      = 3840       // the margin each block carries either side
	voiceFrameSize = 7680       // the STFT's segment
	voiceHop       = 1024       // its hop (7680 − 6656)
	VoiceBins      = 3072       // frequency bins the model sees of the 3841
	voiceChannels  = 4          // left re, left im, right re, right im
)

// VoiceModel is the voice extractor's model: Frames is the file's input dimension 3
// (FaceFusion reads it from the file: get_inputs()[0].shape[3]), Run maps blocks ×
// [4, VoiceBins, Frames] float32 (FaceFusion's 'input') to its output of the same shape.
type VoiceModel interface {
	Frames() int
	Run(in []float32, blocks int) ([]float32, error)
}

// ExtractVoice is batch_extract_voice: the interleaved 16-bit stereo track in windows of
// VoiceChunk samples every VoiceStep, each through ExtractChunk, the overlaps averaged. The
// result is interleaved stereo float32, as FaceFusion keeps it, its sums in float32 in the
// order FaceFusion adds them. Windows are transformed by up to workers goroutines at once
// (the model runs one at a time) and added in window order: the bytes are the same for any
// workers. A stop (ctx) ends it after the model run in progress: a feature-length track
// takes minutes.
func ExtractVoice(ctx context.Context, pcm []int16, m VoiceModel, workers int) ([]float32, error) {
	n := len(pcm) / Channels
	sum := make([]float32, n*Channels)
	var starts []int
	for start := 0; start < n; start += VoiceStep {
		starts = append(starts, start)
	}
	locked := &lockedModel{m: m, ctx: ctx}
	workers = max(1, workers)
	results := make([][]float32, workers)
	errs := make([]error, workers)
	for lo := 0; lo < len(starts); lo += workers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+workers, len(starts))
		var wg sync.WaitGroup
		for i := lo; i < hi; i++ {
			wg.Add(1)
			go func(k, start int) {
				defer wg.Done()
				end := min(start+VoiceChunk, n)
				results[k], errs[k] = ExtractChunk(pcm[start*Channels:end*Channels], locked)
				if errs[k] != nil {
					errs[k] = fmt.Errorf("the voice extractor on samples %d–%d: %w", start, end, errs[k])
				}
			}(i-lo, starts[i])
		}
		wg.Wait()
		for i := lo; i < hi; i++ {
			if err := errs[i-lo]; err != nil {
				return nil, err
			}
			at := starts[i] * Channels
			for j, x := range results[i-lo] {
				sum[at+j] += x
			}
		}
	}
	for i := range sum {
		sum[i] /= windowsOver(i / Channels)
	}
	return sum, nil
}

// windowsOver is how many of ExtractVoice's windows (VoiceChunk samples every VoiceStep from
// 0) hold sample s of the track: FaceFusion's count of them, without an array of counts the
// size of the track (2.8 GB for two hours).
func windowsOver(s int) float32 {
	first := 0 // the first window that ends after s
	if s >= VoiceChunk {
		first = (s-VoiceChunk)/VoiceStep + 1
	}
	return float32(s/VoiceStep - first + 1)
}

// lockedModel runs a VoiceModel for one goroutine at a time, and for none once ctx is
// stopped: the windows queued behind the one running (as many as the node's cores, each a
// model run) do not hold a stop back.
type lockedModel struct {
	mu  sync.Mutex
	m   VoiceModel
	ctx context.Context
}

func (l *lockedModel) Frames() int { return l.m.Frames() }
func (l *lockedModel) Run(in []float32, blocks int) ([]float32, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.ctx.Err(); err != nil {
		return nil, err
	}
	return l.m.Run(in, blocks)
}

// ExtractChunk is extract_voice on one window of the track (interleaved stereo): cut into
// blocks of (Frames−1)·1024 samples with voiceTrim either side, each block's STFT (a symmetric
// Hann window of 7680, hop 1024) as the model's real and imaginary planes, the model, and the
// inverse STFT of its answer, the margins dropped.
func ExtractChunk(pcm []int16, m VoiceModel) ([]float32, error) {
	frames := m.Frames()
	size := (frames - 1) * voiceHop
	step := size - 2*voiceTrim
	if frames < 2 || step <= 0 {
		return nil, fmt.Errorf("the model takes %d frames: FaceFusion's blocks need more than %d", frames, 2*voiceTrim/voiceHop+1)
	}
	n := len(pcm) / Channels
	pad := step - n%step // a whole step when n is a multiple, as FaceFusion pads
	blocks := (n + pad) / step
	win := hann(voiceFrameSize, true)
	in := make([]float32, blocks*voiceChannels*VoiceBins*frames)
	padded := make([]float64, size)
	for b := 0; b < blocks; b++ {
		for c := 0; c < Channels; c++ {
			// Block b covers samples [b·step − trim, b·step − trim + size) of the channel.
			for i := range padded {
				j := b*step - voiceTrim + i
				padded[i] = 0
				if j >= 0 && j < n {
					padded[i] = float64(float32(pcm[j*Channels+c]) / math.MaxInt16)
				}
			}
			cols := STFT(padded, win, voiceFrameSize-voiceHop)
			scaleBack := sum(win) // FaceFusion undoes stft's 1/Σw
			for t, col := range cols {
				for k := 0; k < VoiceBins; k++ {
					v := col[k] * complex(scaleBack, 0)
					base := ((b*voiceChannels+c*2)*VoiceBins+k)*frames + t
					in[base] = float32(real(v))
					in[base+VoiceBins*frames] = float32(imag(v))
				}
			}
		}
	}
	out, err := m.Run(in, blocks)
	if err != nil {
		return nil, err
	}
	if len(out) != len(in) {
		return nil, fmt.Errorf("the model answered %d values for %d", len(out), len(in))
	}
	voice := make([]float32, n*Channels)
	for b := 0; b < blocks; b++ {
		for c := 0; c < Channels; c++ {
			x := inverseBlock(out, b, c, frames, size, win)
			for i := voiceTrim; i < size-voiceTrim; i++ {
				if j := b*step + i - voiceTrim; j < n {
					voice[j*Channels+c] = float32(x[i])
				}
			}
		}
	}
	return voice, nil
}

// inverseBlock is compose_audio_chunk for block b's channel c of the model's answer: the
// bins past VoiceBins zero, scipy.signal.istft (each column's inverse transform, windowed,
// overlap-added, divided by the windows' squares, half a segment cut from either end). The
// stft scaling and FaceFusion's two factors of Σw cancel.
func inverseBlock(out []float32, b, c, frames, size int, win []float64) []float64 {
	total := voiceFrameSize + (frames-1)*voiceHop
	acc := make([]float64, total)
	norm := make([]float64, total)
	half := make([]complex128, voiceFrameSize/2+1)
	for t := 0; t < frames; t++ {
		for k := range half {
			half[k] = 0
			if k < VoiceBins {
				base := ((b*voiceChannels+c*2)*VoiceBins+k)*frames + t
				half[k] = complex(float64(out[base]), float64(out[base+VoiceBins*frames]))
			}
		}
		seg := irfft(half, voiceFrameSize)
		for i, v := range seg {
			acc[t*voiceHop+i] += v * win[i]
			norm[t*voiceHop+i] += win[i] * win[i]
		}
	}
	x := acc[voiceFrameSize/2 : total-voiceFrameSize/2]
	nm := norm[voiceFrameSize/2 : total-voiceFrameSize/2]
	for i := range x {
		if nm[i] > 1e-10 {
			x[i] /= nm[i]
		}
	}
	return x[:size]
}

func sum(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s
}
