package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/jpeg"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// --output-audio-encoder and --output-audio-volume re-encode the target's audio (the codec and
// the loudness show in the output), and an encoder the output's container cannot hold is a
// usage error before the first frame.
func TestOutputAudioFlags(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mkv") // 10 frames of 64x48 with a 440 Hz tone
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "color=s=64x48:r=25", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
		"-frames:v", "10", "-shortest", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "pcm_s16le", in)

	out := filepath.Join(dir, "out.mkv")
	r := clitest.Run(t, "run", "--processors", "none", "-t", in, "-o", out, "--output-audio-encoder", "libopus", "--output-audio-volume", "50")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if got := audioCodec(t, out); got != "opus" {
		t.Errorf("audio codec %q, want opus", got)
	}
	if v := testenv.MeanVolumes(t, out, in); math.Abs(v[0]-v[1]-20*math.Log10(0.5)) > 0.5 {
		d := v[0] - v[1]
		t.Errorf("volume 50 changed the mean volume by %.2f dB, want %.2f", d, 20*math.Log10(0.5))
	}
	// At volume 0 FaceFusion's restore_audio skips the audio: no stream, not a silent one, where
	// the target's audio or a source audio would have been.
	voice := filepath.Join(dir, "voice.wav")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "sine=frequency=880:sample_rate=16000:duration=1", voice)
	for i, src := range [][]string{nil, {"-s", voice}} {
		mute := filepath.Join(dir, fmt.Sprintf("mute%d.mkv", i))
		r := clitest.Run(t, append([]string{"run", "--processors", "none", "-t", in, "-o", mute, "--output-audio-volume", "0"}, src...)...)
		if r.Code != 0 {
			t.Fatalf("volume 0 %v: exit %d: %s", src, r.Code, r.Stderr)
		}
		if got := audioCodec(t, mute); got != "" {
			t.Errorf("volume 0 %v: the output has %s audio, want none (FaceFusion writes none)", src, got)
		}
	}

	refused := filepath.Join(dir, "refused.mp4")
	r = clitest.Run(t, "run", "--processors", "none", "-t", in, "-o", refused, "--output-audio-encoder", "pcm_s16le")
	if r.Code != exitUsage || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 ||
		!strings.Contains(r.Stderr, "--output-audio-encoder pcm_s16le") || !strings.Contains(r.Stderr, ".mp4") {
		t.Errorf("PCM into MP4: exit %d, want %d with one line naming the flag and .mp4:\n%s", r.Code, exitUsage, r.Stderr)
	}
	clitest.MustNotExist(t, refused)
	if _, err := os.Stat(refused + ".job"); err == nil {
		t.Error("the refused job left a job folder: it was refused after planning, not before")
	}
}

// --output-image-quality and --output-image-scale: the output has the scaled size and is the
// very file FaceFusion's image workflow makes from the target: ffmpeg's copy at quality 100
// (-q:v 0) and the packed size, written back by cv2.imwrite (quality 95), finalised by ffmpeg
// at the size and at quality 10 (-q:v round(31 − 3.1) = 28).
func TestOutputImageFlags(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jpg")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1", "-q:v", "2", in)
	out := filepath.Join(dir, "out.jpg")
	r := clitest.Run(t, "run", "--processors", "none", "-t", in, "-o", out, "--output-image-quality", "10", "--output-image-scale", "0.5")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if info := clitest.Probe(t, out); info.Width != 32 || info.Height != 24 {
		t.Errorf("output is %dx%d, want 32x24", info.Width, info.Height)
	}
	temp := filepath.Join(dir, "temp.jpg")
	clitest.FFmpeg(t, "-i", in, "-s", "32x24", "-q:v", "0", temp)
	img, err := raster.Load(temp)
	if err != nil {
		t.Fatal(err)
	}
	data, err := jpeg.Encode(img, 95)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(temp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "want.jpg")
	clitest.FFmpeg(t, "-i", temp, "-s", "32x24", "-q:v", "28", want)
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(want)
	if !bytes.Equal(a, b) {
		t.Errorf("the output (%d bytes) is not FaceFusion's copy, imwrite and finalize at quality 10 and 32x24 (%d bytes)", len(a), len(b))
	}
}

func audioCodec(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "stream=codec_name", "-of", "csv=p=0", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	return strings.TrimSpace(string(out))
}

// A PNG target's alpha comes through FaceFusion's image workflow unchanged (it reads the copy
// with cv2.IMREAD_UNCHANGED and merges the alpha back), at the target's size and scaled.
func TestImageTargetAlphaKept(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.png")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1",
		"-vf", "format=rgba,geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':a='4*X'", in)
	want, err := raster.LoadAlpha(in)
	if err != nil || want == nil {
		t.Fatalf("the target's alpha: %v, %v", want, err)
	}
	out := filepath.Join(dir, "out.png")
	if r := clitest.Run(t, "run", "--processors", "none", "-t", in, "-o", out); r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	got, err := raster.LoadAlpha(out)
	if err != nil || got == nil || !bytes.Equal(got.Pix, want.Pix) {
		t.Errorf("the output's alpha is not the target's: %v", err)
	}
	if r := clitest.Run(t, "run", "--processors", "none", "-t", in, "-o", out, "--force", "--output-image-scale", "0.5"); r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if got, err := raster.LoadAlpha(out); err != nil || got == nil || got.W != 32 || got.H != 24 {
		t.Errorf("at scale 0.5 the output has no 32x24 alpha plane: %v", err)
	}
}
