package video

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/fault"
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

// ImageOptions says how an image output is written.
type ImageOptions struct {
	// Quality is FaceFusion's output_image_quality, 0–100: JPEG's compression. PNG is
	// lossless and takes none.
	Quality int
	// Width×Height is the output's size; 0×0: the image's own. Another size is reached by
	// ffmpeg's bicubic scaler, the one FaceFusion's `-s` uses.
	Width, Height int
	// Alpha is the image's alpha plane, kept in a PNG output as FaceFusion keeps an image
	// target's; nil: opaque. JPEG has none.
	Alpha *raster.Alpha
}

// ScaledImageSize is the size of an image output of a width×height target at FaceFusion's
// output_image_scale: the target's own size at 1 (an odd side stays odd, and nothing is
// resampled), otherwise FaceFusion's rounding (ScaleSize: truncated, then to an even number).
func ScaledImageSize(width, height int, scale float64) (int, int) {
	if scale == 1 {
		return width, height
	}
	return ScaleSize(width, height, scale)
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

// imageArgs is the ffmpeg command line that encodes one packed rgb24 w×h frame from stdin into
// path (whose extension, a temporary suffix ignored, names the format).
func imageArgs(path string, w, h int, opt ImageOptions) []string {
	kind := imageKind(path)
	in, out := "rgb24", "rgb24"
	if opt.Alpha != nil {
		in, out = "rgba", "rgba"
	}
	args := ffmpegArgs("-f", "rawvideo", "-pix_fmt", in,
		"-s", strconv.Itoa(w)+"x"+strconv.Itoa(h), "-i", "pipe:0", "-frames:v", "1")
	if opt.Width > 0 && opt.Height > 0 && (opt.Width != w || opt.Height != h) {
		args = append(args, "-vf", scaleFilter(opt.Width, opt.Height))
	}
	if kind == "jpeg" {
		// 4:2:0 like every JPEG FaceFusion writes; the J formats are full range, as JPEG is.
		args = append(args, "-c:v", "mjpeg", "-pix_fmt", "yuvj420p")
	} else {
		args = append(args, "-c:v", "png", "-pix_fmt", out)
	}
	args = append(args, imageQualityArgs(kind, opt.Quality)...)
	// image2 with -update writes this one file (no numbered sequence).
	return append(args, "-f", "image2", "-update", "1", "-y", mediaPath(path))
}

// WriteImage encodes img to path as PNG or JPEG, chosen by the extension (a .tmp suffix is
// ignored), through ffmpeg as FaceFusion writes its image outputs: opt's quality and size.
func WriteImage(ctx context.Context, path string, img *raster.Image, opt ImageOptions) error {
	return writeImage(ctx, path, nil, img, opt)
}

// WriteImageFile is WriteImage into the file out the caller created (its name chooses the
// format): ffmpeg writes through the descriptor and never opens the name, which another user
// who can write into its folder could have replaced with a link meanwhile.
func WriteImageFile(ctx context.Context, out *os.File, img *raster.Image, opt ImageOptions) error {
	return writeImage(ctx, out.Name(), out, img, opt)
}

func writeImage(ctx context.Context, path string, out *os.File, img *raster.Image, opt ImageOptions) error {
	if imageKind(path) == "" {
		return fmt.Errorf("video: cannot write image %s: the name must end in .png, .jpg or .jpeg", path)
	}
	if a := opt.Alpha; a != nil && (a.W != img.W || a.H != img.H || len(a.Pix) != a.W*a.H) {
		return fmt.Errorf("video: cannot write image %s: an alpha plane of %dx%d for %dx%d pixels", path, a.W, a.H, img.W, img.H)
	}
	if opt.Width < 0 || opt.Height < 0 {
		return fmt.Errorf("video: cannot write image %s at %dx%d: the size must be positive", path, opt.Width, opt.Height)
	}
	args := imageArgs(path, img.W, img.H, opt)
	if out != nil {
		// The format and codec are named on the command line: the descriptor's name needs no
		// extension.
		args[len(args)-1] = mediaPath(fdOutput)
	}
	cmd, tail := command(ctx, FFmpeg, args)
	if out != nil {
		cmd.ExtraFiles = []*os.File{out}
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("video: cannot write image %s: %v", path, err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("video: cannot write image %s: %w", path, exitError(ctx, FFmpeg, err, tail))
	}
	_, werr := in.Write(withAlpha(img, opt.Alpha))
	in.Close()
	if err := cmd.Wait(); err != nil { // ffmpeg's words say more than a broken pipe
		err = fmt.Errorf("video: cannot write image %s: %w", path, exitError(ctx, FFmpeg, err, tail))
		if writeFailed(tail.String()) {
			// Not a bad target: a full file system or quota (the environment's), or an I/O error.
			return fault.AsInternal(fault.AsNoRoom(err, filepath.Dir(path)))
		}
		return err
	}
	if werr != nil {
		return fmt.Errorf("video: cannot write image %s: %v", path, werr)
	}
	return nil
}

// withAlpha is img's packed rgb24 bytes, or rgba with alpha's bytes where alpha is given.
func withAlpha(img *raster.Image, alpha *raster.Alpha) []byte {
	if alpha == nil {
		return img.Bytes()
	}
	out := make([]byte, 0, img.W*img.H*4)
	for y := 0; y < img.H; y++ {
		row := img.Pix[y*img.Stride : y*img.Stride+img.W*3]
		for x := 0; x < img.W; x++ {
			out = append(out, row[3*x], row[3*x+1], row[3*x+2], alpha.Pix[y*img.W+x])
		}
	}
	return out
}
