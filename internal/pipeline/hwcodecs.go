package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// Codecs are the video codecs a job's ranks run, decided once by rank 0 (ChooseCodecs) and
// used by every rank: segments of one output must come from one encoder.
type Codecs struct {
	Encoder        string // ffmpeg's encoder name: the job's, or its NVENC pair
	HardwareDecode bool   // decode through NVDEC
}

// ChooseCodecs decides cfg's codecs on this node for the target of info (hardware_codecs):
// the NVENC pair of the job's encoder and NVDEC where each one's trial works, the job's own
// encoder and the CPU's decoder otherwise. With auto the hardware is tried only for a job that
// runs on a GPU, and line says what was chosen and why, in one line; with on, a codec that
// cannot run is an Environment fault (an encoder without an NVENC pair a Usage fault).
func ChooseCodecs(ctx context.Context, cfg job.Config, info *video.Info) (c Codecs, line string, err error) {
	c.Encoder = EncodeOptions(cfg, info).ChosenEncoder()
	mode := cfg.HardwareCodecs
	if mode == "off" || (mode == "auto" && !cfg.UsesGPU()) {
		return c, "", nil
	}
	hw, paired := video.HardwareEncoder(c.Encoder)
	if !paired && mode == "on" {
		return c, "", fault.AsUsage(fmt.Errorf("--hardware-codecs on: --output-video-encoder %s has no NVENC encoder: use libx264 or libx265 (h264_nvenc, hevc_nvenc), or --hardware-codecs auto or off", c.Encoder))
	}
	var said []string
	if paired {
		if err := video.TryEncoder(ctx, hw); err != nil {
			if mode == "on" {
				return c, "", fault.AsEnvironment(fmt.Errorf("--hardware-codecs on: %v: run on a node with an NVIDIA GPU, driver and an ffmpeg built with NVENC, or use --hardware-codecs auto or off", err))
			}
			said = append(said, fmt.Sprintf("encoding with %s on the CPU (%v)", c.Encoder, err))
		} else {
			said = append(said, fmt.Sprintf("encoding with %s (NVENC) instead of %s", hw, c.Encoder))
			c.Encoder = hw
		}
	}
	if err := video.TryHardwareDecode(ctx, info); err != nil {
		if mode == "on" {
			return Codecs{}, "", fault.AsEnvironment(fmt.Errorf("--hardware-codecs on: %v: run on a node with an NVIDIA GPU and driver, or use --hardware-codecs auto or off", err))
		}
		said = append(said, fmt.Sprintf("decoding on the CPU (%v)", err))
	} else {
		said = append(said, "decoding with NVDEC")
		c.HardwareDecode = true
	}
	return c, "hardware codecs: " + strings.Join(said, "; "), nil
}

// Use makes this rank run c: cfg's encoder becomes c's (EncodeOptions, the output check and the
// resume fingerprint then see the encoder the segments are written with) and every later decoder
// of the process decodes as c says.
func (c Codecs) Use(cfg *job.Config) {
	if c.Encoder != "" {
		cfg.OutputVideoEncoder = c.Encoder
	}
	video.SetHardwareDecode(c.HardwareDecode)
}

// Check is a rank's own trial of rank 0's choice, before any frame: a node of the allocation
// without the GPU codecs rank 0's node has fails the job at start, naming itself, rather than
// at its first segment.
func (c Codecs) Check(ctx context.Context, me int, info *video.Info) error {
	if video.IsHardwareEncoder(c.Encoder) {
		if err := video.TryEncoder(ctx, c.Encoder); err != nil {
			return fault.AsEnvironment(fmt.Errorf("rank %d: rank 0 chose %s, but %v: give the job nodes alike, or --hardware-codecs off", me, c.Encoder, err))
		}
	}
	if c.HardwareDecode {
		if err := video.TryHardwareDecode(ctx, info); err != nil {
			return fault.AsEnvironment(fmt.Errorf("rank %d: rank 0 decodes with NVDEC, but %v: give the job nodes alike, or --hardware-codecs off", me, err))
		}
	}
	return nil
}
