package video

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// The fixtures are `ffprobe -v error -of json -show_format -show_streams` of real files
// (ffmpeg 5.1): bf.mp4 as made in clips_test.go and copies of it into other containers.
func TestParseProbeFixtures(t *testing.T) {
	cases := []struct {
		file          string
		w, h          int
		fps           Rational
		frames        int
		needCount     bool
		packets       bool // the frame times must be read from the packets
		audio, image  bool
		vfr           bool
		codec         string
		videoStartMin time.Duration
	}{
		{file: "h264_bframes_2997.json", w: 320, h: 240, fps: Rational{30000, 1001}, frames: 123, audio: true, codec: "h264"},
		{file: "h264_mkv_no_nb_frames.json", w: 320, h: 240, fps: Rational{30000, 1001}, needCount: true, packets: true, audio: true, codec: "h264", videoStartMin: 23 * time.Millisecond},
		{file: "mpegts_start_offset.json", w: 320, h: 240, fps: Rational{30000, 1001}, needCount: true, packets: true, audio: true, codec: "h264", videoStartMin: 23 * time.Millisecond},
		{file: "rotated_90.json", w: 240, h: 320, fps: Rational{30000, 1001}, frames: 123, audio: true, codec: "h264"},
		{file: "image_png.json", w: 512, h: 512, fps: Rational{1, 1}, frames: 1, image: true, codec: "png"},
		{file: "vfr_mkv.json", w: 64, h: 48, fps: Rational{25, 1}, needCount: true, packets: true, codec: "h264"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			info, needCount, err := parseProbe("target.mp4", data)
			if err != nil {
				t.Fatal(err)
			}
			if info.Width != c.w || info.Height != c.h {
				t.Errorf("size %dx%d, want %dx%d", info.Width, info.Height, c.w, c.h)
			}
			if info.FPS != c.fps {
				t.Errorf("fps %v, want %v", info.FPS, c.fps)
			}
			if needCount != c.needCount {
				t.Errorf("needCount %v, want %v", needCount, c.needCount)
			}
			if got := info.needsPacketTimes(needCount); !c.image && got != c.packets {
				t.Errorf("packet times needed %v, want %v", got, c.packets)
			}
			// A constant rate the clock holds: frame n at n·1001 ticks of 1/30000 s, 123 frames
			// long, as the packets of bf.mp4 say.
			if want := (Timeline{TimeBase: Rational{1, 30000}, Step: 1001, End: 123123}); !c.packets && !c.image && !reflect.DeepEqual(info.Times, want) {
				t.Errorf("times %+v, want %+v", info.Times, want)
			}
			if !c.needCount && info.Frames != c.frames {
				t.Errorf("frames %d, want %d", info.Frames, c.frames)
			}
			if info.HasAudio != c.audio || info.IsImage != c.image || info.VFR != c.vfr || info.Codec != c.codec {
				t.Errorf("audio/image/vfr/codec = %v/%v/%v/%s, want %v/%v/%v/%s",
					info.HasAudio, info.IsImage, info.VFR, info.Codec, c.audio, c.image, c.vfr, c.codec)
			}
			wantAudio := "" // every fixture's audio is AAC
			if c.audio {
				wantAudio = "aac"
			}
			if info.AudioCodec != wantAudio {
				t.Errorf("audio codec %q, want %q", info.AudioCodec, wantAudio)
			}
			if info.VideoStart < c.videoStartMin || info.VideoStart > c.videoStartMin+time.Millisecond {
				t.Errorf("video start %v, want %v", info.VideoStart, c.videoStartMin)
			}
		})
	}
}

func TestParseProbeAudioOnly(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "audio_only.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = parseProbe("song.m4a", data)
	if err == nil || !strings.Contains(err.Error(), "song.m4a") || !strings.Contains(err.Error(), "no video stream") {
		t.Fatalf("audio-only file: got %v, want an error naming song.m4a and its missing video stream", err)
	}
}

func TestParseProbeVFRByCount(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "vfr_mkv.json"))
	if err != nil {
		t.Fatal(err)
	}
	info, _, err := parseProbe("vfr.mkv", data)
	if err != nil {
		t.Fatal(err)
	}
	info.setCount(20) // the clip's real frame count: 1.56 s at 25 fps would be 39
	if !info.VFR || info.Frames != 20 {
		t.Fatalf("VFR %v frames %d, want VFR with 20 frames", info.VFR, info.Frames)
	}
}

func TestParseRational(t *testing.T) {
	for in, want := range map[string]Rational{"30000/1001": {30000, 1001}, "25/1": {25, 1}, "50/2": {25, 1}, "24": {24, 1}, "0/0": {}} {
		got, err := ParseRational(in)
		if err != nil || got != want {
			t.Errorf("ParseRational(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseRational("fast"); err == nil {
		t.Error("ParseRational(fast) succeeded")
	}
	if got := (Rational{30000, 1001}).FrameTime(30000); got != 1001*time.Second {
		t.Errorf("frame 30000 at 29.97 is at %v, want 1001s", got)
	}
}

// Probe's view of real clips. The test clips' probes are probe's, made by Probe once a test
// binary (here, or by the first test that decodes the clip): Probe of a clip gives the same
// Info every time, and the tests that count Probe's ffprobe runs call it afresh.
func TestProbeReal(t *testing.T) {
	testenv.Full(t, "probes the real clips")
	mp4 := probe(t, clip(t, "bf.mp4"))
	if mp4.Frames != 123 || mp4.FPS != (Rational{30000, 1001}) || !mp4.HasAudio || mp4.VFR || mp4.IsImage || mp4.Width != 160 || mp4.Height != 120 {
		t.Errorf("bf.mp4: %+v", mp4)
	}
	if d := mp4.Duration - 4104*time.Millisecond; d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("bf.mp4 duration %v, want 4.104s", mp4.Duration)
	}
	// No frame count in the container: counted, and exact.
	for _, name := range []string{"bf.mkv", "bf.ts"} {
		info := probe(t, clip(t, name))
		if info.Frames != 123 || info.VFR {
			t.Errorf("%s: frames %d VFR %v, want 123 constant-rate", name, info.Frames, info.VFR)
		}
	}
	// Indexed constant-rate containers take the seeking path; the rest decode from frame 0.
	for name, want := range map[string]bool{"bf.mp4": true, "bf.mkv": true, "bf.ts": false, "vfr.mkv": false} {
		if got := probe(t, clip(t, name)).seekable(); got != want {
			t.Errorf("%s: seekable %v, want %v", name, got, want)
		}
	}
	vfr := probe(t, clip(t, "vfr.mkv"))
	if vfr.Frames != 41 || !vfr.VFR {
		t.Errorf("vfr.mkv: frames %d VFR %v, want 41 variable-rate", vfr.Frames, vfr.VFR)
	}
	img := probeAfresh(t, testenv.Sample(t, "astronaut.png"))
	if !img.IsImage || img.Frames != 1 || img.Width != 512 || img.Height != 512 {
		t.Errorf("astronaut.png: %+v", img)
	}
	jpg := probeAfresh(t, testenv.Sample(t, "grace_hopper.jpg"))
	if !jpg.IsImage || jpg.Frames != 1 {
		t.Errorf("grace_hopper.jpg: %+v", jpg)
	}
}

func TestProbeErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		path string
		want string
	}{
		{filepath.Join(t.TempDir(), "nothere.mp4"), "does not exist"},
		{clip(t, "truncated.mp4"), "corrupt, truncated"},
		{clip(t, "junk.mp4"), "corrupt, truncated"},
		{clip(t, "audio.m4a"), "no video stream"},
	}
	for _, c := range cases {
		_, err := Probe(context.Background(), c.path)
		if err == nil {
			t.Errorf("%s: probe succeeded", c.path)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.path) || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q should be one line naming the file and saying %q", c.path, msg, c.want)
		}
	}
	// ffprobe's own words come along, so the user sees why.
	_, err := Probe(context.Background(), clip(t, "truncated.mp4"))
	if err == nil || !strings.Contains(err.Error(), "moov atom not found") {
		t.Errorf("truncated mp4: %v, want ffprobe's \"moov atom not found\"", err)
	}
}

// Without ffprobe nothing is known of the target: the environment is at fault (exit 4), not
// the file.
func TestProbeWithoutFFprobe(t *testing.T) {
	saved := FFprobe
	FFprobe = filepath.Join(t.TempDir(), "no-ffprobe")
	defer func() { FFprobe = saved }()
	in := filepath.Join(t.TempDir(), "any.mp4")
	if err := os.WriteFile(in, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Probe(context.Background(), in)
	if fault.KindOf(err) != fault.Environment || !strings.Contains(err.Error(), "install ffmpeg") || strings.Contains(err.Error(), "corrupt") {
		t.Errorf("Probe without ffprobe: %v (kind %v), want an environment error saying to install ffmpeg", err, fault.KindOf(err))
	}
}

// A constant-rate MP4 or MOV with a frame count is probed in one ffprobe run (no packet pass
// over the whole file), and its arithmetic timeline is the one its packets give; a file whose
// rate may vary or whose clock rounds it (Matroska) or that has no frame count reads the
// packets. The runs are counted through FFprobe, pointed at a script that counts each one and
// runs the real ffprobe.
func TestProbeReadsPacketsOnlyWhenNeeded(t *testing.T) {
	testenv.Full(t, "runs ffprobe on long clips")
	clips := map[string]bool{"bf.mp4": false, "faststart.mp4": false, "pcm.mov": false, "bf.mkv": true, "bf.ts": true, "vfr.mp4": true, "cut.mp4": true}
	for name := range clips {
		clip(t, name) // made with the real ffprobe's checks, before the count
	}
	counted, runs := testenv.Counted(t, "ffprobe")
	saved := FFprobe
	FFprobe = counted
	defer func() { FFprobe = saved }()
	for name, packets := range clips {
		runs()
		info := probeAfresh(t, clip(t, name))
		if n, want := runs(), map[bool]int{false: 1, true: 2}[packets]; n != want {
			t.Errorf("%s: %d ffprobe run(s), want %d", name, n, want)
		}
		if packets {
			continue
		}
		pts, _, err := packetTimes(context.Background(), info.Path)
		if err != nil {
			t.Fatal(err)
		}
		read := *info
		read.setTimes(pts)
		if info.Times.Step == 0 || !reflect.DeepEqual(read.Times, info.Times) {
			t.Errorf("%s: arithmetic times %+v, the packets' %+v", name, info.Times, read.Times)
		}
	}
}

// A stream-copy cut between key frames keeps the packets from the key frame before the cut,
// flagged discard: the probe's frames are those a decoder shows (ffprobe decoding them, and
// ffmpeg's framemd5), at the decoder's times, and the Decoder gives every one of them. cut.mp4's
// header count (13, a decoder shows 12) is within the rate's tolerance of its duration: only
// the duration's ticks show the cut. vfrcut.mp4 is the variable-rate case, one packet discarded.
func TestProbeCutShowsDecodedFrames(t *testing.T) {
	testenv.Full(t, "decodes cut clips with ffmpeg")
	for name, frames := range map[string]int{"cut.mp4": 12, "vfrcut.mp4": 19} {
		path := clip(t, name)
		if flags := ffprobeField(t, path, "v:0", "packet=flags"); !strings.Contains(flags, "D") {
			t.Fatalf("%s: no discarded packet (flags %q): the clip is not a cut", name, flags)
		}
		info := probeAfresh(t, path)
		var shown []int64 // the decoder's frame times
		for _, f := range strings.Fields(strings.ReplaceAll(ffprobeField(t, path, "v:0", "frame=pts"), ",", " ")) {
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				t.Fatalf("%s: frame pts %q", name, f)
			}
			shown = append(shown, v)
		}
		ref := referenceHashes(t, path)
		if len(shown) != frames || len(ref) != frames || info.Frames != frames {
			t.Fatalf("%s: probe %d frames, decoder %d (framemd5 %d), want %d", name, info.Frames, len(shown), len(ref), frames)
		}
		if !info.Times.Valid() || info.Times.TimeBase != info.streamTB {
			t.Fatalf("%s: times %+v, want the stream's time base %v", name, info.Times, info.streamTB)
		}
		for i, p := range shown {
			if got := info.Times.At(i); got != p-shown[0] {
				t.Errorf("%s: frame %d at %d ticks, the decoder shows it at %d", name, i, got, p-shown[0])
			}
		}
		if got := decodeHashes(t, info, 0, info.Frames); !reflect.DeepEqual(got, ref) {
			t.Errorf("%s: the Decoder's %d frames differ from ffmpeg's %d", name, len(got), len(ref))
		}
	}
}
