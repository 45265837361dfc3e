package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/jpeg"
	"github.com/facefusion-hpc/facefusion/internal/outpath"
	"github.com/facefusion-hpc/facefusion/internal/spec"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// ontoWorker detects on one frame and processes another (modelWorker.ProcessOnto).
type ontoWorker interface {
	ProcessOnto(target, temp *raster.Image) error
}

// alphaWorker is a worker whose processors may leave a frame an alpha (background_remover).
type alphaWorker interface {
	alpha(k int) *raster.Alpha
}

// withMask is FaceFusion's alpha after its processors: the minimum of the target's (nil:
// opaque) and the processors' mask (nil: none), nil where every pixel is opaque
// (conditional_merge_vision_mask writes 3 channels then).
func withMask(alpha, mask *raster.Alpha) *raster.Alpha {
	if mask == nil {
		return alpha
	}
	out := &raster.Alpha{W: mask.W, H: mask.H, Pix: slices.Clone(mask.Pix)}
	if alpha != nil && alpha.W == mask.W && alpha.H == mask.H {
		for i, v := range alpha.Pix {
			out.Pix[i] = min(out.Pix[i], v)
		}
	}
	if !slices.ContainsFunc(out.Pix, func(v uint8) bool { return v < 255 }) {
		return nil
	}
	return out
}

// framer is a worker that hands back frame k of the batch it processed last as its processors
// left it (modelWorker.Frame): a processor of whole frames may replace it with a larger one.
type framer interface {
	Frame(k int) *raster.Image
}

// isJPEGPath is FaceFusion's get_file_format(path) == 'jpeg'.
func isJPEGPath(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".jpg" || ext == ".jpeg"
}

// runFFImage is FaceFusion's image workflow (workflows/to_image.py) step for step, because
// steps are lossy or resample: ffmpeg copies the target into temp.EXT at quality 100 and the
// packed temp size (copy_image), the faces found in the target as read are processed onto
// that copy (scaled to it), which cv2.imwrite writes back (a .jpg at OpenCV's quality 95), and
// ffmpeg finalises that file into the output at output_image_quality and the packed output
// size (finalize_image), the sizes of im. img is the target as read; a PNG's alpha goes
// through unchanged.
func (m *Models) runFFImage(ctx context.Context, cfg job.Config, im spec.Image, img *raster.Image, wk Worker) (string, error) {
	// FaceFusion's temp folder for the copy: temp_path, node-local.
	dir, err := os.MkdirTemp(cfg.TempDir(), "facefusion-image-")
	if err != nil {
		return "", fault.AsEnvironment(fault.AsNoRoom(fmt.Errorf("a temp folder for the image target: %w", err), cfg.TempDir()))
	}
	defer os.RemoveAll(dir) // made by MkdirTemp above (0700): only this run wrote in it
	temp := filepath.Join(dir, "temp"+strings.ToLower(filepath.Ext(cfg.TargetPath)))
	if err := video.FFImageCommand(ctx, cfg.TargetPath, temp, cfg.TargetPath, im.TempWidth, im.TempHeight, 100); err != nil {
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
	if fr, ok := wk.(framer); ok && fr.Frame(0) != copied {
		// frame_enhancer upscaled the copy; the alpha follows it as FaceFusion's process_frame
		// resizes temp_vision_mask (cv2.resize, INTER_LINEAR), and finalize_image scales the
		// result to the output's size.
		copied = fr.Frame(0)
		alpha = raster.ResizeAlpha(alpha, copied.W, copied.H)
	}
	if aw, ok := wk.(alphaWorker); ok {
		// background_remover's mask, at the frame's size as the processors left it.
		alpha = withMask(alpha, aw.alpha(0))
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
	if err := video.FFImageCommand(ctx, temp, tmp.Path, cfg.TargetPath, im.Width, im.Height, cfg.OutputImageQuality); err != nil {
		if ctx.Err() != nil {
			return "", err
		}
		return "", fault.AsInput(err)
	}
	if err := video.CheckImage(tmp.File, im.Width, im.Height); err != nil {
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
