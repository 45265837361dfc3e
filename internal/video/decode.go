package video

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Decoder streams the frames [start, end) of one video as packed rgb24 from an ffmpeg pipe.
type Decoder struct {
	ctx           context.Context
	info          *Info
	start, end    int
	width, height int // of the frames delivered: the target's, or what they are scaled to
	frameSize     int
	cmd           *exec.Cmd
	out           io.ReadCloser
	tail          *stderrTail
	got           int
	waited        bool
	err           error // sticky: once Next fails it keeps failing the same way

	// A scaled decode: ffmpeg gives the target's frames into whole, Resizer makes them
	// width×height.
	whole *raster.Image
	rs    raster.Resizer
}

// FrameSize is the byte size of one rgb24 frame of info.
func (info *Info) FrameSize() int { return info.Width * info.Height * 3 }

// OpenDecoder starts ffmpeg on info.Path for the frames [start, end). The range is exact: for a
// constant-rate stream in an indexed container ffmpeg seeks to half a frame before frame start
// (accurate seeking decodes from the keyframe before it and drops what precedes the seek time,
// so frame start is the first frame out whatever the GOP or B-frame layout); anything else is
// decoded from its first frame and the first start frames are dropped.
func OpenDecoder(ctx context.Context, info *Info, start, end int) (*Decoder, error) {
	return OpenScaledDecoder(ctx, info, start, end, info.Width, info.Height)
}

// OpenScaledDecoder is OpenDecoder with every frame scaled to width×height as FaceFusion's
// default (memory) workflow scales the frames it swaps on: each frame read whole, then
// cv2.resize with INTER_LINEAR (to_video.process_memory_frame), which raster.Resizer is bit for
// bit. Each frame is scaled on its own, so a frame is the same bytes whichever range it is
// decoded in.
func OpenScaledDecoder(ctx context.Context, info *Info, start, end, width, height int) (*Decoder, error) {
	if start < 0 || end > info.Frames || start >= end {
		return nil, fmt.Errorf("video: frame range [%d,%d) is outside %s, which has frames [0,%d): fix the range", start, end, info.Path, info.Frames)
	}
	if width <= 0 || height <= 0 {
		return nil, fmt.Errorf("video: decoding %s to %dx%d frames: the size must be positive", info.Path, width, height)
	}
	args := ffmpegArgs()
	seek := info.seekable()
	if start > 0 && seek {
		args = append(args, "-ss", seekTime(info, start))
	}
	args = append(args, threadArgs()...)
	args = append(args, hwaccelArgs()...)
	args = append(args, "-i", mediaPath(info.Path), "-map", "0:v:0", "-an", "-sn", "-dn")
	var filters []string
	if start > 0 && !seek {
		filters = append(filters, "trim=start_frame="+strconv.Itoa(start))
	}
	if len(filters) > 0 {
		args = append(args, "-vf", strings.Join(filters, ","))
	}
	args = append(args,
		// Each input frame exactly once: no duplication or dropping to fit a nominal rate.
		"-fps_mode", "passthrough",
		"-frames:v", strconv.Itoa(end-start),
		"-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1")
	cmd, tail := shielded(ctx, FFmpeg, args)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("video: decoding %s: %v", info.Path, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("video: decoding %s: %w", info.Path, exitError(ctx, FFmpeg, err, tail))
	}
	d := &Decoder{ctx: ctx, info: info, start: start, end: end, width: width, height: height,
		frameSize: width * height * 3, cmd: cmd, out: out, tail: tail}
	if width != info.Width || height != info.Height {
		d.whole = raster.New(info.Width, info.Height)
	}
	return d, nil
}

// seekable reports whether frame n can be reached by seeking to a time: the rate must be
// constant (n/FPS is then its time) and the container indexed by keyframe. MPEG-TS and other
// unindexed streams seek by bisecting bytes and can land past the keyframe a frame needs
// (seen here: wrong frames from MPEG-TS), so they are decoded from the start instead.
func (info *Info) seekable() bool {
	if info.VFR {
		return false
	}
	switch info.Format {
	case "mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm":
		return true
	}
	return false
}

// seekTime is half a frame before frame n, in container time: far from both neighbours, so
// timestamp rounding in any container cannot pick the wrong frame.
func seekTime(info *Info, n int) string {
	t := info.VideoStart.Seconds() + (float64(n)-0.5)*float64(info.FPS.Den)/float64(info.FPS.Num)
	if t < 0 {
		t = 0
	}
	return strconv.FormatFloat(t, 'f', 6, 64)
}

// Next reads the next frame into buf[:FrameSize]. It returns io.EOF after frame end-1, once
// ffmpeg has exited cleanly, and an error naming the file and range if ffmpeg ends early.
func (d *Decoder) Next(buf []byte) error {
	if d.err != nil {
		return d.err
	}
	if len(buf) < d.frameSize {
		return fmt.Errorf("video: frame buffer of %d bytes is too small for %dx%d rgb24 (%d bytes)", len(buf), d.width, d.height, d.frameSize)
	}
	if d.got == d.end-d.start {
		d.err = io.EOF
		if err := d.wait(); err != nil {
			d.err = fmt.Errorf("video: decoding frames [%d,%d) of %s: %w", d.start, d.end, d.info.Path, err)
		}
		return d.err
	}
	read := buf[:d.frameSize]
	if d.whole != nil {
		read = d.whole.Pix
	}
	if _, err := io.ReadFull(d.out, read); err != nil {
		werr := d.wait()
		if d.ctx.Err() != nil {
			d.err = fmt.Errorf("video: decoding %s stopped at frame %d: %w", d.info.Path, d.start+d.got, d.ctx.Err())
		} else if werr != nil {
			d.err = fmt.Errorf("video: ffmpeg gave %d of %d frames [%d,%d) of %s: %w", d.got, d.end-d.start, d.start, d.end, d.info.Path, werr)
		} else {
			d.err = fmt.Errorf("video: ffmpeg gave %d of %d frames [%d,%d) of %s: the file is shorter than probed (truncated?); re-probe or re-encode it", d.got, d.end-d.start, d.start, d.end, d.info.Path)
		}
		return d.err
	}
	if d.whole != nil {
		dst := &raster.Image{Pix: buf[:d.frameSize], Stride: 3 * d.width, W: d.width, H: d.height}
		d.rs.Resize(dst, dst.Bounds(), d.whole)
	}
	d.got++
	return nil
}

// Frame is the index (in the whole video) of the frame the next call to Next returns.
func (d *Decoder) Frame() int { return d.start + d.got }

func (d *Decoder) wait() error {
	if d.waited {
		return nil
	}
	d.waited = true
	if err := d.cmd.Wait(); err != nil {
		return exitError(d.ctx, FFmpeg, err, d.tail)
	}
	return nil
}

// Close stops ffmpeg. Closing before the last frame is normal (a cancelled chunk) and is not
// an error; the error of a finished decode was already returned by Next.
func (d *Decoder) Close() error {
	if d.waited {
		return nil
	}
	d.waited = true
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()
	if d.err == nil {
		d.err = errors.New("video: decoder is closed")
	}
	return nil
}

// scaleFilter scales to width×height as ffmpeg's `-s` does in FaceFusion's commands, with the
// scaler named rather than left to the ffmpeg build's default.
func scaleFilter(width, height int) string {
	return "scale=" + strconv.Itoa(width) + ":" + strconv.Itoa(height) + ":flags=bicubic"
}
