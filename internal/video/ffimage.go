package video

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/fault"
)

// FFImageCommand runs FaceFusion's ffmpeg for an image (ffmpeg.copy_image, finalize_image):
// `ffmpeg -loglevel error -i IN -s WxH -q:v Q -y OUT`, the encoder chosen by OUT's extension,
// with Q from set_image_quality for the format of qualityPath (FaceFusion names the target
// there, not OUT). The command is FaceFusion's to the argument, so ffmpeg's own decoder,
// scaler and encoder give FaceFusion's bytes.
func FFImageCommand(ctx context.Context, in, out, qualityPath string, w, h, quality int) error {
	args := []string{"-nostdin", "-loglevel", "error", "-i", mediaPath(in),
		"-s", strconv.Itoa(w) + "x" + strconv.Itoa(h)}
	args = append(args, setImageQuality(qualityPath, quality)...)
	args = append(args, "-y", mediaPath(out))
	cmd, tail := command(ctx, FFmpeg, args)
	if err := cmd.Run(); err != nil {
		err = exitError(ctx, FFmpeg, err, tail)
		if writeFailed(tail.String()) {
			// Not a bad target: a full file system or quota (the environment's), or an I/O error.
			return fault.AsInternal(fault.AsNoRoom(err, filepath.Dir(out)))
		}
		return err
	}
	return nil
}

// setImageQuality is FaceFusion's ffmpeg_builder.set_image_quality: webp takes the quality
// itself, every other format the quantiser round(31 − 0.31·quality).
func setImageQuality(path string, quality int) []string {
	if strings.EqualFold(filepath.Ext(path), ".webp") {
		return []string{"-q:v", strconv.Itoa(quality)}
	}
	return imageQualityArgs("jpeg", quality)
}
