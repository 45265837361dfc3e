package video

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// x264 and x265 refuse yuv420p at an odd width or height; the default pixel format keeps the
// size as yuv444p there, and stays yuv420p at even sizes.
func TestOddFrameSizes(t *testing.T) {
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
			got := probe(t, out)
			if got.Width != c.w || got.Height != c.h || got.Frames != 5 || got.PixFmt != c.pixFmt {
				t.Errorf("%dx%d, %d frames, %s; want %dx%d, 5 frames, %s", got.Width, got.Height, got.Frames, got.PixFmt, c.w, c.h, c.pixFmt)
			}
		})
	}
}
