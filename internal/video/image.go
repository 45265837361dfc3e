package video

import (
	"fmt"
	"math"
	"os"
	"strconv"

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

// PictureFits reports whether ffmpeg takes a width×height picture at all: its
// av_image_check_size refuses (w+128)·(h+128) ≥ INT_MAX/8, about 16000×16000, whatever the
// encoder.
func PictureFits(width, height int) bool {
	return width > 0 && height > 0 && int64(width+128)*int64(height+128) < math.MaxInt32/8
}

// imageQualityArgs is FaceFusion's set_image_quality for the formats written here: JPEG takes
// -q:v round(31 − 0.31·quality), Python's round (halves to even), so 100 asks for the finest
// quantiser and 0 for the coarsest (31); PNG has nothing to set.
func imageQualityArgs(kind string, quality int) []string {
	if kind != "jpeg" {
		return nil
	}
	q := float64(min(max(quality, 0), 100))
	// The conversion keeps Go from fusing the multiply-subtract, which Python does not do.
	return []string{"-q:v", strconv.Itoa(int(math.RoundToEven(31 - float64(q*0.31))))}
}
