package video

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// The audio options are FaceFusion's set_audio_quality and set_audio_volume, worked out by hand
// from numpy.interp and numpy.round for each encoder.
func TestAudioArgs(t *testing.T) {
	for _, c := range []struct {
		opt  AudioOptions
		want []string
	}{
		{AudioOptions{}, []string{"-c:a", "copy"}},
		{AudioOptions{Encoder: "aac", Quality: 0, Volume: 100}, []string{"-c:a", "aac", "-q:a", "0.1"}},
		{AudioOptions{Encoder: "aac", Quality: 30, Volume: 100}, []string{"-c:a", "aac", "-q:a", "0.7"}}, // 0.67
		{AudioOptions{Encoder: "aac", Quality: 80, Volume: 100}, []string{"-c:a", "aac", "-q:a", "1.6"}}, // 1.62
		{AudioOptions{Encoder: "aac", Quality: 100, Volume: 100}, []string{"-c:a", "aac", "-q:a", "2.0"}},
		{AudioOptions{Encoder: "libmp3lame", Quality: 0, Volume: 100}, []string{"-c:a", "libmp3lame", "-q:a", "9"}},
		{AudioOptions{Encoder: "libmp3lame", Quality: 30, Volume: 100}, []string{"-c:a", "libmp3lame", "-q:a", "6"}}, // 6.3
		{AudioOptions{Encoder: "libmp3lame", Quality: 80, Volume: 100}, []string{"-c:a", "libmp3lame", "-q:a", "2"}}, // 1.8
		{AudioOptions{Encoder: "libmp3lame", Quality: 100, Volume: 100}, []string{"-c:a", "libmp3lame", "-q:a", "0"}},
		{AudioOptions{Encoder: "libopus", Quality: 0, Volume: 100}, []string{"-c:a", "libopus", "-b:a", "64k"}},
		{AudioOptions{Encoder: "libopus", Quality: 80, Volume: 100}, []string{"-c:a", "libopus", "-b:a", "218k"}}, // 217.6
		{AudioOptions{Encoder: "libopus", Quality: 100, Volume: 100}, []string{"-c:a", "libopus", "-b:a", "256k"}},
		{AudioOptions{Encoder: "libvorbis", Quality: 0, Volume: 100}, []string{"-c:a", "libvorbis", "-q:a", "-1.0"}},
		{AudioOptions{Encoder: "libvorbis", Quality: 30, Volume: 100}, []string{"-c:a", "libvorbis", "-q:a", "2.3"}},
		{AudioOptions{Encoder: "libvorbis", Quality: 80, Volume: 100}, []string{"-c:a", "libvorbis", "-q:a", "7.8"}},
		{AudioOptions{Encoder: "libvorbis", Quality: 100, Volume: 100}, []string{"-c:a", "libvorbis", "-q:a", "10.0"}},
		{AudioOptions{Encoder: "flac", Quality: 10, Volume: 100}, []string{"-c:a", "flac"}}, // lossless: no quality
		{AudioOptions{Encoder: "pcm_s16le", Quality: 10, Volume: 100}, []string{"-c:a", "pcm_s16le"}},
		{AudioOptions{Encoder: "pcm_s32le", Quality: 10, Volume: 50}, []string{"-c:a", "pcm_s32le", "-filter:a", "volume=0.5"}},
		{AudioOptions{Encoder: "aac", Quality: 80, Volume: 0}, []string{"-c:a", "aac", "-q:a", "1.6", "-filter:a", "volume=0"}},
		{AudioOptions{Encoder: "aac", Quality: 80, Volume: 7}, []string{"-c:a", "aac", "-q:a", "1.6", "-filter:a", "volume=0.07"}},
		// Copied audio takes no quality or volume: they need a re-encode.
		{AudioOptions{Quality: 10, Volume: 50}, []string{"-c:a", "copy"}},
	} {
		if got := c.opt.args(); !slices.Equal(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.opt, got, c.want)
		}
	}
	names := AudioEncoderNames() // FaceFusion's order: its default is the first this ffmpeg has
	if want := []string{"flac", "aac", "libmp3lame", "libopus", "libvorbis", "pcm_s16le", "pcm_s32le"}; !slices.Equal(names, want) {
		t.Errorf("encoders %q, want FaceFusion's %q", names, want)
	}
	for out, want := range map[string]string{"o.mp4": "aac", "o.mkv": "aac", "o.mov": "aac", "o.WEBM": "libopus", "o.webm.tmp": "libopus"} {
		if got := DefaultAudioEncoder(out); got != want {
			t.Errorf("DefaultAudioEncoder(%s) = %s, want %s", out, got, want)
		}
	}
}

// Join re-encodes the target's audio as asked: the codec, the volume (50 % is 6 dB quieter)
// and the quality (a larger audio stream at 100 than at 0) all show in what ffprobe and
// ffmpeg read back. The target's title and chapters are kept, whether or not a stream is.
func TestJoinReencodesAudio(t *testing.T) {
	testenv.Full(t, "encodes and joins clips with audio")
	dir := t.TempDir()
	meta := filepath.Join(dir, "meta.txt")
	if err := os.WriteFile(meta, []byte(";FFMETADATA1\ntitle=The target\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=200\n"+
		"[CHAPTER]\nTIMEBASE=1/1000\nSTART=200\nEND=400\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "src.mkv") // 10 frames of 64x48 with a 440 Hz tone, a title, 2 chapters
	ffmpegRun(t, "-f", "lavfi", "-i", "color=s=64x48:r=25", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
		"-i", meta, "-map", "0:v", "-map", "1:a", "-map_metadata", "2", "-map_chapters", "2",
		"-frames:v", "10", "-shortest", "-c:v", "ffv1", "-c:a", "pcm_s16le", src)
	var keep []Carry
	for _, s := range probe(t, src).Others {
		keep = append(keep, Carry{Stream: s})
	}
	mux := func(name string, a AudioOptions) string {
		t.Helper()
		out := filepath.Join(dir, name)
		// The target is its own segment: the join takes only its video from it.
		if err := Join(context.Background(), Mux{Times: evenTimes(Rational{25, 1}, 10), Target: src, Keep: keep, Audio: a}, []JoinSegment{{Path: src}}, out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	copied := mux("copied.mkv", AudioOptions{})
	copiedFacts := audioOf(t, copied)
	if got := copiedFacts.codec; got != "pcm_s16le" {
		t.Errorf("copied audio is %s, want the target's pcm_s16le", got)
	}
	all := keep
	keep = nil // nothing carried: the target is still where the title and chapters come from
	for _, out := range []string{copied, mux("silent.mkv", AudioOptions{})} {
		a := copiedFacts
		if out != copied {
			a = audioOf(t, out)
		}
		title, chapters := a.title, a.chapters
		if title != "The target" || !slices.Equal(chapters, []string{"0.000000", "0.200000"}) {
			t.Errorf("%s: title %q, chapters at %v; want the target's title and its chapters at 0 and 0.2 s", filepath.Base(out), title, chapters)
		}
	}
	keep = all
	half := mux("half.mkv", AudioOptions{Encoder: "flac", Quality: 80, Volume: 50})
	if got := audioOf(t, half).codec; got != "flac" {
		t.Errorf("audio re-encoded with flac is %s", got)
	}
	if v := testenv.MeanVolumes(t, half, copied); math.Abs(v[0]-v[1]-20*math.Log10(0.5)) > 0.3 {
		t.Errorf("volume 50 changed the mean volume by %.2f dB, want %.2f", v[0]-v[1], 20*math.Log10(0.5))
	}
	low := mux("low.mkv", AudioOptions{Encoder: "libopus", Quality: 0, Volume: 100})
	high := mux("high.mkv", AudioOptions{Encoder: "libopus", Quality: 100, Volume: 100})
	l, h := audioOf(t, low), audioOf(t, high)
	for _, a := range []audioFacts{l, h} {
		if a.codec != "opus" {
			t.Errorf("%s: audio re-encoded with libopus is %s", filepath.Base(a.path), a.codec)
		}
	}
	if l, h := l.bytes, h.bytes; l == 0 || l*2 > h { // 64 kbit/s against 256
		t.Errorf("libopus audio is %d bytes at quality 0 and %d at 100, want at least twice as many at 100", l, h)
	}
}

// The output check refuses, before the first frame, an audio encoder that the output's
// container cannot hold or that ffmpeg does not have, and accepts the ones it can.
func TestCheckOutputAudio(t *testing.T) {
	testenv.Full(t, "ffmpeg's output check on every audio encoder")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := t.TempDir()
	src := clip(t, "pcm3.mkv")
	x264 := EncodeOptions{Encoder: "libx264", Quality: DefaultQuality, Preset: "veryfast", FPS: Rational{25, 1}, Width: 64, Height: 48}
	vp9 := EncodeOptions{Encoder: "libvpx-vp9", Quality: DefaultQuality, FPS: Rational{25, 1}, Width: 64, Height: 48}
	enc := func(name string) AudioOptions { return AudioOptions{Encoder: name, Quality: 80, Volume: 100} }
	for _, c := range []struct {
		name, out string
		opt       EncodeOptions
		audio     AudioOptions
		want      OutputProblem // 0: accepted
		detail    string
	}{
		{"opus in webm", "o.webm", vp9, enc("libopus"), 0, ""}, // the encoder quality or volume alone picks there
		{"pcm in mp4", "o.mp4", x264, enc("pcm_s16le"), AudioNotInContainer, "pcm_s16le"},
		{"flac in ts (dropped)", "o.ts", x264, enc("flac"), AudioNotInContainer, "dropped"},
		{"no such encoder", "o.mkv", x264, enc("no_such_audio"), UnknownAudioEncoder, "no_such_audio"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := checkOutput(t, filepath.Join(dir, c.out), c.opt, src, c.audio)
			checkRefusal(t, err, c.want, c.detail, tmp)
		})
	}
	// An ffmpeg without libmp3lame that refuses every command line naming it, the video's alone
	// among them (-c:a is on each): still the audio encoder's refusal, not the container's.
	t.Run("an ffmpeg without the encoder", func(t *testing.T) {
		lacking := filepath.Join(dir, "ffmpeg")
		script := "#!/bin/sh\ncase \"$*\" in *libmp3lame*) echo \"Unknown encoder 'libmp3lame'\" >&2; exit 1;; esac\nexec '" + testenv.Tool(t, "ffmpeg") + "' \"$@\"\n"
		if err := os.WriteFile(lacking, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		saved := FFmpeg
		FFmpeg = lacking
		defer func() { FFmpeg = saved }()
		_, err := checkOutput(t, filepath.Join(dir, "o.mkv"), x264, src, enc("libmp3lame"))
		checkRefusal(t, err, UnknownAudioEncoder, "libmp3lame", tmp)
	})
}

// audioFacts is what the join tests read of an output, from one ffprobe run: its first audio
// stream's codec and the size of all its packets, the file's title and its chapters' starts.
type audioFacts struct {
	path, codec, title string
	bytes              int
	chapters           []string
}

func audioOf(t *testing.T, path string) audioFacts {
	t.Helper()
	var p struct {
		Packets []struct {
			StreamIndex int    `json:"stream_index"`
			Size        string `json:"size"`
		}
		Streams []struct {
			Index     int
			CodecType string `json:"codec_type"`
			CodecName string `json:"codec_name"`
		}
		Chapters []struct {
			StartTime string `json:"start_time"`
		}
		Format struct {
			Tags map[string]string
		}
	}
	out := ffprobeOut(t, "-show_entries", "stream=index,codec_type,codec_name:format_tags=title:chapter=start_time:packet=stream_index,size", "-of", "json", path)
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	a := audioFacts{path: path, title: tag(p.Format.Tags, "title")}
	audio := -1
	for _, s := range p.Streams {
		if s.CodecType == "audio" && audio < 0 {
			audio, a.codec = s.Index, s.CodecName
		}
	}
	for _, k := range p.Packets {
		if k.StreamIndex == audio {
			n, err := strconv.Atoi(k.Size)
			if err != nil {
				t.Fatalf("packet size %q of %s", k.Size, path)
			}
			a.bytes += n
		}
	}
	for _, c := range p.Chapters {
		a.chapters = append(a.chapters, c.StartTime)
	}
	return a
}
