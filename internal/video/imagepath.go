package video

import (
	"path/filepath"
	"strings"
)

// IsImagePath reports whether a path names a still image by its extension: what makes a
// target an image job, and what an image job's output must be.
func IsImagePath(p string) bool {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".png", ".jpg", ".jpeg":
		return true
	}
	return false
}
