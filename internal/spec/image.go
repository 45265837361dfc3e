package spec

import (
	"fmt"
	"math"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// Image is the output of an image job, resolved from the settings and the target image's size
// as FaceFusion's image workflow derives it: the size of its copy of the target (copy_image,
// which the faces are processed onto) and of the output (finalize_image), both as packed for
// ffmpeg's -s.
type Image struct {
	TempWidth, TempHeight int // the copy's
	Width, Height         int // the output's
}

// ResolveImage is cfg's output for a width×height target image; a scale that leaves a side of
// 0, or makes a picture larger than ffmpeg takes, is a Usage fault, given before the work.
func ResolveImage(cfg job.Config, width, height int) (Image, error) {
	scale := cfg.OutputImageScale
	var im Image
	im.TempWidth, im.TempHeight = tempImageSize(width, height, scale)
	im.Width, im.Height = outputImageSize(width, height, scale)
	if im.TempWidth <= 0 || im.TempHeight <= 0 || im.Width <= 0 || im.Height <= 0 {
		return Image{}, fault.AsUsage(fmt.Errorf("--output-image-scale %v leaves nothing of the target %s (%dx%d; FaceFusion's rounding makes a side under 2 pixels 0): choose a larger scale",
			scale, cfg.TargetPath, width, height))
	}
	if s := cfg.FrameScale(); s > 1 && !video.PictureFits(im.TempWidth*s, im.TempHeight*s) {
		return Image{}, fault.AsUsage(fmt.Errorf("--frame-enhancer-model %s makes the target %s (%dx%d, processed at %dx%d) a %dx%d image, larger than ffmpeg writes (about 16000x16000): choose a smaller --output-image-scale or a model of a smaller scale",
			cfg.FrameEnhancerModel, cfg.TargetPath, width, height, im.TempWidth, im.TempHeight, im.TempWidth*s, im.TempHeight*s))
	}
	if !video.PictureFits(im.Width, im.Height) || !video.PictureFits(im.TempWidth, im.TempHeight) {
		return Image{}, fault.AsUsage(fmt.Errorf("--output-image-scale %v makes the target %s (%dx%d) a %dx%d image, larger than ffmpeg writes (about 16000x16000): choose a smaller scale",
			scale, cfg.TargetPath, width, height, im.Width, im.Height))
	}
	return im, nil
}

// normalizeImageSize is FaceFusion's vision.normalize_resolution: each side rounded to an even
// number, halves to even as Python's round does.
func normalizeImageSize(w, h int) (int, int) {
	if w <= 0 || h <= 0 {
		return 0, 0
	}
	return int(math.RoundToEven(float64(w)/2)) * 2, int(math.RoundToEven(float64(h)/2)) * 2
}

// outputImageSize is FaceFusion's output_image_resolution, as packed for ffmpeg's -s:
// scale_resolution of the target's size.
func outputImageSize(w, h int, scale float64) (int, int) {
	return normalizeImageSize(int(float64(w)*scale), int(float64(h)*scale))
}

// tempImageSize is the -s of FaceFusion's copy_image: restrict_image_resolution (the target's
// own size where it compares, as a Python tuple, below the output's), packed.
func tempImageSize(w, h int, scale float64) (int, int) {
	ow, oh := outputImageSize(w, h, scale)
	if w < ow || (w == ow && h < oh) {
		return normalizeImageSize(w, h)
	}
	return normalizeImageSize(ow, oh)
}
