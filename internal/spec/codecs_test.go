package spec

import (
	"context"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// An output whose container FaceFusion writes with libx264 whatever is asked (.m4v, .mpeg,
// .mxf, .wmv) is written with libx264 when NVENC was chosen for it: the spec's codecs, which
// the job folder's manifest records and a resume runs again, name libx264 too, not the NVENC
// encoder no segment is written with.
func TestWithCodecsContainerEncoder(t *testing.T) {
	info := &video.Info{Path: "t.mp4", Width: 64, Height: 48, FPS: video.Rational{Num: 25, Den: 1}, Frames: 10}
	for _, out := range []string{"o.m4v", "o.MPEG", "o.mxf", "o.wmv"} {
		cfg := job.Default()
		cfg.TargetPath, cfg.OutputPath = "t.mp4", out
		s, err := Resolve(cfg, info)
		if err != nil {
			t.Fatal(err)
		}
		hw := s.WithCodecs(Codecs{Encoder: "h264_nvenc", Requested: "libx264", HardwareDecode: true})
		if hw.Codecs.Encoder != "libx264" || hw.Encode.Encoder != "libx264" || hw.SegmentOptions(0).Encoder != "libx264" {
			t.Errorf("%s with h264_nvenc chosen: codecs' encoder %q, segments' %q; want libx264 for both", out, hw.Codecs.Encoder, hw.Encode.Encoder)
		}
		if !hw.Codecs.HardwareDecode || hw.Codecs.Requested != "libx264" {
			t.Errorf("%s: the rest of the codecs changed: %+v", out, hw.Codecs)
		}
	}
}

// Such a container is not given NVENC at all: hardware_codecs auto encodes with libx264 and
// tries no NVENC encoder (a trial here, without NVENC, would have said why it failed), and on
// refuses it as a usage error naming the container. A rank's early trial (HardwareTrial) tries
// what ChooseCodecs would.
func TestNoHardwareEncoderForContainerEncoder(t *testing.T) {
	ctx := context.Background()
	for _, out := range []string{"o.m4v", "o.mpeg", "o.mxf", "o.WMV"} {
		enc, said, err := chooseEncoder(ctx, out, "libx264", "auto", true, Folder{})
		if err != nil || enc != "libx264" || len(said) != 0 {
			t.Errorf("%s, auto: %q, said %q, %v; want libx264 without a trial", out, enc, said, err)
		}
		_, _, err = chooseEncoder(ctx, out, "libx264", "on", true, Folder{})
		if fault.KindOf(err) != fault.Usage || !strings.Contains(err.Error(), "a "+out[1:]+" output") {
			t.Errorf("%s, on: %v; want a usage error naming the container", out, err)
		}
	}
	for _, c := range []struct{ out, asked, want string }{
		{"o.mp4", "", "h264_nvenc"},
		{"o.mkv", "libx265", "hevc_nvenc"},
		{"o.mp4", "hevc_nvenc", "hevc_nvenc"},
		{"o.m4v", "libx265", ""},
		{"o.wmv", "h264_nvenc", ""},
		{"o.mkv", "ffv1", ""},
	} {
		cfg := job.Default()
		cfg.OutputPath, cfg.OutputVideoEncoder = c.out, c.asked
		if got := HardwareTrial(cfg); got != c.want {
			t.Errorf("%s with %q: trial of %q, want %q", c.out, c.asked, got, c.want)
		}
	}
}

// The parallel join is the spec's to say: by the container, the encoder the segments are
// written with and the output's time base; before any target (plan --frames) by the container
// and the job's own encoder, FaceFusion's swap for the container applied.
func TestParallelJoin(t *testing.T) {
	for _, c := range []struct {
		out, asked string
		want       bool
	}{
		{"", "", true},
		{"o.mp4", "libx265", true},
		{"o.mov", "libvpx-vp9", true}, // written with libx264
		{"o.mkv", "libx264", false},
		{"o.mp4", "ffv1", false},
		{"o.webm", "libx264", false},
	} {
		cfg := job.Default()
		cfg.OutputPath, cfg.OutputVideoEncoder = c.out, c.asked
		if got := ParallelContainer(cfg); got != c.want {
			t.Errorf("%q with %q: parallel %v, want %v", c.out, c.asked, got, c.want)
		}
	}
	cfg := job.Default()
	cfg.TargetPath, cfg.OutputPath = "t.mp4", "o.mp4"
	for _, c := range []struct {
		base video.Rational
		want bool
	}{{video.Rational{Num: 1, Den: 12800}, true}, {video.Rational{Num: 1001, Den: 30000}, false}} {
		info := &video.Info{Path: "t.mp4", Width: 64, Height: 48, FPS: video.Rational{Num: 25, Den: 1}, Frames: 10,
			Times: video.Timeline{TimeBase: c.base, Step: 512, End: 5120}}
		s, err := Resolve(cfg, info)
		if err != nil {
			t.Fatal(err)
		}
		if got, why := s.ParallelJoin(); got != c.want || got == (why != "") {
			t.Errorf("time base %s: parallel %v (%q), want %v", c.base, got, why, c.want)
		}
	}
}
