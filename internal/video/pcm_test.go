package video

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// A file that is no audio, and a video with no sound, are errors that name the file.
func TestReadPCMRefusesWhatHasNoSound(t *testing.T) {
	t.Parallel()
	testenv.Tool(t, "ffmpeg")
	dir := t.TempDir()
	junk := filepath.Join(dir, "voice.wav")
	if err := os.WriteFile(junk, []byte("not a wave file"), 0o644); err != nil {
		t.Fatal(err)
	}
	silent := filepath.Join(dir, "clip.mp4")
	testenv.Clip(t, silent, 3, "25")
	for _, path := range []string{junk, silent, filepath.Join(dir, "missing.mp3")} {
		_, err := ReadPCM(context.Background(), path, 48000, 2)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("ReadPCM(%s) = %v, want an error naming it", path, err)
		}
	}
}
