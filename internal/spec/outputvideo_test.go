package spec

import (
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// The output's rate, size and the size frames are swapped at, as FaceFusion derives them: a
// smaller output is decoded small, a larger one is scaled up by the encoder, scale 1 keeps an
// odd target's size; a scale that leaves no pixel is a usage error naming the flag.
func TestOutputVideoGeometry(t *testing.T) {
	info := &video.Info{Path: "t.mp4", Width: 65, Height: 49, FPS: video.Rational{Num: 30000, Den: 1001}, Frames: 100}
	for _, c := range []struct {
		fps, scale     float64
		rate           video.Rational
		ow, oh, pw, ph int
	}{
		{0, 1, video.Rational{Num: 30000, Den: 1001}, 65, 49, 65, 49},     // the target's rate and size, odd kept
		{29.97, 0.5, video.Rational{Num: 2997, Den: 100}, 32, 24, 32, 24}, // 32x24: decoded at the output's size
		{10, 2, video.Rational{Num: 10, Den: 1}, 130, 98, 65, 49},         // swapped at the target's, scaled up at encoding
	} {
		cfg := job.Default()
		cfg.Processors = []string{job.ProcessorNone}
		cfg.OutputVideoFPS, cfg.OutputVideoScale = c.fps, c.scale
		m, err := outputFrames(cfg, info)
		if err != nil || m.In != info.FPS || m.Out != c.rate || m.Start != 0 || m.End != 100 {
			t.Errorf("fps %v: map %+v, %v", c.fps, m, err)
		}
		opt := encodeOptions(cfg, info, m, RequestedEncoder(cfg))
		if opt.FPS != c.rate || opt.Width != c.ow || opt.Height != c.oh || opt.FrameWidth != c.pw || opt.FrameHeight != c.ph {
			t.Errorf("fps %v, scale %v: encoder at %v fps, %dx%d from %dx%d frames; want %v, %dx%d from %dx%d",
				c.fps, c.scale, opt.FPS, opt.Width, opt.Height, opt.FrameWidth, opt.FrameHeight, c.rate, c.ow, c.oh, c.pw, c.ph)
		}
		if opt.FrameSize() != c.pw*c.ph*3 {
			t.Errorf("fps %v, scale %v: the encoder takes %d-byte frames, want %d", c.fps, c.scale, opt.FrameSize(), c.pw*c.ph*3)
		}
		if s, err := Resolve(cfg, info); err != nil {
			t.Errorf("fps %v: %v", c.fps, err)
		} else if run := s.Settled(cfg); run.OutputVideoFPS != c.rate.Float() {
			t.Errorf("fps %v: resolved to %v, want the rate in use %v", c.fps, run.OutputVideoFPS, c.rate.Float())
		}
		if err := checkOutputSize(cfg, info); err != nil {
			t.Errorf("scale %v: %v", c.scale, err)
		}
	}
	// A variable-rate target: its own rate is kept (no map of indexes at a constant rate), but
	// a resample is refused before the first frame, naming the flag and what to do.
	vfr := *info
	vfr.VFR = true
	vc := job.Default()
	if _, err := outputFrames(vc, &vfr); err != nil {
		t.Errorf("a VFR target at its own rate: %v", err)
	}
	vc.OutputVideoFPS = 25
	if _, err := outputFrames(vc, &vfr); err == nil || !strings.Contains(err.Error(), "--output-video-fps 25") || !strings.Contains(err.Error(), "variable frame rate") {
		t.Errorf("a VFR target resampled to 25 fps: %v, want a refusal naming the flag", err)
	}
	cfg := job.Default()
	cfg.OutputVideoScale = 0.25
	tiny := &video.Info{Path: "t.mp4", Width: 6, Height: 4, FPS: video.Rational{Num: 25, Den: 1}, Frames: 10}
	err := checkOutputSize(cfg, tiny)
	if err == nil || fault.KindOf(err) != fault.Usage || !strings.Contains(err.Error(), "--output-video-scale 0.25") {
		t.Errorf("a 6x4 target at scale 0.25: %v, want a usage error naming the flag", err)
	}
}

// The span a trim covers carries the target's timecode moved to the trim start's frame
// (drop-frame at 29.97) and says it is a trim; the whole video is not one.
func TestTargetSpanTimecode(t *testing.T) {
	info := &video.Info{Path: "t.mp4", Width: 64, Height: 48, FPS: video.Rational{Num: 30000, Den: 1001}, Frames: 3000, Timecode: "01:00:59;29"}
	cfg := job.Default()
	cfg.Processors = []string{job.ProcessorNone}
	if sp := span(t, cfg, info); sp.Timecode != "01:00:59;29" || sp.Trim || sp.Rate != info.FPS {
		t.Errorf("the whole video: timecode %q, trim %v, rate %v; want 01:00:59;29, no trim, %v", sp.Timecode, sp.Trim, sp.Rate, info.FPS)
	}
	cfg.TrimFrameStart = 1
	if sp := span(t, cfg, info); sp.Timecode != "01:01:00;02" || !sp.Trim {
		t.Errorf("trimmed from frame 1: timecode %q, trim %v; want 01:01:00;02 (drop-frame), a trim", sp.Timecode, sp.Trim)
	}
	cfg.TrimFrameStart, cfg.TrimFrameEnd = 0, 10
	if sp := span(t, cfg, info); !sp.Trim {
		t.Error("trimmed at the end: not a trim")
	}
}

// span is the target span Resolve gives cfg on the target of info.
func span(t *testing.T, cfg job.Config, info *video.Info) video.Span {
	t.Helper()
	s, err := Resolve(cfg, info)
	if err != nil {
		t.Fatal(err)
	}
	return s.Span
}
