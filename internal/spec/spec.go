// Package spec is a job's output resolved once: from the settings and the target's probe, rank 0
// derives the output's frames, times, sizes, rate, audio, codecs and carried streams, and every
// rank reads them from the Spec it broadcasts rather than deriving them again. An image job's
// output is its Image, resolved by the rank that runs it from the image's size.
//
// The config stays as it was validated: what a run makes of it (the encoder hardware_codecs
// chose, the trim range's automatic ends, the target's rate) is the Spec's.
package spec

import (
	"fmt"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/swap"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// Spec is the output of a video job as resolved on rank 0 (Resolve), sent to every rank in the
// plan: every field survives JSON, and no rank derives these facts from the config again.
type Spec struct {
	Target string // the target's path, for messages
	Output string // the output's path
	// Map is the output's timeline over the target's trimmed range, resampled to the output's
	// rate (the identity at the target's). Every record of the job counts the output's frames,
	// numbered from the trim start (the target's numbers when the rate is kept).
	Map video.FrameMap
	// Span is the time range of the target the output's video covers (TargetSpan's).
	Span video.Span
	// Encode is how the segments are encoded: the encoder Codecs chose (FaceFusion's swap for
	// the container applied), the output's rate and size, the size of the frames the encoder
	// is handed (the processed frames: frame_enhancer's upscale makes them larger than they
	// were decoded), and the output's frame times. First is 0: SegmentOptions sets it.
	Encode video.EncodeOptions
	// ProcessWidth×ProcessHeight is the size the frames are decoded and processed at
	// (processSize); 0: Encode's frame size (a plan from before frame_enhancer).
	ProcessWidth, ProcessHeight int                `json:",omitempty"`
	Audio                       video.AudioOptions // the output's audio: copied, or re-encoded
	Codecs                      Codecs             // the video codecs every rank runs
	// Carried is what the output keeps of the target's other streams (CheckFormat's).
	Carried video.Carried
	Window  Window // the time window the faces are analysed over
}

// Window is the time window a job's faces are analysed over: K frames each side, smoothed
// (face_landmark_smoothing) or, with Tracks, FaceFusion's face tracker (K its
// target_frame_amount, TrackScore its face_tracker_score). Still, where smoothed, is the wider
// window a face still over all of it is averaged over (temporal.Smoother.Still).
type Window struct {
	K          int
	Still      int     `json:",omitempty"`
	Tracks     bool    `json:",omitempty"`
	TrackScore float64 `json:",omitempty"`
	// Covers, where smoothed for the classic swap, is how many frames each side its covers
	// are voted over (temporal.Smoother.Covers).
	Covers int `json:",omitempty"`
}

// StillFrames is the most frames each side a still face's points are averaged over.
const StillFrames = 16

// StillOf is the wider window of a still face for face_landmark_smoothing k: twice k frames each
// side, which halves a keyframe's drift on a still face (docs/performance.md) while a moving face
// keeps k and no lag; at most StillFrames (k itself beyond it), so a rank holds and decodes no
// more frames than face_landmark_smoothing's bound allows.
func StillOf(k int) int { return max(k, min(2*k, StillFrames)) }

// Halo is how many frames each side of its own a rank decodes and analyses for the window: its
// reach, and the covers' vote beyond it.
func (w Window) Halo() int { return max(w.K, w.Still) + w.Covers }

// Resolve is cfg's output for the target of info (a video's probe): the trim range, which must
// hold a frame (an Input fault), and a size that keeps a pixel (a Usage fault). The codecs are
// the job's own encoder and the CPU's decoder until WithCodecs; Carried is CheckFormat's to
// fill.
func Resolve(cfg job.Config, info *video.Info) (*Spec, error) {
	m, err := outputFrames(cfg, info)
	if err != nil {
		return nil, fault.AsInput(fmt.Errorf("target %s: %w", cfg.TargetPath, err))
	}
	if err := checkOutputSize(cfg, info); err != nil {
		return nil, err
	}
	requested := RequestedEncoder(cfg)
	pw, ph := processSize(cfg, info)
	if s := cfg.FrameScale(); s > 1 && !video.PictureFits(pw*s, ph*s) {
		return nil, fault.AsUsage(fmt.Errorf("--frame-enhancer-model %s makes the target %s's frames (processed at %dx%d) %dx%d, larger than ffmpeg encodes (about 16000x16000): choose a model of a smaller scale, or a smaller --output-video-scale",
			cfg.FrameEnhancerModel, cfg.TargetPath, pw, ph, pw*s, ph*s))
	}
	return &Spec{
		Target: cfg.TargetPath, Output: cfg.OutputPath,
		ProcessWidth: pw, ProcessHeight: ph,
		Map:    m,
		Span:   targetSpan(info, m),
		Encode: encodeOptions(cfg, info, m, requested),
		Audio:  AudioOptions(cfg),
		Codecs: Codecs{Encoder: requested, Requested: requested},
		Window: windowOf(cfg),
	}, nil
}

// WithCodecs is s run with c: its segments are encoded with c's encoder, FaceFusion's swap for
// the container applied (as to any encoder asked for), and its Codecs.Encoder is that encoder,
// the one the job folder's manifest records and a resume must run again.
func (s *Spec) WithCodecs(c Codecs) *Spec {
	t := *s
	if c.Encoder != "" {
		c.Encoder = FaceFusionEncoder(s.Output, c.Encoder)
		t.Encode.Encoder = c.Encoder
	}
	t.Codecs = c
	return &t
}

// Times is the output's timeline, frame 0 being the trim start: the target's own frame times
// when the rate is kept, evenly spaced frames at the output's rate when output_video_fps
// resamples; the zero Timeline when the target's frame times are not known.
func (s *Spec) Times() video.Timeline { return s.Encode.Times }

// Rate is the output's frame rate.
func (s *Spec) Rate() video.Rational { return s.Encode.FPS }

// OutputSize is the output's frame size.
func (s *Spec) OutputSize() (width, height int) { return s.Encode.Width, s.Encode.Height }

// ProcessSize is the size the frames are decoded and swapped at (processSize).
func (s *Spec) ProcessSize() (width, height int) {
	if s.ProcessWidth > 0 && s.ProcessHeight > 0 {
		return s.ProcessWidth, s.ProcessHeight
	}
	return s.Encode.FrameWidth, s.Encode.FrameHeight
}

// EncodedFrameSize is the size of the frames the encoder is handed: the processed frames,
// frame_enhancer's scale times ProcessSize (ffmpeg's encoder scales them to OutputSize).
func (s *Spec) EncodedFrameSize() (width, height int) {
	if s.Encode.FrameWidth > 0 && s.Encode.FrameHeight > 0 {
		return s.Encode.FrameWidth, s.Encode.FrameHeight
	}
	return s.Encode.Width, s.Encode.Height
}

// SegmentOptions are the encoder's options for the segment whose first frame is output frame
// start (numbered as Map numbers them): the encoder stamps its frames from there.
func (s *Spec) SegmentOptions(start int) video.EncodeOptions {
	opt := s.Encode
	opt.First = start - s.Map.Start
	return opt
}

// Settled is cfg as the job runs it, what the resume fingerprint compares rather than the
// settings as given: the trim range's automatic ends as frame numbers, the output's rate (0 is
// the target's: the rate is compared), and the job's own encoder (not the NVENC pair a node
// chose for it: a requeue onto another node is the same job).
func (s *Spec) Settled(cfg job.Config) job.Config {
	cfg.TrimFrameStart, cfg.TrimFrameEnd = s.Map.Start, s.Map.End
	cfg.OutputVideoFPS = s.Rate().Float()
	cfg.OutputVideoEncoder = s.Codecs.Requested
	return cfg
}

// ParallelJoin reports whether the output is joined in parallel from MP4 segments
// (video.ParallelJoin: its container, the segments' encoder, the output's time base), and when
// not, why.
func (s *Spec) ParallelJoin() (bool, string) {
	return video.ParallelJoin(s.Output, s.Codecs.Encoder, s.Times())
}

// ParallelContainer reports whether cfg's output container and the job's own encoder are ones
// the parallel join writes, before any target is probed (its time base is the target's): what
// `facefusion plan --frames` models without a target.
func ParallelContainer(cfg job.Config) bool {
	ok, _ := video.ParallelContainer(cfg.OutputPath, RequestedEncoder(cfg))
	return ok
}

// PixelFormatNote is the log line for a target whose odd frame size moves x264 or x265 (the
// job's own encoder) from yuv420p to yuv444p (4:2:0 needs an even width and height), or ""
// when nothing moved. Only the target's own size can be odd: a scaled size is even.
func (s *Spec) PixelFormatNote() string {
	opt := s.Encode
	opt.Encoder = s.Codecs.Requested
	if opt.PixFmt != "" || opt.ChosenPixFmt() != "yuv444p" {
		return ""
	}
	return fmt.Sprintf("the target's frames are %dx%d, an odd size that %s cannot store as yuv420p: the output keeps that size as yuv444p (4:4:4, which some players, browsers among them, do not play; an even-sized target gives yuv420p)",
		opt.Width, opt.Height, opt.ChosenEncoder())
}

// UseDecoder makes every later decoder of this process decode as s's codecs say (NVDEC or
// the CPU); a nil Spec (an image target) decodes on the CPU.
func (s *Spec) UseDecoder() {
	video.SetHardwareDecode(s != nil && s.Codecs.HardwareDecode)
}

// encodeOptions are cfg's encoder settings for the target of info, with encoder enc.
func encodeOptions(cfg job.Config, info *video.Info, m video.FrameMap, enc string) video.EncodeOptions {
	opt := video.EncodeOptions{
		Encoder: FaceFusionEncoder(cfg.OutputPath, enc), Quality: cfg.OutputVideoQuality, Preset: cfg.OutputVideoPreset,
		FPS: m.Out,
	}
	opt.Width, opt.Height = outputSize(cfg, info)
	// FaceFusion writes the processed temp frames as they are (frame_enhancer's larger) and
	// merge_video's -s scales them to the output's size: so does the encoder.
	pw, ph := processSize(cfg, info)
	opt.FrameWidth, opt.FrameHeight = pw*cfg.FrameScale(), ph*cfg.FrameScale()
	opt.Times = outputTimes(info, m)
	return opt
}

// windowOf is cfg's time window: target_frame_amount where FaceFusion's face tracker runs,
// face_landmark_smoothing where faces are analysed otherwise, else none.
func windowOf(cfg job.Config) Window {
	w := Window{Tracks: cfg.Tracks()}
	switch {
	case !cfg.FindsFaces():
	case cfg.Tracks():
		w.K = cfg.TargetFrameAmount
	default:
		w.K = cfg.FaceLandmarkSmoothing
		w.Still = StillOf(w.K)
		if cfg.ClassicWindow() {
			w.Covers = min(w.K, swap.CoverVote)
		}
	}
	if w.Tracks {
		w.TrackScore = cfg.FaceTrackerScore
	}
	return w
}
