package video

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// x264 and x265 refuse yuv420p at an odd width or height; the default pixel format keeps the
// size as yuv444p there, and stays yuv420p at even sizes.
func TestOddFrameSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: encodes and decodes clips of every odd size (make test)")
	}
	dir := t.TempDir()
	for _, c := range []struct {
		encoder string
		w, h    int
		pixFmt  string
	}{
		{"libx264", 161, 121, "yuv444p"},
		{"libx264", 160, 121, "yuv444p"},
		{"libx265", 161, 120, "yuv444p"},
		{"libx264", 160, 120, "yuv420p"},
		{"libx265", 160, 120, "yuv420p"},
		{"ffv1", 161, 121, "bgr0"}, // gbrp in, stored as ffv1's RGB
	} {
		t.Run(fmt.Sprintf("%s-%dx%d", c.encoder, c.w, c.h), func(t *testing.T) {
			out := filepath.Join(dir, fmt.Sprintf("%s-%dx%d.mkv", c.encoder, c.w, c.h))
			opt := EncodeOptions{Encoder: c.encoder, Quality: DefaultQuality, Preset: "ultrafast", FPS: Rational{25, 1}, Width: c.w, Height: c.h}
			e, err := OpenEncoder(context.Background(), out, opt)
			if err != nil {
				t.Fatal(err)
			}
			frame := make([]byte, c.w*c.h*3)
			for i := range frame {
				frame[i] = byte(i * 7)
			}
			for i := 0; i < 5; i++ {
				if err := e.Write(frame); err != nil {
					t.Fatal(err)
				}
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			// One ffprobe run (Probe of a Matroska file takes two: it counts the packets apart).
			got := strings.TrimSpace(ffprobeOut(t, "-select_streams", "v:0", "-count_packets", "-show_entries", "stream=width,height,pix_fmt,nb_read_packets", "-of", "csv=p=0", out))
			if want := fmt.Sprintf("%d,%d,%s,5", c.w, c.h, c.pixFmt); got != want {
				t.Errorf("width, height, pixel format, frames: %s; want %s", got, want)
			}
		})
	}
}
