package spec

import "testing"

// FaceFusion's fix_video_encoder, case by case.
func TestFaceFusionEncoder(t *testing.T) {
	for _, c := range []struct{ path, asked, want string }{
		{"o.mp4", "libx265", "libx265"},
		{"o.mp4", "rawvideo", "libx264"},
		{"o.MKV", "rawvideo", "libx264"},
		{"o.mov", "rawvideo", "rawvideo"},
		{"o.mov", "libvpx-vp9", "libx264"},
		{"o.mkv", "libvpx-vp9", "libvpx-vp9"},
		{"o.webm", "libx264", "libvpx-vp9"},
		{"o.wmv", "libx265", "libx264"},
		{"o.m4v", "h264_nvenc", "libx264"},
		{"o.mxf", "ffv1", "libx264"},
		{"o.mpeg", "libx265", "libx264"},
		{"o.avi", "rawvideo", "rawvideo"},
	} {
		if got := FaceFusionEncoder(c.path, c.asked); got != c.want {
			t.Errorf("%s with %s: %s, want %s", c.path, c.asked, got, c.want)
		}
	}
}
