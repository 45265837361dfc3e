package testenv

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
