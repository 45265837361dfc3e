package video

import "testing"

// An image is a PNG or JPEG by its extension, in any case; anything else is a video.
func TestIsImagePath(t *testing.T) {
	for p, want := range map[string]bool{
		"a.png": true, "a.JPG": true, "dir.mp4/a.jpeg": true,
		"a.mp4": false, "a.webp": false, "png": false, "a.png.mkv": false,
	} {
		if got := IsImagePath(p); got != want {
			t.Errorf("IsImagePath(%q) = %v, want %v", p, got, want)
		}
	}
}
