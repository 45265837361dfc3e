package pipeline

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

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

// runJPEGImage is FaceFusion's image workflow for a JPEG target, step for step, because each
// step is lossy: ffmpeg copies the target into temp.jpg at quality 100 (copy_image), the faces
// found in the target as read are processed onto that copy, which cv2.imwrite writes back at
// its quality 95, and ffmpeg finalises that file into the output at output_image_quality and
// output_image_scale (finalize_image). img is the target as read; the copy has its size.
func (m *Models) runJPEGImage(ctx context.Context, cfg job.Config, img *raster.Image, w ontoWorker, wk Worker) (string, error) {
	dir, err := os.MkdirTemp("", "facefusion-image-")
	if err != nil {
		return "", fault.AsEnvironment(fmt.Errorf("a temp folder for the image target: %w", err))
	}
	defer os.RemoveAll(dir)
	temp := filepath.Join(dir, "temp"+filepath.Ext(cfg.TargetPath))
	if err := video.FFImageCommand(ctx, cfg.TargetPath, temp, cfg.TargetPath, img.W, img.H, 100); err != nil {
		return "", fault.AsInput(fmt.Errorf("copying the target %s: %w", cfg.TargetPath, err))
	}
	copied, err := raster.Load(temp)
	if err != nil {
		return "", fault.AsInternal(fmt.Errorf("reading ffmpeg's copy of the target %s: %w", cfg.TargetPath, err))
	}
	if copied.W != img.W || copied.H != img.H {
		return "", fault.AsInternal(fmt.Errorf("ffmpeg's copy of the target %s is %dx%d, not %dx%d", cfg.TargetPath, copied.W, copied.H, img.W, img.H))
	}
	if err := w.ProcessOnto(img, copied); err != nil {
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
	data, err := raster.EncodeJPEG(copied, 95)
	if err != nil {
		return "", fault.AsInternal(err)
	}
	if err := os.WriteFile(temp, data, 0o600); err != nil {
		return "", fault.AsInput(fault.AsNoRoom(err, dir))
	}
	ow, oh := ffOutputImageSize(img.W, img.H, cfg.OutputImageScale)
	final := filepath.Join(dir, "output"+filepath.Ext(cfg.OutputPath))
	if err := video.FFImageCommand(ctx, temp, final, cfg.TargetPath, ow, oh, cfg.OutputImageQuality); err != nil {
		return "", fault.AsInput(fmt.Errorf("writing %s: %w", cfg.OutputPath, err))
	}
	data, err = os.ReadFile(final)
	if err != nil {
		return "", fault.AsInternal(err)
	}
	tmp, err := CreateTemp(TempPath(cfg.OutputPath, "part"))
	if err != nil {
		return "", fault.AsInput(fault.AsNoRoom(err, filepath.Dir(cfg.OutputPath)))
	}
	defer tmp.Remove()
	if _, err := tmp.File.Write(data); err != nil {
		return "", fault.AsInput(fault.AsNoRoom(err, filepath.Dir(cfg.OutputPath)))
	}
	return line, Commit(tmp, cfg.OutputPath, cfg.Force)
}
