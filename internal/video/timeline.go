package video

import (
	"fmt"
	"math/big"
	"slices"
)

// Timeline is when each frame of a video is shown, exactly, in ticks of TimeBase from the first
// frame's time: frame n (counted from 0) at n·Step when the frames are evenly spaced (Step > 0:
// arithmetic, no table, the usual case), else at PTS[n] − PTS[0] (a variable frame rate, or a
// container whose clock rounds the rate, such as Matroska's millisecond). End is when the last
// frame ends: the duration.
//
// Output frames keep the target's ticks, so a target's 1/30000 time base gives an output whose
// frame 1 is at 1001/30000 s, not at a rounded 33 ms.
type Timeline struct {
	TimeBase Rational
	Step     int64   `json:",omitempty"`
	PTS      []int64 `json:",omitempty"`
	End      int64
}

// evenTimes is n frames at rate fps in time base 1/fps: the timeline of a rate, for a file
// whose packets carry no usable times.
func evenTimes(fps Rational, n int) Timeline {
	if !fps.Valid() {
		return Timeline{}
	}
	return Timeline{TimeBase: Rational{fps.Den, fps.Num}, Step: 1, End: int64(n)}
}

// Valid reports whether t has a time base and frames.
func (t Timeline) Valid() bool { return t.TimeBase.Valid() && (t.Step > 0 || len(t.PTS) > 0) }

// At is frame n's time.
func (t Timeline) At(n int) int64 {
	if t.Step > 0 {
		return int64(n) * t.Step
	}
	return t.PTS[n] - t.PTS[0]
}

// Slice is the timeline of the frames [start, end), from start's time.
func (t Timeline) Slice(start, end, frames int) Timeline {
	s := Timeline{TimeBase: t.TimeBase, Step: t.Step}
	if t.Step == 0 {
		s.PTS = t.PTS[start:end]
	}
	if end < frames {
		s.End = t.At(end) - t.At(start)
	} else {
		s.End = t.End - t.At(start)
	}
	return s
}

// Micros is tick n of t in microseconds, rounded to the nearest (halves away from zero), as
// ffmpeg's av_rescale_q rounds: exact arithmetic, for any length of video.
func (t Timeline) Micros(n int64) int64 {
	num := new(big.Int).Mul(big.NewInt(n), big.NewInt(int64(t.TimeBase.Num)*1_000_000))
	den := big.NewInt(int64(t.TimeBase.Den))
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	if r.Sign() != 0 && new(big.Int).Mul(new(big.Int).Abs(r), big.NewInt(2)).Cmp(den) >= 0 {
		if num.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q.Int64()
}

// setTimes builds info.Times from the packet timestamps of its video stream (decode order):
// sorted, they are the frames' presentation times. Evenly spaced times keep only their step.
// Packets without a time, or a count that is not the frame count, leave the timeline of the
// rate (evenTimes) that parseProbe set.
func (info *Info) setTimes(pts []int64) {
	if len(pts) != info.Frames || !info.streamTB.Valid() || slices.Contains(pts, minTime) {
		return
	}
	sorted := slices.Clone(pts)
	slices.Sort(sorted)
	t := Timeline{TimeBase: info.streamTB}
	if len(sorted) > 1 {
		t.Step = sorted[1] - sorted[0]
		for i, p := range sorted {
			if p-sorted[0] != int64(i)*t.Step {
				t.Step = 0
				break
			}
		}
	}
	last := sorted[len(sorted)-1] - sorted[0]
	var gap int64 // the last frame lasts as long as the one before it, unless the stream says
	switch {
	case t.Step > 0:
		gap = t.Step
	case len(sorted) > 1:
		gap = sorted[len(sorted)-1] - sorted[len(sorted)-2]
	default:
		// One frame: one frame at the rate, if the rate is a whole number of ticks.
		if g := ticksPerFrame(info.FPS, t.TimeBase); g > 0 {
			gap = g
		} else {
			return
		}
		t.Step = gap
	}
	if t.Step == 0 {
		t.PTS = sorted
	}
	t.End = last + gap
	if info.streamEnd-sorted[0] > last {
		t.End = info.streamEnd - sorted[0]
	}
	info.Times = t
}

// rateTimes is the timeline of info's rate in its stream's time base (evenClock): frame n at
// n·step, step the ticks of one frame, ending as setTimes ends the same frames read from the
// packets, so both give one Timeline for a constant-rate file.
func (info *Info) rateTimes() Timeline {
	step := ticksPerFrame(info.FPS, info.streamTB)
	t := Timeline{TimeBase: info.streamTB, Step: step, End: int64(info.Frames) * step}
	if last := int64(info.Frames-1) * step; info.streamEnd-info.streamStart > last {
		t.End = info.streamEnd - info.streamStart
	}
	return t
}

const minTime = -1 << 63

// ticksPerFrame is one frame at fps in time base tb, or 0 when that is not a whole number.
func ticksPerFrame(fps, tb Rational) int64 {
	num, den := int64(fps.Den)*int64(tb.Den), int64(fps.Num)*int64(tb.Num)
	if den == 0 || num%den != 0 {
		return 0
	}
	return num / den
}

func (t Timeline) String() string {
	if t.Step > 0 {
		return fmt.Sprintf("every %d × %s s", t.Step, t.TimeBase)
	}
	return fmt.Sprintf("%d frame times in %s s", len(t.PTS), t.TimeBase)
}
