package pipeline

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/jpeg"
	"github.com/facefusion-hpc/facefusion/internal/outpath"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// ontoWorker detects on one frame and processes another (modelWorker.ProcessOnto).
type ontoWorker interface {
	ProcessOnto(target, temp *raster.Image) error
}

// isJPEGPath is FaceFusion's get_file_format(path) == 'jpeg'.
func isJPEGPath(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".jpg" || ext == ".jpeg"
}

// ffNormalize is FaceFusion's vision.normalize_resolution: each side rounded to an even
// number, halves to even as Python's round does.
func ffNormalize(w, h int) (int, int) {
	if w <= 0 || h <= 0 {
		return 0, 0
	}
	return int(math.RoundToEven(float64(w)/2)) * 2, int(math.RoundToEven(float64(h)/2)) * 2
}

// ffOutputImageSize is FaceFusion's output_image_resolution, as packed for ffmpeg's -s:
// scale_resolution of the target's size.
func ffOutputImageSize(w, h int, scale float64) (int, int) {
	return ffNormalize(int(float64(w)*scale), int(float64(h)*scale))
}

// ffTempImageSize is the -s of FaceFusion's copy_image: restrict_image_resolution (the
// target's own size where it compares, as a Python tuple, below the output's), packed.
func ffTempImageSize(w, h int, scale float64) (int, int) {
	ow, oh := ffOutputImageSize(w, h, scale)
	if w < ow || (w == ow && h < oh) {
		return ffNormalize(w, h)
	}
	return ffNormalize(ow, oh)
}

// imageSizes are the -s of FaceFusion's copy_image (tw×th) and finalize_image (ow×oh) for a
// width×height target; a scale that leaves a side of 0, or makes a picture larger than ffmpeg
// takes, is a usage error, given before the work (RunImage) as well as by runFFImage.
func imageSizes(cfg job.Config, width, height int) (tw, th, ow, oh int, err error) {
	tw, th = ffTempImageSize(width, height, cfg.OutputImageScale)
	ow, oh = ffOutputImageSize(width, height, cfg.OutputImageScale)
	if tw <= 0 || th <= 0 || ow <= 0 || oh <= 0 {
		return 0, 0, 0, 0, fault.AsUsage(fmt.Errorf("--output-image-scale %v leaves nothing of the target %s (%dx%d; FaceFusion's rounding makes a side under 2 pixels 0): choose a larger scale",
			cfg.OutputImageScale, cfg.TargetPath, width, height))
	}
	if !video.PictureFits(ow, oh) || !video.PictureFits(tw, th) {
		return 0, 0, 0, 0, fault.AsUsage(fmt.Errorf("--output-image-scale %v makes the target %s (%dx%d) a %dx%d image, larger than ffmpeg writes (about 16000x16000): choose a smaller scale",
			cfg.OutputImageScale, cfg.TargetPath, width, height, ow, oh))
	}
	return tw, th, ow, oh, nil
}

// runFFImage is FaceFusion's image workflow (workflows/to_image.py) step for step, because
// steps are lossy or resample: ffmpeg copies the target into temp.EXT at quality 100 and the
// packed temp size (copy_image), the faces found in the target as read are processed onto
// that copy (scaled to it), which cv2.imwrite writes back (a .jpg at OpenCV's quality 95), and
// ffmpeg finalises that file into the output at output_image_quality and the packed output
// size (finalize_image). img is the target as read; a PNG's alpha goes through unchanged.
func (m *Models) runFFImage(ctx context.Context, cfg job.Config, img *raster.Image, wk Worker) (string, error) {
	// FaceFusion's temp folder for the copy: temp_path, node-local.
	dir, err := os.MkdirTemp(cfg.TempDir(), "facefusion-image-")
	if err != nil {
		return "", fault.AsEnvironment(fault.AsNoRoom(fmt.Errorf("a temp folder for the image target: %w", err), cfg.TempDir()))
	}
	defer os.RemoveAll(dir) // made by MkdirTemp above (0700): only this run wrote in it
	tw, th, ow, oh, err := imageSizes(cfg, img.W, img.H)
	if err != nil {
		return "", err
	}
	temp := filepath.Join(dir, "temp"+strings.ToLower(filepath.Ext(cfg.TargetPath)))
	if err := video.FFImageCommand(ctx, cfg.TargetPath, temp, cfg.TargetPath, tw, th, 100); err != nil {
		return "", fault.AsInput(fmt.Errorf("copying the target %s: %w", cfg.TargetPath, err))
	}
	copied, err := raster.Load(temp)
	var alpha *raster.Alpha // the copy's, put back unchanged as conditional_merge_vision_mask does
	if err == nil {
		alpha, err = raster.LoadAlpha(temp)
	}
	if err != nil {
		return "", fault.AsInternal(fmt.Errorf("reading ffmpeg's copy of the target %s: %w", cfg.TargetPath, err))
	}
	if onto, ok := wk.(ontoWorker); ok {
		err = onto.ProcessOnto(img, copied)
	} else {
		err = wk.Process(copied) // no faces to find: the copy as it is
	}
	if err != nil {
		return "", fault.AsInternal(fmt.Errorf("target %s: %w", cfg.TargetPath, err))
	}
	if ctx.Err() != nil {
		return "", context.Cause(ctx)
	}
	line, err := FaceReport(cfg, framesWithFaces([]Worker{wk}), 1)
	if err != nil {
		return "", err
	}
	defer m.stats.since(StageEncode, time.Now())
	if isJPEGPath(temp) {
		data, err := jpeg.Encode(copied, 95)
		if err == nil {
			err = os.WriteFile(temp, data, 0o600)
		}
		if err != nil {
			return "", fault.AsInput(fault.AsNoRoom(err, dir))
		}
	} else {
		var err error // lossless: OpenCV's pixels in any PNG
		if alpha != nil {
			err = copied.SavePNGAlpha(temp, alpha)
		} else {
			err = copied.SavePNG(temp)
		}
		if err != nil {
			return "", fault.AsInput(fault.AsNoRoom(err, dir))
		}
	}
	// ffmpeg writes the output's temp file itself (outpath.TempPath keeps the extension that
	// picks its encoder), so a full file system is reported as for every other output.
	tmp, err := createImageTemp(cfg)
	if err != nil {
		return "", err
	}
	defer tmp.Remove()
	if err := video.FFImageCommand(ctx, temp, tmp.Path, cfg.TargetPath, ow, oh, cfg.OutputImageQuality); err != nil {
		if ctx.Err() != nil {
			return "", err
		}
		return "", fault.AsInput(err)
	}
	if err := video.CheckImage(tmp.File, ow, oh); err != nil {
		// ffmpeg said it wrote the file; a file that does not decode whole then is the file
		// system's doing (a full disk or quota only some file systems report at close).
		return "", fault.AsEnvironment(fmt.Errorf("output %s: %w; nothing was committed: %s", cfg.OutputPath, err, fault.RoomFix(filepath.Dir(cfg.OutputPath))))
	}
	return line, outpath.Commit(tmp, cfg.OutputPath, cfg.Force)
}

// createImageTemp makes the output's temp file beside it; no room for one more file (a full
// disk, an inode quota) is the environment's.
func createImageTemp(cfg job.Config) (*outpath.Temp, error) {
	tmp, err := outpath.CreateTemp(outpath.TempPath(cfg.OutputPath, "part"))
	if err != nil {
		return nil, fault.AsInput(fault.AsNoRoom(err, filepath.Dir(cfg.OutputPath)))
	}
	return tmp, nil
}
