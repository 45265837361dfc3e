package spec

import (
	"fmt"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// The output video's frames, rate and size, from the trim range, output_video_fps and
// output_video_scale, as FaceFusion derives them: Resolve asks these functions, once.

// outputRate is the output's frame rate: output_video_fps as ffmpeg reads a decimal rate, or
// the target's own (exactly, 30000/1001 included) when it is 0.
func outputRate(cfg job.Config, info *video.Info) video.Rational {
	if cfg.OutputVideoFPS == 0 {
		return info.FPS
	}
	r, err := video.RateOf(cfg.OutputVideoFPS)
	if err != nil { // job.Config.Validate refused it already
		panic(fmt.Sprintf("spec: output_video_fps %v passed validation: %v", cfg.OutputVideoFPS, err))
	}
	return r
}

// outputSize is the output's frame size: the target's at scale 1 (an odd size included,
// encoded as yuv444p by x264 and x265), else FaceFusion's scaled size (video.ScaleSize),
// which is always even. 0×0 when the scale leaves no pixel (checkOutputSize says so).
func outputSize(cfg job.Config, info *video.Info) (width, height int) {
	if cfg.OutputVideoScale == 1 {
		return info.Width, info.Height
	}
	return video.ScaleSize(info.Width, info.Height, cfg.OutputVideoScale)
}

// processSize is the size the frames are decoded at and swapped at: the output's when it is
// smaller than the target's (ffmpeg scales while decoding), the target's when the output is
// larger (the encoder scales the finished frames up). FaceFusion does the same: it works at
// the smaller of the two sizes and lets ffmpeg's encoder make the output size.
func processSize(cfg job.Config, info *video.Info) (width, height int) {
	w, h := outputSize(cfg, info)
	if cfg.OutputVideoScale > 1 {
		return info.Width, info.Height
	}
	return w, h
}

// frameRange is the trimmed half-open frame range of a target with frames frames.
func frameRange(cfg job.Config, frames int) (start, end int, err error) {
	start, end = 0, frames
	if cfg.TrimFrameStart >= 0 {
		start = cfg.TrimFrameStart
	}
	if cfg.TrimFrameEnd >= 0 && cfg.TrimFrameEnd < end {
		end = cfg.TrimFrameEnd
	}
	if start >= end {
		return 0, 0, fmt.Errorf("the trim range [%d, %d) holds no frame of its %d frames: adjust --trim-frame-start/--trim-frame-end", start, end, frames)
	}
	return start, end, nil
}

// outputFrames is the output's timeline over the target's trimmed range (given in the target's
// frame numbers, as FaceFusion's trim is) at the output's rate.
func outputFrames(cfg job.Config, info *video.Info) (video.FrameMap, error) {
	start, end, err := frameRange(cfg, info.Frames)
	if err != nil {
		return video.FrameMap{}, err
	}
	m := video.FrameMap{Start: start, End: end, In: info.FPS, Out: outputRate(cfg, info)}
	if m.Resampled() && info.VFR {
		// The map picks source frames by index at a constant input rate: on a variable rate the
		// frames would be picked at the wrong times and the audio, cut to the target's real
		// times, would not match them.
		return video.FrameMap{}, fmt.Errorf("--output-video-fps %v: the target has a variable frame rate (nominal %s), which resampling cannot follow yet: leave out --output-video-fps (the output keeps the target's own frame times), or make the target constant-rate first (ffmpeg -i IN -fps_mode cfr -r RATE OUT)", cfg.OutputVideoFPS, info.FPS)
	}
	return m, nil
}

// outputTimes is the output's timeline of m, frame 0 being the trim start: the target's own
// frame times (its time base, its variable rate) when the rate is kept, evenly spaced frames
// at the output's rate when output_video_fps resamples.
func outputTimes(info *video.Info, m video.FrameMap) video.Timeline {
	if !info.Times.Valid() {
		return video.Timeline{} // the encoder spaces frames evenly at the rate
	}
	if m.Resampled() {
		out := m.Out
		return video.Timeline{TimeBase: video.Rational{Num: out.Den, Den: out.Num}, Step: 1, End: int64(m.Frames())}
	}
	return info.Times.Slice(m.Start, m.End, info.Frames)
}

// targetSpan is the time range of the target that the output's video of m covers, in the
// target's container time: from the trim start's frame to the end of the trim end's last frame,
// from the target's frame times (a variable rate included) after the video stream's own start.
// The target's other streams (its audio) are cut to it, as FaceFusion cuts the audio to the
// video's duration. Its Timecode is the target's at the trim start's frame.
func targetSpan(info *video.Info, m video.FrameMap) video.Span {
	tc := video.TimecodeAt(info.Timecode, info.FPS, m.Start) // timecodes count frames
	trim := m.Start > 0 || m.End < info.Frames
	// In container time: a video stream that starts after the audio (an offset, a B-frame
	// delay in Matroska) keeps its place against the audio.
	t, lead := info.Times, max(0, info.VideoStart)
	if !t.Valid() {
		sp := video.FrameSpan(m.Start, m.End, m.In)
		return video.Span{Start: lead + sp.Start, End: lead + sp.End, Timecode: tc, Rate: info.FPS, Trim: trim}
	}
	start := t.At(m.Start)
	end := start + t.Slice(m.Start, m.End, info.Frames).End
	us := func(n int64) time.Duration { return time.Duration(t.Micros(n)) * time.Microsecond }
	return video.Span{Start: lead + us(start), End: lead + us(end), Timecode: tc, Rate: info.FPS, Trim: trim}
}

// checkOutputSize refuses, before the first frame, a scale that leaves the output no pixel.
func checkOutputSize(cfg job.Config, info *video.Info) error {
	if w, h := outputSize(cfg, info); w <= 0 || h <= 0 {
		return fault.AsUsage(fmt.Errorf("--output-video-scale %v leaves nothing of the target's %dx%d frames (FaceFusion's rounding makes a side under 2 pixels 0): choose a larger scale", cfg.OutputVideoScale, info.Width, info.Height))
	}
	return nil
}
