package video

import (
	"bufio"
	"fmt"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// ReadImage loads an image target (PNG or JPEG).
func ReadImage(path string) (*raster.Image, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("video: image %s is missing: check the target path", path)
	}
	img, err := raster.Load(path)
	if err != nil {
		return nil, fmt.Errorf("video: %v; convert it to PNG", err)
	}
	return img, nil
}

// imageKind is "png" or "jpeg" from the extension of path, ignoring a temporary suffix.
func imageKind(path string) string {
	p := strings.ToLower(path)
	for _, suffix := range []string{".tmp", ".part", ".partial"} {
		p = strings.TrimSuffix(p, suffix)
	}
	switch filepath.Ext(p) {
	case ".png":
		return "png"
	case ".jpg", ".jpeg":
		return "jpeg"
	}
	return ""
}

// WriteImage encodes img to path as PNG or JPEG, chosen by the extension (a .tmp suffix is
// ignored). quality (0–100, FaceFusion's output_image_quality) applies to JPEG.
func WriteImage(path string, img *raster.Image, quality int) error {
	kind := imageKind(path)
	if kind == "" {
		return fmt.Errorf("video: cannot write image %s: the name must end in .png, .jpg or .jpeg", path)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("video: cannot write image %s: %v", path, err)
	}
	w := bufio.NewWriter(f)
	if kind == "png" {
		err = png.Encode(w, img.ToImage())
	} else {
		err = jpeg.Encode(w, img.ToImage(), &jpeg.Options{Quality: min(max(quality, 1), 100)})
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("video: cannot write image %s: %v", path, err)
	}
	return nil
}
