package video

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// Test clips are generated once per test binary by the ffmpeg on PATH, into one folder.
var (
	clipDir  string
	clipMu   sync.Mutex
	clipMade = map[string]string{}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "video-clips-")
	if err != nil {
		panic(err)
	}
	clipDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// ffmpegRun runs ffmpeg with the given arguments and fails the test with its stderr.
func ffmpegRun(t testing.TB, args ...string) []byte {
	t.Helper()
	bin := testenv.Tool(t, "ffmpeg")
	cmd := exec.Command(bin, append([]string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ffmpeg %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// clip makes (once) the named test clip and returns its path.
func clip(t testing.TB, name string) string {
	t.Helper()
	testenv.Tool(t, "ffprobe")
	// Clips made from another clip make that one first, outside the lock.
	base := ""
	switch name {
	case "bf.mkv", "bf.ts", "faststart.mp4", "truncated.mp4":
		base = clip(t, "bf.mp4")
	case "truncated-faststart.mp4":
		base = clip(t, "faststart.mp4")
	case "cut.mp4":
		base = clip(t, "gop.mp4")
	case "vfrcut.mp4":
		base = clip(t, "vfr20.mp4")
	}
	clipMu.Lock()
	defer clipMu.Unlock()
	if p, ok := clipMade[name]; ok {
		return p
	}
	p := filepath.Join(clipDir, name)
	switch name {
	case "bf.mp4":
		// 29.97 fps, H.264 with 3 B-frames and a short GOP, an odd 123 frames, with audio. 160x120:
		// its pixels are only ever held to ffmpeg's own decode, and many tests decode it whole.
		ffmpegRun(t, "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30000/1001",
			"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100",
			"-t", "4.104", "-c:v", "libx264", "-bf", "3", "-g", "24", "-preset", "veryfast",
			"-pix_fmt", "yuv420p", "-c:a", "aac", p)
	case "bf.mkv", "bf.ts":
		// Matroska: no nb_frames and a video start delay; MPEG-TS: a 1.4 s container start.
		ffmpegRun(t, "-i", base, "-c", "copy", p)
	case "faststart.mp4":
		ffmpegRun(t, "-i", base, "-c", "copy", "-movflags", "+faststart", p)
	case "pcm.mov":
		// PCM audio: MOV holds it, MP4 cannot.
		ffmpegRun(t, "-f", "lavfi", "-i", "mandelbrot=size=160x120:rate=25",
			"-f", "lavfi", "-i", "sine=frequency=300:sample_rate=48000",
			"-frames:v", "50", "-t", "2", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
			"-c:a", "pcm_s16le", p)
	case "pcm3.mkv":
		// 3 frames of ffv1 with PCM audio: copied into .mkv, AAC in .mp4, nothing in .webm.
		ffmpegRun(t, "-f", "lavfi", "-i", "color=s=64x48:r=25", "-f", "lavfi", "-i", "sine=sample_rate=48000",
			"-frames:v", "3", "-shortest", "-c:v", "ffv1", "-c:a", "pcm_s16le", p)
	case "vfr.mkv":
		// Frames 0–9 at 25 fps, then every other tick: a variable rate.
		ffmpegRun(t, "-f", "lavfi", "-i", "testsrc2=size=96x64:rate=25",
			"-vf", "setpts='if(lt(N,10),N,N*2)/25/TB'", "-frames:v", "41", "-fps_mode", "vfr",
			"-c:v", "libx264", "-bf", "2", "-g", "8", "-preset", "veryfast", "-pix_fmt", "yuv420p", p)
	case "streams.mkv":
		// Two audio tracks (AAC, then PCM, which MP4 holds only as AAC) and a subtitle track
		// (SubRip, which MP4 cannot hold).
		srt := filepath.Join(clipDir, "streams.srt")
		if err := os.WriteFile(srt, []byte("1\n00:00:00,000 --> 00:00:00,500\nhello\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		ffmpegRun(t, "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
			"-f", "lavfi", "-i", "sine=frequency=660:sample_rate=48000", "-i", srt,
			"-map", "0", "-map", "1", "-map", "2", "-map", "3", "-t", "1",
			"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a:0", "aac", "-c:a:1", "pcm_s16le", "-c:s", "srt", p)
	case "vfr.mp4":
		// 30 frames at 30 fps, then 30 at 10 fps (3.9 s), with 3.9 s of audio: a variable rate.
		ffmpegRun(t, "-f", "lavfi", "-i", "testsrc2=size=96x64:rate=30", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=3.9",
			"-vf", "setpts='if(lt(N,30),N,30+(N-30)*3)/30/TB'", "-frames:v", "60", "-fps_mode", "vfr",
			"-c:v", "libx264", "-bf", "2", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-c:a", "aac", p)
	case "gop.mp4":
		// 1 s at 25 fps, H.264 with B-frames and key frames 12 frames apart.
		ffmpegRun(t, "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25", "-frames:v", "25",
			"-c:v", "libx264", "-bf", "2", "-g", "12", "-preset", "veryfast", "-pix_fmt", "yuv420p", p)
	case "cut.mp4":
		// A stream-copy cut at 0.5 s, between key frames: 13 packets (nb_frames 13), the first
		// flagged discard, and an edit list from the cut; a decoder shows 12 frames.
		ffmpegRun(t, "-ss", "0.5", "-i", base, "-c", "copy", p)
	case "vfr20.mp4":
		// Frames 0–9 at 25 fps, then every other tick: 20 frames at a variable rate.
		ffmpegRun(t, "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25",
			"-vf", "setpts='if(lt(N,10),N,N*2)/25/TB'", "-frames:v", "20", "-fps_mode", "vfr",
			"-c:v", "libx264", "-bf", "2", "-g", "8", "-preset", "veryfast", "-pix_fmt", "yuv420p", p)
	case "vfrcut.mp4":
		// Cut 0.04 s in: the key frame at 0 is kept, flagged discard; a decoder shows 19 frames.
		ffmpegRun(t, "-ss", "0.04", "-i", base, "-c", "copy", p)
	case "audio.m4a":
		ffmpegRun(t, "-f", "lavfi", "-i", "sine=frequency=500", "-t", "1", "-c:a", "aac", p)
	case "junk.mp4":
		junk := bytes.Repeat([]byte("this is not a video file at all\n"), 2000)
		if err := os.WriteFile(p, junk, 0o644); err != nil {
			t.Fatal(err)
		}
	case "truncated.mp4":
		full, err := os.ReadFile(base)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, full[:len(full)*3/10], 0o644); err != nil {
			t.Fatal(err)
		}
	case "truncated-faststart.mp4":
		// The index survives the cut, so the probe believes all 123 frames are there.
		full, err := os.ReadFile(base)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, full[:len(full)*6/10], 0o644); err != nil {
			t.Fatal(err)
		}
	case "hd.mp4":
		ffmpegRun(t, "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25", "-frames:v", "150",
			"-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", p)
	case "long.mp4":
		// 40 s at 25 fps, 2 s GOP: a late range is far from frame 0.
		ffmpegRun(t, "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-frames:v", "1000",
			"-c:v", "libx264", "-g", "50", "-preset", "ultrafast", "-pix_fmt", "yuv420p", p)
	default:
		t.Fatalf("unknown test clip %s", name)
	}
	clipMade[name] = p
	return p
}

// referenceHashes is ffmpeg's own per-frame MD5 of the first video stream decoded to rgb24: the
// decoder under test is compared against it, not against itself. A test clip's are worked out
// once a test binary.
func referenceHashes(t testing.TB, path string) []string {
	t.Helper()
	hashes := onceForClip(path, "framemd5", func() []string {
		return frameMD5s(ffmpegRun(t, "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough", "-pix_fmt", "rgb24", "-f", "framemd5", "-"))
	})
	if len(hashes) == 0 {
		t.Fatalf("framemd5 of %s gave no frames", path)
	}
	return slices.Clone(hashes)
}

// referenceHashesOf is referenceHashes of each path, from one ffmpeg with an input and an
// output each (a process start costs as much as hashing a small clip's frames).
func referenceHashesOf(t testing.TB, paths ...string) [][]string {
	t.Helper()
	dir := t.TempDir()
	var args []string
	for _, p := range paths {
		args = append(args, "-i", p)
	}
	for i := range paths {
		args = append(args, "-map", fmt.Sprintf("%d:v:0", i), "-fps_mode", "passthrough", "-pix_fmt", "rgb24", "-f", "framemd5", filepath.Join(dir, fmt.Sprintf("%d.md5", i)))
	}
	ffmpegRun(t, args...)
	all := make([][]string, len(paths))
	for i, p := range paths {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.md5", i)))
		if err != nil {
			t.Fatal(err)
		}
		if all[i] = frameMD5s(b); len(all[i]) == 0 {
			t.Fatalf("framemd5 of %s gave no frames", p)
		}
	}
	return all
}

// frameMD5s are the hashes of ffmpeg's framemd5 output, one a frame.
func frameMD5s(out []byte) []string {
	var hashes []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, ",")
		hashes = append(hashes, strings.TrimSpace(f[len(f)-1]))
	}
	return hashes
}

// decodeHashes decodes [start,end) with the Decoder and hashes each frame as framemd5 does.
func decodeHashes(t testing.TB, info *Info, start, end int) []string {
	t.Helper()
	d, err := OpenDecoder(context.Background(), info, start, end)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	buf := make([]byte, info.FrameSize())
	var hashes []string
	for {
		err := d.Next(buf)
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("frame %d: %v", d.Frame(), err)
		}
		sum := md5.Sum(buf)
		hashes = append(hashes, hex.EncodeToString(sum[:]))
	}
	return hashes
}

// probe is Probe of path. A test clip's probe is run once a test binary and each caller gets
// its own copy of the Info (the clips never change once made): most tests probe bf.mp4 only
// to have its frames to decode. The tests of Probe itself call probeAfresh.
func probe(t testing.TB, path string) *Info {
	t.Helper()
	if !isClip(path) {
		return probeAfresh(t, path)
	}
	v, _ := clipProbes.LoadOrStore(path, &clipProbe{})
	c := v.(*clipProbe)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.info == nil {
		c.info = probeAfresh(t, path)
	}
	info := *c.info
	return &info
}

var clipProbes sync.Map // clip path → *clipProbe

type clipProbe struct {
	mu   sync.Mutex
	info *Info
}

// probeAfresh runs Probe on path every time.
func probeAfresh(t testing.TB, path string) *Info {
	t.Helper()
	info, err := Probe(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// isClip says whether path is one of the test clips clip made (never changed after).
func isClip(path string) bool {
	clipMu.Lock()
	defer clipMu.Unlock()
	for _, p := range clipMade {
		if p == path {
			return true
		}
	}
	return false
}

// clipFacts keeps what ffmpeg and ffprobe said of a test clip, by the question, so that a test
// clip is decoded for its reference hashes and asked each ffprobe question once a test binary.
var clipFacts sync.Map // key: the question and the clip's path → []string or string

// onceForClip is ask(), run once a test binary for a test clip (path), every time otherwise.
func onceForClip[T any](path, question string, ask func() T) T {
	if !isClip(path) {
		return ask()
	}
	key := question + "\x00" + path
	if v, ok := clipFacts.Load(key); ok {
		return v.(T)
	}
	v := ask()
	clipFacts.Store(key, v)
	return v
}
