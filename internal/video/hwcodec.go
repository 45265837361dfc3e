package video

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
)

// Hardware video codecs. On a GPU node a rank can decode with NVDEC (ffmpeg's cuda hwaccel) and
// encode with NVENC, which leaves the node's CPUs to the rest of the pipeline. Whether a node can
// is only known by trying: ffmpeg lists h264_nvenc wherever it was built with it, and fails only
// when it opens the encoder (no libcuda, no NVIDIA driver, no free NVENC session). So each is
// tried once a process on one small frame, and used only when the trial works.

// hardwareEncoders maps a software encoder to the NVENC encoder of the same codec: the only
// pairs a job may switch between, since the output's codec must not change with the node.
var hardwareEncoders = map[string]string{
	"libx264": "h264_nvenc",
	"libx265": "hevc_nvenc",
}

// HardwareEncoder is the NVENC encoder of sw's codec, if there is one.
func HardwareEncoder(sw string) (string, bool) {
	hw, ok := hardwareEncoders[sw]
	return hw, ok
}

// IsHardwareEncoder reports whether enc is one of the NVENC encoders a job may switch to.
func IsHardwareEncoder(enc string) bool {
	for _, hw := range hardwareEncoders {
		if hw == enc {
			return true
		}
	}
	return false
}

// trialSize is the frame a trial encodes: NVENC refuses frames below 145×49 on some GPUs, so it
// is larger than that, and small enough to cost nothing.
const trialSize = 256

// trials caches each trial's answer for the process: a batch runs many targets on one node.
var trials sync.Map // key string -> *trial

type trial struct {
	once sync.Once
	err  error
}

func tryOnce(key string, run func() error) error {
	t, _ := trials.LoadOrStore(key, &trial{})
	tr := t.(*trial)
	tr.once.Do(func() { tr.err = run() })
	return tr.err
}

// TryEncoder encodes one black frame with enc (ffmpeg's encoder name) and throws it away: nil
// when this node's ffmpeg, driver and device can run it, else ffmpeg's reason. A cancelled ctx is
// not cached.
func TryEncoder(ctx context.Context, enc string) error {
	run := func() error {
		size := strconv.Itoa(trialSize) + "x" + strconv.Itoa(trialSize)
		_, err := runTool(ctx, FFmpeg, ffmpegArgs("-f", "lavfi", "-i", "color=c=black:s="+size+":r=25",
			"-frames:v", "1", "-c:v", enc, "-pix_fmt", "yuv420p", "-f", "null", "-")...)
		if err != nil {
			return fmt.Errorf("%s cannot run on this node: %w", enc, err)
		}
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return tryOnce("enc|"+enc, run)
}

// TryHardwareDecode decodes the first video frame of path through NVDEC (-hwaccel cuda): nil
// when this node can, else ffmpeg's reason. ffmpeg 5.1 fails a hwaccel it cannot set up rather
// than falling back, so a decoder must not ask for it without this trial. Cached per what NVDEC
// support depends on (decodeKey): a batch's later target of the same codec in a profile, bit
// depth or size NVDEC lacks (H.264 High 4:4:4, 10-bit, above its largest frame) is tried anew.
func TryHardwareDecode(ctx context.Context, info *Info) error {
	run := func() error {
		_, err := runTool(ctx, FFmpeg, ffmpegArgs("-hwaccel", "cuda", "-i", mediaPath(info.Path),
			"-map", "0:v:0", "-frames:v", "1", "-f", "null", "-")...)
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// The answer is cached per decodeKey, so it is kept without a path: a later target with the
	// same key is named as itself, not as the file the trial ran on.
	if err := tryOnce(decodeKey(info), run); err != nil {
		return fmt.Errorf("NVDEC (ffmpeg -hwaccel cuda) cannot decode %s (%s %s, %s, %dx%d) on this node: %w",
			info.Path, info.Codec, info.Profile, info.PixFmt, info.Width, info.Height, err)
	}
	return nil
}

// decodeKey names a decode trial by what NVDEC support depends on: the codec, its profile, the
// pixel format (chroma and bit depth) and the frame size.
func decodeKey(info *Info) string {
	return fmt.Sprintf("dec|%s|%s|%s|%dx%d", info.Codec, info.Profile, info.PixFmt, info.Width, info.Height)
}

// hwDecode says whether every later decoder asks for NVDEC; set once per rank, like threads.
var hwDecode atomic.Bool

// SetHardwareDecode makes every later decoder decode through NVDEC (on) or on the CPU (off).
func SetHardwareDecode(on bool) { hwDecode.Store(on) }

// hwaccelArgs go before a decoder's -i: NVDEC decodes, and the frames come back to system
// memory for the rgb24 conversion, which stays ffmpeg's software scaler (the same bytes).
func hwaccelArgs() []string {
	if !hwDecode.Load() {
		return nil
	}
	return []string{"-hwaccel", "cuda"}
}
