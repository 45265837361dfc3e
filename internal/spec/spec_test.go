package spec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// A Spec travels to every rank in the plan's JSON: every field must arrive as rank 0 resolved
// it, or a rank would encode, cut or join other frames than rank 0 planned. Resolved specs of
// a variable-rate target (its own frame times, a timecode, a trim) and of a resampled, scaled
// one, with chosen codecs, carried streams and a time window, survive Marshal and Unmarshal.
func TestSpecSurvivesJSON(t *testing.T) {
	vfr := &video.Info{Path: "t.mkv", Width: 65, Height: 49, FPS: video.Rational{Num: 30000, Den: 1001}, Frames: 6,
		VFR: true, VideoStart: 40 * time.Millisecond, Timecode: "01:00:00;00",
		Times: video.Timeline{TimeBase: video.Rational{Num: 1, Den: 1000}, PTS: []int64{0, 33, 70, 100, 140, 167}, End: 200}}
	cfr := &video.Info{Path: "t.mp4", Width: 640, Height: 360, FPS: video.Rational{Num: 25, Den: 1}, Frames: 100,
		Times: video.Timeline{TimeBase: video.Rational{Num: 1, Den: 12800}, Step: 512, End: 51200}}
	a := job.Default()
	a.TargetPath, a.OutputPath = "t.mkv", "o.mkv"
	a.TrimFrameStart, a.TrimFrameEnd = 1, 5
	a.OutputAudioEncoder, a.OutputAudioQuality = "libopus", 70
	b := job.Default()
	b.TargetPath, b.OutputPath = "t.mp4", "o.webm"
	b.OutputVideoFPS, b.OutputVideoScale, b.OutputVideoPreset = 10, 0.5, "slow"
	b.Processors, b.FaceTrackerScore = []string{job.ProcessorSwap}, 0.5
	for _, c := range []struct {
		cfg    job.Config
		info   *video.Info
		codecs Codecs
	}{
		{a, vfr, Codecs{Encoder: "h264_nvenc", Requested: "libx264", HardwareDecode: true}},
		{b, cfr, Codecs{Encoder: "libvpx-vp9", Requested: "libvpx-vp9"}},
	} {
		s, err := Resolve(c.cfg, c.info)
		if err != nil {
			t.Fatalf("%s: %v", c.cfg.OutputPath, err)
		}
		s = s.WithCodecs(c.codecs)
		s.Carried = video.Carried{
			Keep: []video.Carry{{Stream: video.Stream{Index: 1, Type: "audio", Codec: "aac", Params: "44100 2"}, AAC: true}, {Stream: video.Stream{Index: 2, Type: "subtitle", Codec: "subrip", Disposition: "default"}, Text: "srt"}},
			Drop: []video.Dropped{{Stream: video.Stream{Index: 3, Type: "data", AttachedPic: true}, Why: "a data stream"}},
		}
		data, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var got Spec
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&got, s) {
			t.Errorf("%s: the spec changed on its way:\n sent %+v\n got  %+v", c.cfg.OutputPath, s, &got)
		}
		if name := zeroField(reflect.ValueOf(got)); name != "" && c.cfg.OutputPath == "o.mkv" {
			t.Errorf("%s: the spec's %s is empty, so the test does not see it travel", c.cfg.OutputPath, name)
		}
	}
}

// zeroField is the name of a field of the struct v that holds its type's zero value, "" when
// every field is set: the test's first spec sets them all, a field added later included.
func zeroField(v reflect.Value) string {
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			return v.Type().Field(i).Name
		}
	}
	return ""
}

// The codecs rank 0 chose are the segments' encoder (FaceFusion's swap for the container
// applied to it, as to any encoder asked for); the fingerprint's settings and the pixel format
// note stay the job's own encoder's, and the config is not touched.
func TestWithCodecs(t *testing.T) {
	info := &video.Info{Path: "t.mp4", Width: 65, Height: 49, FPS: video.Rational{Num: 25, Den: 1}, Frames: 10}
	cfg := job.Default()
	cfg.TargetPath, cfg.OutputPath, cfg.OutputVideoEncoder = "t.mp4", "o.mp4", "libx264"
	s, err := Resolve(cfg, info)
	if err != nil {
		t.Fatal(err)
	}
	if s.Codecs != (Codecs{Encoder: "libx264", Requested: "libx264"}) || s.Encode.Encoder != "libx264" {
		t.Fatalf("before the choice: codecs %+v, encoder %q; want the job's libx264", s.Codecs, s.Encode.Encoder)
	}
	hw := s.WithCodecs(Codecs{Encoder: "h264_nvenc", Requested: "libx264", HardwareDecode: true})
	if hw.Encode.Encoder != "h264_nvenc" || s.Encode.Encoder != "libx264" {
		t.Errorf("the segments' encoder %q (the spec it came from: %q), want h264_nvenc (libx264)", hw.Encode.Encoder, s.Encode.Encoder)
	}
	if got := hw.Settled(cfg).OutputVideoEncoder; got != "libx264" || cfg.OutputVideoEncoder != "libx264" {
		t.Errorf("settled encoder %q, config's %q; want libx264 for both", got, cfg.OutputVideoEncoder)
	}
	if note := hw.PixelFormatNote(); !strings.Contains(note, "65x49") || !strings.Contains(note, "libx264") {
		t.Errorf("an odd-sized target's note: %q, want its size and the job's encoder", note)
	}
	if opt := hw.SegmentOptions(4); opt.First != 4 || opt.Encoder != "h264_nvenc" {
		t.Errorf("segment options from frame 4: first %d, encoder %q", opt.First, opt.Encoder)
	}
}
