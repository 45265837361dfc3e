package spec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// videoExtensions is what a user is told to use instead of an extension ffmpeg cannot write.
const videoExtensions = ".mp4, .mkv, .mov …"

// formatsChecked are the outputs CheckFormat passed in this process, by what it checked.
var formatsChecked sync.Map

// CheckFormat refuses, before the first frame, an output that could not be written: an image
// target needs an image output and a video target a video one, and ffmpeg must be able to
// encode a segment with the job's encoder settings and join it, with the target's audio, into
// the output's container. Without it ffmpeg says so at the final join, after every frame was
// processed. It also decides which of the target's other streams (second audio tracks,
// subtitles, …) the output keeps (video.CheckOutput), into s.Carried: the join takes its Keep,
// and its Note is the line to log. s is the job's spec with its codecs chosen (the encoder the
// segments are written with), nil for an image target; info is the target's probe.
func CheckFormat(ctx context.Context, cfg job.Config, s *Spec, info *video.Info) error {
	if s == nil {
		if out := cfg.OutputPath; !video.IsImagePath(out) {
			return fault.AsUsage(fmt.Errorf("-o %s: the target %s is an image, so the output is one too: end -o in .png, .jpg or .jpeg", out, cfg.TargetPath))
		}
		return nil
	}
	carried, err := checkVideo(ctx, cfg, s, info)
	if err == nil {
		s.Carried = carried
	}
	return err
}

// checkVideo is CheckFormat's check of a video output: the streams it carries, or the refusal.
func checkVideo(ctx context.Context, cfg job.Config, s *Spec, info *video.Info) (video.Carried, error) {
	out, ext := cfg.OutputPath, filepath.Ext(cfg.OutputPath)
	if video.IsImagePath(out) {
		return video.Carried{}, fault.AsUsage(fmt.Errorf("-o %s is an image, but the target %s is a video: give a video output (%s)", out, cfg.TargetPath, videoExtensions))
	}
	if ext == "" {
		return video.Carried{}, fault.AsUsage(fmt.Errorf("-o %s has no extension, and the extension chooses the container: use %s", out, videoExtensions))
	}
	if src := s.Audio.Source; src != "" {
		if err := video.CheckSourceAudio(ctx, src); err != nil {
			if ctx.Err() != nil {
				return video.Carried{}, fault.AsInternal(err)
			}
			return video.Carried{}, fault.AsInput(fmt.Errorf("the source audio %s, which replaces the target's audio: %w: give a readable audio file among the sources (-s)", src, err))
		}
	}
	opt := s.Encode
	// The check stamps its frames evenly: the times are not what it checks; their time base
	// chooses the segments' container (video.SegmentExtFor).
	opt.Times = video.Timeline{TimeBase: opt.Times.TimeBase}
	// What the check depends on, all of it (the other streams with their parameters, Params): a
	// batch of targets alike (batch-run) checks once. Text subtitles are checked with their cues,
	// which no key holds: a target with them is checked every time (video.ContentChecked).
	// The streams go in as JSON, every field: %v would print Stream.String, its index, type and
	// codec only.
	others, err := json.Marshal(info.Others)
	if err != nil {
		return video.Carried{}, fault.AsInternal(err)
	}
	key := fmt.Sprintf("%s|%+v|%s|%+v", strings.ToLower(ext), opt, others, s.Audio)
	shared := !video.ContentChecked(info.Others)
	if shared {
		if c, ok := formatsChecked.Load(key); ok {
			return c.(video.Carried), nil
		}
		// An earlier run's pass with the same binaries (video.RecallCheck): the check's three
		// ffmpeg and ffprobe starts were most of a small job's start-up.
		if c, ok := video.RecallCheck(key); ok {
			formatsChecked.Store(key, c)
			return c, nil
		}
	}
	carried, err := video.CheckOutput(ctx, cfg.TempDir(), out, opt, cfg.TargetPath, info.Others, s.Audio)
	if err == nil && shared {
		formatsChecked.Store(key, carried)
		video.RememberCheck(key, carried)
	}
	var oe *video.OutputError
	if !errors.As(err, &oe) {
		return carried, fault.AsInternal(err) // nil, or the check itself could not run (a cancel, no temp folder)
	}
	return carried, fault.AsUsage(outputRefusal(cfg, s, oe))
}

// outputRefusal names the flag behind what ffmpeg refused in the output check of s.
func outputRefusal(cfg job.Config, s *Spec, oe *video.OutputError) error {
	out, ext, enc := cfg.OutputPath, filepath.Ext(cfg.OutputPath), s.Codecs.Encoder
	switch oe.Problem {
	case video.UnknownEncoder:
		return fmt.Errorf("--output-video-encoder %s is not an encoder of this ffmpeg: use libx264, libx265, ffv1, or one `ffmpeg -encoders` lists", enc)
	case video.BadPreset:
		return fmt.Errorf("--output-video-preset %s is not a preset of %s: use ultrafast, superfast, veryfast, faster, fast, medium, slow, slower or veryslow", cfg.OutputVideoPreset, enc)
	case video.EncoderRefused:
		w, h := s.OutputSize()
		return fmt.Errorf("--output-video-encoder %s cannot encode %dx%d frames (the target's at --output-video-scale %v) with quality %d and preset %q (ffmpeg: %s): choose another encoder or settings",
			enc, w, h, cfg.OutputVideoScale, cfg.OutputVideoQuality, cfg.OutputVideoPreset, oe.Detail)
	case video.NoContainer:
		return fmt.Errorf("-o %s: ffmpeg has no container for %q: use %s", out, ext, videoExtensions)
	case video.ImageContainer:
		return fmt.Errorf("-o %s: %q is an image format, but the target %s is a video: use %s", out, ext, cfg.TargetPath, videoExtensions)
	case video.CodecNotInContainer:
		return fmt.Errorf("--output-video-encoder %s cannot be stored in %s (ffmpeg: %s): use %s", enc, ext, oe.Detail, otherContainer(ext, "another encoder", ".mkv"))
	case video.NotReadable:
		return fmt.Errorf("-o %s: ffmpeg writes %q with --output-video-encoder %s, but %s: use %s", out, ext, enc, oe.Detail, otherContainer(ext, "another encoder", ".mkv", ".mp4"))
	case video.AudioNotInContainer, video.UnknownAudioEncoder:
		if a := s.Audio; !a.Copies() {
			return audioRefusal(cfg, a, oe)
		}
		return fmt.Errorf("-o %s: the audio of the target %s cannot be stored in %s, copied or as AAC (ffmpeg: %s): use %s", out, cfg.TargetPath, ext, oe.Detail, otherContainer(ext, "an --output-audio-encoder it holds", ".mkv", ".mp4"))
	}
	return fmt.Errorf("-o %s: ffmpeg cannot write it (%s)", out, oe.Detail)
}
