package video

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/bits"
	"strconv"
)

// FrameMap is the output's timeline: the target's frames [Start, End), stamped at rate In,
// resampled to rate Out, as `trim=start_frame=Start:end_frame=End,fps=OUT` gives them (the
// extraction FaceFusion runs): ffmpeg's fps filter (round=near, its default) keeps the frames'
// own times, so the output ticks are those of the whole video at rate Out, from the tick the
// range's first frame rounds to up to the one its end rounds to (halves up), and each tick
// shows the last frame of the range whose time rounds to it or before. Frames are dropped when
// Out < In and repeated when Out > In; at Out == In the map is the identity. The package tests
// compare the map with ffmpeg itself, trimmed and not.
//
// Output frames are numbered from Start: at the target's own rate output frame k is target
// frame k, and chunk boundaries, manifests and `facefusion plan` keep the target's numbers.
// The map is a value, not a list: every rank computes the same frames from the same four
// numbers, whatever its share.
type FrameMap struct {
	Start, End int      // the target's frames, the trimmed range
	In, Out    Rational // the target's rate and the output's
}

// ratio is Out/In as a fraction a/b of positive integers.
func (m FrameMap) ratio() (a, b uint64) {
	a = uint64(m.Out.Num) * uint64(m.In.Den)
	b = uint64(m.Out.Den) * uint64(m.In.Num)
	if g := gcd64(a, b); g > 1 {
		a, b = a/g, b/g
	}
	return a, b
}

func gcd64(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Resampled reports whether the output's rate differs from the target's.
func (m FrameMap) Resampled() bool {
	a, b := m.ratio()
	return a != b
}

// Valid reports whether m is a map: a non-empty range and two rates.
func (m FrameMap) Valid() bool {
	return m.Start >= 0 && m.End > m.Start && m.In.Valid() && m.Out.Valid()
}

// tick is the output tick target frame i's time rounds to: round(i·Out/In), halves up.
func (m FrameMap) tick(i int) uint64 {
	a, b := m.ratio()
	q, _ := mulDiv(2*uint64(i), a, b, 2*b)
	return q
}

// Frames is how many frames the output has: the ticks from the range's first frame's to its
// end's, round(End·Out/In) − round(Start·Out/In), as ffmpeg's fps filter ends a stream (at least
// one for a non-empty range).
func (m FrameMap) Frames() int {
	if m.End <= m.Start {
		return 0
	}
	return max(int(m.tick(m.End)-m.tick(m.Start)), 1)
}

// Output is the output's frame numbers [Start, Start+Frames()).
func (m FrameMap) Output() (start, end int) { return m.Start, m.Start + m.Frames() }

// Source is the target frame that output frame k shows: the last target frame i of the range
// whose tick is at most output frame k's, T = round(Start·Out/In) + k − Start; that is
// i·Out/In < T + ½.
func (m FrameMap) Source(k int) int {
	t := m.tick(m.Start) + uint64(k-m.Start)
	a, b := m.ratio()
	// i < (2T+1)·b / 2a: the largest such integer is ceil(x) − 1.
	q, r := mulDiv(2*t+1, b, 0, 2*a)
	if r == 0 {
		q--
	}
	return max(m.Start, min(int(q), m.End-1))
}

// Sources is the range of target frames [first, last+1) that the output frames [start, end)
// show: what a decoder for them must deliver.
func (m FrameMap) Sources(start, end int) (first, stop int) {
	return m.Source(start), m.Source(end-1) + 1
}

// mulDiv is (x·y + z) / w and its remainder, in 128 bits: rates of a million over a million
// and frame counts of millions overflow 64. w > 0; the quotient fits for any real video.
func mulDiv(x, y, z, w uint64) (q, r uint64) {
	hi, lo := bits.Mul64(x, y)
	lo, carry := bits.Add64(lo, z, 0)
	hi += carry
	if hi >= w {
		panic(fmt.Sprintf("video: frame arithmetic overflows: (%d·%d+%d)/%d", x, y, z, w))
	}
	return bits.Div64(hi, lo, w)
}

// rateLimit bounds the numerator and denominator of a rate read from a decimal, as ffmpeg's
// av_parse_video_rate bounds them.
const rateLimit = 1001000

// RateOf reads a frame rate given as a decimal number (FaceFusion's float output_video_fps)
// as the fraction ffmpeg makes of it: the closest one whose numerator and denominator are at
// most 1001000. A decimal as typed is kept exactly (29.97 → 2997/100, 23.976 → 2997/125);
// 30000/1001 must be given as the fraction's decimal, which comes back as 30000/1001.
func RateOf(fps float64) (Rational, error) {
	if !(fps > 0) || math.IsInf(fps, 0) || fps > rateLimit {
		return Rational{}, fmt.Errorf("not a frame rate: %v", fps)
	}
	// The shortest decimal that reads back as fps: what the user typed, not the binary float.
	x, ok := new(big.Rat).SetString(strconv.FormatFloat(fps, 'g', -1, 64))
	if !ok {
		return Rational{}, fmt.Errorf("not a frame rate: %v", fps)
	}
	num, den := closestFraction(x, rateLimit)
	if num == 0 {
		return Rational{}, fmt.Errorf("frame rate %v is below 1/%d", fps, rateLimit)
	}
	g := gcd(num, den)
	return Rational{num / g, den / g}, nil
}

// closestFraction is the fraction p/q nearest x > 0 with p, q ≤ limit: the last continued-
// fraction convergent within the limit, or the semiconvergent after it when that is nearer.
func closestFraction(x *big.Rat, limit int64) (int, int) {
	p0, q0, p1, q1 := int64(0), int64(1), int64(1), int64(0)
	rest := new(big.Rat).Set(x)
	for {
		a := new(big.Int).Quo(rest.Num(), rest.Denom()) // floor: rest > 0
		if !a.IsInt64() || a.Int64() > limit {
			break
		}
		ai := a.Int64()
		p2, q2 := ai*p1+p0, ai*q1+q0
		if p2 > limit || q2 > limit {
			// The best between p1/q1 and p2/q2 is a semiconvergent (k·p1+p0)/(k·q1+q0), k < ai.
			k := ai
			if p1 > 0 {
				k = min(k, (limit-p0)/p1)
			}
			if q1 > 0 {
				k = min(k, (limit-q0)/q1)
			}
			if sp, sq := k*p1+p0, k*q1+q0; k > 0 && sq > 0 && closer(x, sp, sq, p1, q1) {
				return int(sp), int(sq)
			}
			break
		}
		p0, q0, p1, q1 = p1, q1, p2, q2
		frac := new(big.Rat).Sub(rest, new(big.Rat).SetInt(a))
		if frac.Sign() == 0 {
			break
		}
		rest.Inv(frac)
	}
	if q1 == 0 {
		return 0, 1
	}
	return int(p1), int(q1)
}

// closer reports whether a/b is strictly nearer x than c/d.
func closer(x *big.Rat, a, b, c, d int64) bool {
	e1 := new(big.Rat).Sub(x, big.NewRat(a, b))
	e2 := new(big.Rat).Sub(x, big.NewRat(c, d))
	return e1.Abs(e1).Cmp(e2.Abs(e2)) < 0
}

// ScaleSize is FaceFusion's output size for a frame of width×height at scale: each side
// multiplied and truncated, then rounded to an even number as Python rounds (halves to even,
// so an odd side goes to the neighbour divisible by four). A side that rounds to 0 gives 0×0.
func ScaleSize(width, height int, scale float64) (int, int) {
	even := func(side int) int {
		return int(math.RoundToEven(float64(side)/2)) * 2
	}
	w, h := even(int(float64(width)*scale)), even(int(float64(height)*scale))
	if w <= 0 || h <= 0 {
		return 0, 0
	}
	return w, h
}

// Resampler delivers the output frames [start, end) of a FrameMap from one exact decode of
// the target frames they show: frames the map drops are decoded and skipped, a frame it
// repeats is copied. At the target's rate every frame is decoded straight into the caller's
// buffer, as a plain Decoder does.
type Resampler struct {
	dec       *Decoder
	m         FrameMap
	next, end int    // output frame numbers
	last      int    // the target frame delivered last (-1: none yet)
	held      []byte // a copy of it, made when the next output frame repeats it
	skip      []byte // where dropped frames are decoded
	frameSize int
}

// OpenResampler starts ffmpeg for the output frames [start, end) of m, each width×height
// (see OpenScaledDecoder).
func OpenResampler(ctx context.Context, info *Info, m FrameMap, start, end, width, height int) (*Resampler, error) {
	out0, out1 := m.Output()
	if !m.Valid() || start < out0 || end > out1 || start >= end {
		return nil, fmt.Errorf("video: output frames [%d,%d) are outside [%d,%d), the output of %s's frames [%d,%d) at %s fps: fix the range", start, end, out0, out1, info.Path, m.Start, m.End, m.Out)
	}
	first, stop := m.Sources(start, end)
	dec, err := OpenScaledDecoder(ctx, info, first, stop, width, height)
	if err != nil {
		return nil, err
	}
	return &Resampler{dec: dec, m: m, next: start, end: end, last: -1, frameSize: width * height * 3}, nil
}

// Next reads the next output frame into buf[:width·height·3]; io.EOF after the last, once
// ffmpeg has exited cleanly.
func (r *Resampler) Next(buf []byte) error {
	if r.next == r.end {
		return r.dec.Next(buf) // every frame was read: io.EOF, or ffmpeg's late error
	}
	if len(buf) < r.frameSize {
		return fmt.Errorf("video: frame buffer of %d bytes is too small for %d", len(buf), r.frameSize)
	}
	t := r.m.Source(r.next)
	r.next++
	if t == r.last { // a repeat: held was filled when this frame was decoded
		copy(buf, r.held)
		return nil
	}
	for r.dec.Frame() < t { // frames the output drops
		if r.skip == nil {
			r.skip = make([]byte, r.frameSize)
		}
		if err := r.dec.Next(r.skip); err != nil {
			return eofIsShort(err)
		}
	}
	if err := r.dec.Next(buf); err != nil {
		return eofIsShort(err)
	}
	r.last = t
	if r.next < r.end && r.m.Source(r.next) == t {
		if r.held == nil {
			r.held = make([]byte, r.frameSize)
		}
		copy(r.held, buf[:r.frameSize])
	}
	return nil
}

// eofIsShort: the decoder's range holds every frame the map asks for, so its end before one
// is a short file, not the end of the output.
func eofIsShort(err error) error {
	if err == io.EOF {
		return fmt.Errorf("video: the target ended before a frame the output needs: %w", io.ErrUnexpectedEOF)
	}
	return err
}

// Frame is the output number of the frame the next call to Next returns.
func (r *Resampler) Frame() int { return r.next }

// Close stops ffmpeg (see Decoder.Close).
func (r *Resampler) Close() error { return r.dec.Close() }
