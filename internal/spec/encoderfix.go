package spec

import (
	"path/filepath"
	"strings"
)

// FaceFusionEncoder is the video encoder FaceFusion writes an output of path with when asked
// for encoder (ffmpeg.fix_video_encoder): some containers force one, whatever was asked, and
// FaceFusion swaps in libx264 or libvpx-vp9 without a word. Here the swap is said once
// (ChooseCodecs), and the output is FaceFusion's.
func FaceFusionEncoder(path, encoder string) string {
	switch ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), "."); {
	case ext == "m4v" || ext == "mpeg" || ext == "mxf" || ext == "wmv":
		return "libx264"
	case (ext == "mkv" || ext == "mp4") && encoder == "rawvideo":
		return "libx264"
	case ext == "mov" && encoder == "libvpx-vp9":
		return "libx264"
	case ext == "webm":
		return "libvpx-vp9"
	}
	return encoder
}
