package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// The output keeps the target's frame count, rate, duration and audio — or the trimmed range's —
// and a pass-through (processors none, lossless ffv1) gives back the very frames. One case
// holds both an NTSC rate and an odd frame count (they were two cases of the same runs: each
// case is a clip, two runs and their probes, some 6 CPU-seconds here). The clips are 160x120
// (the face 96 px high, found by the detector): the contract is about frames and times, which a
// 320x240 clip's four times the pixels tested no further.
func TestVideoContract(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name       string
		frames     int
		fps        string
		extra      []string
		start, end int // trim; -1: not set
	}{
		{"h264 with B-frames", 40, "25", []string{"-preset", "veryfast", "-bf", "3"}, -1, -1},
		{"29.97 fps, odd frame count", 37, "30000/1001", nil, -1, -1},
		{"trimmed range", 40, "25", []string{"-preset", "veryfast", "-bf", "3"}, 7, 26},
	}
	// Cases whose fixture is the same clip (the trimmed range's is the B-frame clip) share it.
	clips := map[string]string{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key := fmt.Sprint(c.frames, c.fps, c.extra)
			in, made := clips[key]
			if !made {
				in = filepath.Join(dir, c.name+".mp4")
				clitest.FaceClip(t, in, 160, 120, c.frames, c.fps, c.extra...)
				clips[key] = in
			}
			src := clitest.Probe(t, in)
			if src.Frames != c.frames {
				t.Fatalf("fixture has %d frames, want %d", src.Frames, c.frames)
			}
			start, end := 0, c.frames
			trim := []string{}
			if c.start >= 0 {
				start, end = c.start, c.end
				trim = []string{"--trim-frame-start", strconv.Itoa(c.start), "--trim-frame-end", strconv.Itoa(c.end)}
			}

			out := filepath.Join(dir, c.name+".mkv")
			args := append([]string{"run", "--processors", "none", "--output-video-encoder", "ffv1", "-t", in, "-o", out}, trim...)
			ignored := filepath.Join(dir, "ignored.mkv")
			if c.start >= 0 {
				// The pass-through of the trimmed range is also the job file's run (formerly
				// TestConfigFile's own, on a clip of its own): the file sets the processors, the
				// target, the encoder and the trim's start; the flags set the trim's end and the
				// output, over the file's output_path.
				cfg := filepath.Join(dir, "job.toml")
				os.WriteFile(cfg, []byte(fmt.Sprintf("processors = [\"none\"]\ntarget_path = %q\noutput_path = %q\noutput_video_encoder = \"ffv1\"\ntrim_frame_start = %d\n",
					in, ignored, c.start)), 0o644)
				args = []string{"run", "--config", cfg, "-o", out, "--trim-frame-end", strconv.Itoa(c.end)}
			}
			r := clitest.Run(t, args...)
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Stderr)
			}
			if _, err := os.Stat(ignored); err == nil {
				t.Fatal("the job file's output_path was used although -o was given")
			}
			h := clitest.FrameHashesOf(t, out, in) // one ffmpeg for both
			got, want := h[0], h[1][start:end]
			if len(got) != len(want) {
				t.Fatalf("output has %d frames, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("frame %d differs from target frame %d", i, start+i)
				}
			}
			checkTiming(t, out, src, end-start)

			// The default encoder (libx264 into MP4, joined in parallel) keeps the same contract;
			// in the trimmed case with the face swap as well. The swap changes pixels, not the
			// frames' order, count or times (the pipeline restores order by frame index), so one
			// swap run, the trimmed range's, stands for it; the others pass through (each swap
			// run was a model load and 40 frames' inference, some 2–3 CPU-s more).
			swapped := filepath.Join(dir, c.name+"-default.mp4")
			processors := []string{"--processors", "none"}
			if c.start >= 0 {
				processors = []string{"-s", testenv.Sample(t, "grace_hopper.png")}
			}
			r = clitest.Run(t, append(append(append([]string{"run"}, processors...), "-t", in, "-o", swapped), trim...)...)
			if r.Code != 0 {
				t.Fatalf("default encoder (%v): exit %d: %s", processors, r.Code, r.Stderr)
			}
			checkTiming(t, swapped, src, end-start)
		})
	}
}

func checkTiming(t *testing.T, out string, src *video.Info, frames int) {
	t.Helper()
	info := clitest.Probe(t, out)
	if info.Frames != frames {
		t.Errorf("%s: %d frames, want %d", out, info.Frames, frames)
	}
	if info.FPS != src.FPS {
		t.Errorf("%s: frame rate %v, want %v", out, info.FPS, src.FPS)
	}
	wantDur := float64(frames) / src.FPS.Float()
	if d := info.Duration.Seconds(); math.Abs(d-wantDur) > 1.5/src.FPS.Float()+0.05 {
		t.Errorf("%s: duration %.3f s, want %.3f s", out, d, wantDur)
	}
	if !info.HasAudio {
		t.Errorf("%s: the target's audio was not kept", out)
	}
}

// An image target gives an image output of the same size; the face changed, the rest not.
// face_debugger after the swap draws on the face, and the run report's identity measure reads
// the face before it does: the same similarity to the source with the drawing as without.
// (That check was a second run of the demo clip in TestIdentityMeasure: the measure's place
// among the processors is one function, modelWorker.Apply, for an image as for a video.) The
// first run passes --fail-if-no-face and is TestNoFaceInImage's image with a face
// (checkFaceImage), formerly a run of its own.
func TestImageTarget(t *testing.T) {
	dir := t.TempDir()
	in := testenv.Sample(t, "astronaut.png")
	out := filepath.Join(dir, "swapped.png")
	r := clitest.Run(t, "run", "-s", testenv.Sample(t, "grace_hopper.png"), "-t", in, "-o", out, "--fail-if-no-face")
	identity := checkFaceImage(t, out, r).Identity
	drawn := filepath.Join(dir, "drawn.png")
	r = clitest.Run(t, "run", "-s", testenv.Sample(t, "grace_hopper.png"), "-t", in, "-o", drawn, "--processors", "face_swapper", "face_debugger")
	if r.Code != 0 {
		t.Fatalf("with face_debugger: exit %d: %s", r.Code, r.Stderr)
	}
	withDrawing := clitest.CheckReportEnd(t, drawn, r, lustre.Complete).Identity
	if identity == nil || withDrawing == nil || identity.Recognizer != "fr_feature" || identity.Faces != 1 || withDrawing.Faces != 1 {
		t.Fatalf("identity %+v, with face_debugger %+v: want fr_feature's measure of 1 face in each", identity, withDrawing)
	}
	if withDrawing.After != identity.After || identity.After <= identity.Before {
		t.Errorf("identity after the swap: %.4f with face_debugger's drawing, %.4f without (%.4f before the swap): the measure must read the swapped face, not the drawing",
			withDrawing.After, identity.After, identity.Before)
	}
	a, err := raster.Load(in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := raster.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if a.W != b.W || a.H != b.H {
		t.Fatalf("output is %dx%d, target %dx%d", b.W, b.H, a.W, a.H)
	}
	// the face of astronaut.png is near x 177–272, y 81–175
	face, far := 0, 0
	for y := 0; y < a.H; y++ {
		for x := 0; x < a.W; x++ {
			r1, g1, b1 := a.At(x, y)
			r2, g2, b2 := b.At(x, y)
			diff := r1 != r2 || g1 != g2 || b1 != b2
			inFace := x > 190 && x < 260 && y > 100 && y < 170
			if diff && inFace {
				face++
			}
			if diff && (x < 120 || x > 330 || y > 260) {
				far++
			}
		}
	}
	if face < 2000 {
		t.Errorf("only %d pixels of the face changed", face)
	}
	if far != 0 {
		t.Errorf("%d pixels far from the face changed", far)
	}
}

// hardware_codecs down the path this machine has: no NVIDIA driver. A job that runs on a GPU
// provider (cuda falls back to the CPU here) tries NVENC and NVDEC, says in one line that it
// encodes with libx264 and decodes on the CPU, and writes the output; "on" refuses before the
// first frame, naming the flag and ffmpeg's reason, and leaves no output.
// The run over that output is also the existing-output check (formerly
// TestExistingOutputNeedsForce, whose second run was this one's "off" run): without --force it
// is refused, naming the output and --force, and the output is left as it was; with --force it
// is replaced.
func TestHardwareCodecsFallBack(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	clitest.FaceClip(t, in, 160, 120, 6, "25")
	out := filepath.Join(dir, "out.mp4")
	args := []string{"run", "--processors", "none", "-t", in, "-o", out, "--execution-providers", "cuda"}
	r := clitest.Run(t, args...)
	if r.Code != 0 {
		t.Fatalf("auto: exit %d\n%s", r.Code, r.Stderr)
	}
	for _, want := range []string{"hardware codecs: encoding with libx264 on the CPU (h264_nvenc cannot run on this node", "decoding on the CPU (NVDEC"} {
		if !strings.Contains(r.Stderr, want) {
			t.Fatalf("auto: the log does not say %q:\n%s", want, r.Stderr)
		}
	}
	if got := clitest.Probe(t, out); got.Codec != "h264" || got.Frames != 6 {
		t.Fatalf("auto: output is %s with %d frames, want h264 with 6", got.Codec, got.Frames)
	}
	// An existing output needs --force.
	sum := clitest.FileMD5(t, out)
	r = clitest.Run(t, append(args, "--hardware-codecs", "off")...)
	if r.Code != exitUsage || !strings.Contains(r.Stderr, "--force") || !strings.Contains(r.Stderr, out) {
		t.Fatalf("exit %d, stderr %q: want exit %d naming the output and --force", r.Code, r.Stderr, exitUsage)
	}
	if clitest.FileMD5(t, out) != sum {
		t.Fatal("the existing output was changed without --force")
	}
	// Off: not even tried. With --force the output is replaced: a new file renamed into place
	// (the same bytes as before: the same job).
	before, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	r = clitest.Run(t, append(args, "--force", "--hardware-codecs", "off")...)
	if r.Code != 0 || strings.Contains(r.Stderr, "hardware codecs") {
		t.Fatalf("off: exit %d, or the codecs were tried:\n%s", r.Code, r.Stderr)
	}
	if after, err := os.Stat(out); err != nil || os.SameFile(before, after) {
		t.Fatalf("with --force the output was not replaced (%v)", err)
	}
	if n := len(clitest.FrameHashes(t, out)); n != 6 {
		t.Fatalf("with --force the output has %d frames, want 6", n)
	}
	out2 := filepath.Join(dir, "out2.mp4")
	r = clitest.Run(t, "run", "--processors", "none", "-t", in, "-o", out2, "--execution-providers", "cuda", "--hardware-codecs", "on")
	if r.Code != 4 || !strings.Contains(r.Stderr, "--hardware-codecs on: h264_nvenc cannot run on this node") {
		t.Fatalf("on: exit %d, want 4 naming the flag and the encoder:\n%s", r.Code, r.Stderr)
	}
	clitest.MustNotExist(t, out2)
}

// A target whose video starts after its audio (here 0.5 s in, the audio silent until then)
// keeps its picture against its sound: the audio is cut from the first frame's time in the
// container, so the output's first tenths of a second carry the tone that played with the
// first frame, not the silence before it.
func TestVideoStartOffsetKeepsSync(t *testing.T) {
	dir := t.TempDir()
	v, in, out := filepath.Join(dir, "v.mp4"), filepath.Join(dir, "offset.mp4"), filepath.Join(dir, "out.mp4")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "testsrc=s=160x120:r=25:d=2", "-c:v", "libx264", "-pix_fmt", "yuv420p", v)
	clitest.FFmpeg(t, "-itsoffset", "0.5", "-i", v, "-f", "lavfi", "-i", "aevalsrc='if(gte(t,0.5),0.5*sin(2*PI*440*t),0)':s=48000:d=2.5",
		"-map", "0:v", "-map", "1:a", "-c:v", "copy", "-c:a", "aac", in)
	if got := clitest.Probe(t, in); got.VideoStart < 400*time.Millisecond {
		t.Fatalf("fixture's video starts at %v, want 0.5 s after the audio", got.VideoStart)
	}
	if r := clitest.Run(t, "run", "--processors", "none", "-t", in, "-o", out); r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	cmd := exec.Command("ffmpeg", "-hide_banner", "-nostdin", "-i", out, "-map", "0:a", "-t", "0.2", "-af", "volumedetect", "-f", "null", "-")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("volumedetect: %v\n%s", err, b)
	}
	m := regexp.MustCompile(`mean_volume: (-?[0-9.]+) dB`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("no mean volume in:\n%s", b)
	}
	if db, _ := strconv.ParseFloat(m[1], 64); db < -30 {
		t.Fatalf("the output's first 0.2 s of audio are at %s dB: the silence before the video started, not the tone that plays with its first frame", m[1])
	}
}

// A stream-copy cut between key frames (`ffmpeg -ss 0.5 -i in.mp4 -c copy cut.mp4`) keeps a
// discarded packet and an edit list: the run completes with every frame a decoder shows, at
// its times, in chunks that start mid-file (each decodes its range by seeking, as a rank does).
// The run also passes --fail-if-no-face on this faceless clip: with --processors none the frames
// pass through, nothing is counted and nothing warned of, and the flag fails nothing (it was a
// run of its own in TestNoFaceInTarget).
func TestCutTarget(t *testing.T) {
	dir := t.TempDir()
	full, in := filepath.Join(dir, "full.mp4"), filepath.Join(dir, "cut.mp4")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25", "-frames:v", "25",
		"-c:v", "libx264", "-bf", "2", "-g", "12", "-preset", "veryfast", "-pix_fmt", "yuv420p", full)
	clitest.FFmpeg(t, "-ss", "0.5", "-i", full, "-c", "copy", in)
	out := filepath.Join(dir, "out.mkv")
	r := clitest.Run(t, "run", "--processors", "none", "--output-video-encoder", "ffv1", "--chunk-frames", "5", "-t", in, "-o", out, "--fail-if-no-face")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if strings.Contains(r.Stderr, "a face was") || strings.Contains(r.Stderr, "no face") {
		t.Errorf("--processors none counted faces or warned of none:\n%s", r.Stderr)
	}
	h := clitest.FrameHashesOf(t, out, in) // one ffmpeg for both
	got, want := h[0], h[1]
	if len(want) != 12 {
		t.Fatalf("the cut shows %d frames, want 12", len(want))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("output's %d frames differ from the %d the cut shows", len(got), len(want))
	}
	if got, want := frameSeconds(t, out), frameSeconds(t, in); !reflect.DeepEqual(got, want) {
		t.Errorf("output frame times %v, the cut's %v", got, want)
	}
}

// frameSeconds are the decoded video frames' times in seconds, as ffprobe prints them.
func frameSeconds(t *testing.T, path string) []string {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time", "-of", "csv=p=0", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	return strings.Fields(string(out))
}
