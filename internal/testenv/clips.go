package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// CloseUpClip makes a close-up target into a temp folder of t and returns its path: 3 s of
// 852×480 at 25 fps (75 frames) in which face (astronaut.png or grace_hopper.png) fills most of
// the height and drifts slowly (internal/deps/closeup-clip.sh; about a second to make).
func CloseUpClip(t testing.TB, face string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "closeup-"+strings.TrimSuffix(face, filepath.Ext(face))+".mp4")
	Tool(t, "ffmpeg")
	cmd := exec.Command("bash", filepath.Join(Root(t), "internal", "deps", "closeup-clip.sh"), Sample(t, face), out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("close-up clip of %s: %v: %s", face, err, b)
	}
	return out
}

// CloseUpClipFrames is CloseUpClip's first frames alone: the same motion, n frames long, for a
// test that reads no more (each frame of the 852×480 clip costs its encode).
func CloseUpClipFrames(t testing.TB, face string, n int) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), fmt.Sprintf("closeup-%s-%d.mp4", strings.TrimSuffix(face, filepath.Ext(face)), n))
	Tool(t, "ffmpeg")
	cmd := exec.Command("bash", filepath.Join(Root(t), "internal", "deps", "closeup-clip.sh"), Sample(t, face), out, strconv.Itoa(n))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("close-up clip of %s, %d frames: %v: %s", face, n, err, b)
	}
	return out
}

// Clip writes a 96x64 H.264 clip of frames frames at rate to path (its container by its
// extension). Each kind (frames, rate, container) is made by ffmpeg once a test binary and kept
// in memory (a few kilobytes): the tests each want a clip of their own, not each an ffmpeg run.
func Clip(t testing.TB, path string, frames int, rate string) {
	t.Helper()
	v, _ := madeClips.LoadOrStore(fmt.Sprintf("%d %s %s", frames, rate, filepath.Ext(path)), &madeClip{})
	c := v.(*madeClip)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.data == nil {
		out, err := exec.Command(Tool(t, "ffmpeg"), "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=96x64:r="+rate,
			"-frames:v", strconv.Itoa(frames), "-c:v", "libx264", "-pix_fmt", "yuv420p", path).CombinedOutput()
		if err != nil {
			t.Fatalf("making %s: %v %s", path, err, out)
		}
		if c.data, err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := os.WriteFile(path, c.data, 0o644); err != nil {
		t.Fatal(err)
	}
}

var madeClips sync.Map // "frames rate .ext" → *madeClip

type madeClip struct {
	mu   sync.Mutex
	data []byte // the clip's bytes; nil until made
}
