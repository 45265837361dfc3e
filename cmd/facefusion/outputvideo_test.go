package main

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// outStream is what ffprobe says of one stream of a file.
type outStream struct {
	Type     string                    `json:"codec_type"`
	Width    int                       `json:"width"`
	Height   int                       `json:"height"`
	Rate     string                    `json:"r_frame_rate"`
	Duration string                    `json:"duration"`
	Tags     struct{ DURATION string } `json:"tags"`
}

// seconds is the stream's duration: its own field (MP4), else Matroska's DURATION tag.
func (s outStream) seconds(t *testing.T) float64 {
	if v, err := strconv.ParseFloat(s.Duration, 64); err == nil {
		return v
	}
	h, rest, _ := strings.Cut(s.Tags.DURATION, ":")
	m, sec, _ := strings.Cut(rest, ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	ss, err3 := strconv.ParseFloat(sec, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatalf("%s stream has no duration (%q, %q)", s.Type, s.Duration, s.Tags.DURATION)
	}
	return float64(hh*3600+mm*60) + ss
}

func streams(t *testing.T, path string) map[string]outStream {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-show_entries",
		"stream=codec_type,width,height,r_frame_rate,duration:stream_tags=DURATION", "-of", "json", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	var p struct{ Streams []outStream }
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	m := map[string]outStream{}
	for _, s := range p.Streams {
		if _, ok := m[s.Type]; !ok {
			m[s.Type] = s
		}
	}
	return m
}

// --output-video-fps and --output-video-scale: a 1 s, 25 fps, 64x48 target with audio becomes
// 10 frames of 32x24 at 10 fps that last as long, the very frames ffmpeg's fps filter makes of
// it, each shrunk as FaceFusion shrinks them (cv2.resize's INTER_LINEAR), with its audio, over 2 ranks (the frames are resampled before they are
// split: each rank's are the ones one ffmpeg makes of the whole target); plan counts the
// output's frames. (A run on 1 rank was compared too: it held the same frames as the 2 ranks'
// and ffmpeg's, so it checked nothing the 2-rank run does not; its split is no split.)
func TestOutputVideoFPSAndScale(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "testsrc=size=64x48:rate=25", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
		"-t", "1", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", in)
	target := streams(t, in)
	flags := []string{"--output-video-fps", "10", "--output-video-scale", "0.5"}

	r := clitest.Run(t, append([]string{"plan", "-t", in, "--ranks", "2", "--chunk-frames", "5"}, flags...)...)
	if r.Code != 0 || !strings.Contains(r.Stdout, "output  10 frames, 32x24, 10/1 fps") || !strings.Contains(r.Stdout, "10 frames in 2 chunk(s) of 5, over 2 rank(s)") {
		t.Errorf("plan: exit %d, want the output's 10 frames of 32x24 in 2 chunks:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := clitest.Run(t, "plan", "-t", in, "--ranks", "2", "--output-video-scale", "0.3"); r.Code != exitUsage ||
		!strings.Contains(r.Stderr, "--output-video-scale") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Errorf("plan --output-video-scale 0.3: exit %d, %q; want exit %d and one line naming the flag", r.Code, r.Stderr, exitUsage)
	}

	two := filepath.Join(dir, "two.mkv")
	if r := clitest.Mpirun(t, clitest.HangGuard(t), 2, clitest.PassThroughArgs(in, two, 5, flags...)...); r.Code != 0 {
		t.Fatalf("2 ranks: exit %d\n%s", r.Code, r.Stderr)
	}
	want := shrunkFrameHashes(t, in, "fps=10", 64, 48, 32, 24)
	if len(want) != 10 {
		t.Fatalf("ffmpeg's fps filter made %d frames of the 1 s target, want 10", len(want))
	}
	for _, out := range []string{two} {
		got := clitest.FrameHashes(t, out)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: its %d frames are not the %d that ffmpeg's fps=10 picks, shrunk to 32x24 by cv2.resize", filepath.Base(out), len(got), len(want))
		}
		s := streams(t, out)
		v, a := s["video"], s["audio"]
		frames := len(got) // decoded
		if v.Width != 32 || v.Height != 24 || v.Rate != "10/1" || frames != 10 {
			t.Errorf("%s: %dx%d at %s fps, %d frames; want 32x24 at 10/1, 10 frames", filepath.Base(out), v.Width, v.Height, v.Rate, frames)
		}
		frame := 0.1 // one output frame, in seconds
		if d := float64(frames) * frame; math.Abs(d-target["video"].seconds(t)) > frame {
			t.Errorf("%s: the video lasts %.3f s, the target's %.3f s", filepath.Base(out), d, target["video"].seconds(t))
		}
		if a.Type != "audio" {
			t.Errorf("%s: the target's audio is missing", filepath.Base(out))
		} else if d := a.seconds(t); math.Abs(d-target["audio"].seconds(t)) > frame {
			t.Errorf("%s: the audio lasts %.3f s, the target's %.3f s", filepath.Base(out), d, target["audio"].seconds(t))
		}
	}
}

// shrunkFrameHashes are the framemd5 hashes of path's w×h frames through ffmpeg's filter vf,
// each shrunk to sw×sh by raster.Resizer (cv2.resize's INTER_LINEAR, held to cv2 in its package).
func shrunkFrameHashes(t *testing.T, path, vf string, w, h, sw, sh int) []string {
	t.Helper()
	raw, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-i", path, "-map", "0:v:0", "-vf", vf, "-pix_fmt", "rgb24", "-f", "rawvideo", "-").Output()
	if err != nil {
		t.Fatalf("frames of %s: %v", path, err)
	}
	whole, small := raster.New(w, h), raster.New(sw, sh)
	var z raster.Resizer
	var hs []string
	for ; len(raw) >= len(whole.Pix); raw = raw[len(whole.Pix):] {
		copy(whole.Pix, raw)
		z.Resize(small, small.Bounds(), whole)
		sum := md5.Sum(small.Pix)
		hs = append(hs, hex.EncodeToString(sum[:]))
	}
	return hs
}
