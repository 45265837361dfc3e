package spec

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// Codecs are the video codecs a job's ranks run, decided once by rank 0 (ChooseCodecs) and
// used by every rank (Spec.WithCodecs, Spec.UseDecoder): segments of one output must come
// from one encoder.
type Codecs struct {
	Encoder string // ffmpeg's encoder name: the job's, or its NVENC pair
	// Requested is the job's own encoder (output_video_encoder as resolved), which the resume
	// fingerprint records: which of the pair the segments are written with is the job folder's
	// to say (Folder), not a difference between jobs.
	Requested      string
	HardwareDecode bool // decode through NVDEC
}

// Folder is what the job folder of a job being resumed says about its codecs: Encoder is the
// encoder its segments were written with, "" for a new job (or one restarted with --fresh).
type Folder struct {
	Path    string
	Encoder string
}

// ChooseCodecs decides cfg's codecs on this node for the target of info (hardware_codecs):
// the NVENC pair of the job's encoder and NVDEC where each one's trial works, the job's own
// encoder and the CPU's decoder otherwise. With auto the hardware is tried only for a job that
// runs on a GPU, and line says what was chosen and why, in one line; with on, a codec that
// cannot run is an Environment fault (an encoder without an NVENC pair a Usage fault).
//
// A resumed job (folder.Encoder set to the job's encoder or its NVENC pair) keeps the encoder
// its segments were written with, whatever this node has: one output takes one encoder. When
// this node cannot run it, that is an Environment fault naming the encoder and the folder.
func ChooseCodecs(ctx context.Context, cfg job.Config, info *video.Info, folder Folder) (c Codecs, line string, err error) {
	c.Requested = RequestedEncoder(cfg)
	mode, tries := cfg.HardwareCodecs, TriesHardware(cfg)
	var said []string
	if asked := cfg.OutputVideoEncoder; asked != "" && c.Requested != asked {
		defer func() { // said first, on its own or before the hardware codecs' line
			fixed := fmt.Sprintf("output_video_encoder %s: FaceFusion writes a %s output with %s; so does this job", asked, filepath.Ext(cfg.OutputPath), c.Requested)
			if err == nil && line != "" {
				line = fixed + "; " + line
			} else if err == nil {
				line = fixed
			}
		}()
	}
	if c.Encoder, said, err = chooseEncoder(ctx, cfg.OutputPath, c.Requested, mode, tries, folder); err != nil {
		return Codecs{}, "", err
	}
	if tries {
		if err := video.TryHardwareDecode(ctx, info); err != nil {
			if mode == "on" {
				return Codecs{}, "", fault.AsEnvironment(fmt.Errorf("--hardware-codecs on: %v: run on a node with an NVIDIA GPU and driver, or use --hardware-codecs auto or off", err))
			}
			said = append(said, fmt.Sprintf("decoding on the CPU (%v)", err))
		} else {
			said = append(said, "decoding with NVDEC")
			c.HardwareDecode = true
		}
	}
	if len(said) == 0 {
		return c, "", nil
	}
	return c, "hardware codecs: " + strings.Join(said, "; "), nil
}

// RequestedEncoder is the job's own video encoder: output_video_encoder, or the one FaceFusion
// swaps in for the output's container (FaceFusionEncoder), libx264 when none is named.
func RequestedEncoder(cfg job.Config) string {
	return video.EncodeOptions{Encoder: FaceFusionEncoder(cfg.OutputPath, cfg.OutputVideoEncoder)}.ChosenEncoder()
}

// HardwareTrial is the NVENC encoder a job of cfg may run, which a rank tries while rank 0
// plans (pipeline.Pretry) so that Codecs.Check finds the answer cached: the pair ChooseCodecs
// tries, or the job's own encoder when it is an NVENC one; "" when there is none.
func HardwareTrial(cfg job.Config) string {
	requested := RequestedEncoder(cfg)
	if hw, ok := hardwarePair(cfg.OutputPath, requested); ok {
		return hw
	}
	if video.IsHardwareEncoder(requested) {
		return requested
	}
	return ""
}

// hardwarePair is the NVENC encoder a job whose own encoder is requested may switch to for the
// output out: none where the container's encoder is FaceFusion's whatever is asked
// (FaceFusionEncoder: an .m4v, .mpeg, .mxf or .wmv output is libx264's), as its segments
// would be written with that encoder and not with the NVENC one chosen.
func hardwarePair(out, requested string) (string, bool) {
	hw, ok := video.HardwareEncoder(requested)
	if !ok || FaceFusionEncoder(out, hw) != hw {
		return "", false
	}
	return hw, true
}

// TriesHardware reports whether cfg's codecs are chosen by trial: hardware_codecs on, or auto
// for a job that runs on a GPU. A CPU job pays for no trial.
func TriesHardware(cfg job.Config) bool {
	return cfg.HardwareCodecs == "on" || (cfg.HardwareCodecs == "auto" && cfg.UsesGPU())
}

// chooseEncoder is ChooseCodecs' encoder for the output out: requested, or its NVENC pair;
// said is what to tell.
func chooseEncoder(ctx context.Context, out, requested, mode string, tries bool, folder Folder) (enc string, said []string, err error) {
	hw, paired := hardwarePair(out, requested)
	if _, has := video.HardwareEncoder(requested); has && !paired && mode == "on" {
		return "", nil, fault.AsUsage(fmt.Errorf("--hardware-codecs on: FaceFusion writes a %s output with %s, whatever encoder is asked, and NVENC does not replace it: use another container (.mp4, .mkv, .mov), or --hardware-codecs auto or off", filepath.Ext(out), requested))
	}
	if !paired && mode == "on" {
		return "", nil, fault.AsUsage(fmt.Errorf("--hardware-codecs on: --output-video-encoder %s has no NVENC encoder: use libx264 or libx265 (h264_nvenc, hevc_nvenc), or --hardware-codecs auto or off", requested))
	}
	if enc = folder.Encoder; enc != "" && (enc == requested || paired && enc == hw) {
		// The job folder decides: its segments were written with enc.
		if !video.IsHardwareEncoder(enc) {
			if paired && tries {
				said = append(said, fmt.Sprintf("encoding with %s, as job folder %s's segments were (--fresh restarts the job with NVENC where it runs)", enc, folder.Path))
			}
			return enc, said, nil
		}
		restart := "another --output-video-encoder"
		if enc != requested {
			restart = requested
			if mode == "off" {
				return "", nil, fault.AsUsage(fmt.Errorf("job folder %s was encoded with %s (NVENC), which --hardware-codecs off does not use: resume it with hardware_codecs auto or on, on a node with NVENC, or pass --fresh to restart it with %s", folder.Path, enc, restart))
			}
		}
		if err := video.TryEncoder(ctx, enc); err != nil {
			return "", nil, fault.AsEnvironment(fmt.Errorf("job folder %s was encoded with %s (hardware_codecs), but %v: one output takes one encoder: resume it on a node with an NVIDIA GPU and NVENC, or pass --fresh to restart it with %s (its segments are discarded)", folder.Path, enc, err, restart))
		}
		if enc != requested {
			said = append(said, fmt.Sprintf("encoding with %s (NVENC), as job folder %s's segments were", enc, folder.Path))
		}
		return enc, said, nil
	}
	if !paired || !tries {
		return requested, nil, nil
	}
	if err := video.TryEncoder(ctx, hw); err != nil {
		if mode == "on" {
			return "", nil, fault.AsEnvironment(fmt.Errorf("--hardware-codecs on: %v: run on a node with an NVIDIA GPU, driver and an ffmpeg built with NVENC, or use --hardware-codecs auto or off", err))
		}
		return requested, []string{fmt.Sprintf("encoding with %s on the CPU (%v)", requested, err)}, nil
	}
	return hw, []string{fmt.Sprintf("encoding with %s (NVENC) instead of %s", hw, requested)}, nil
}

// Check is a rank's own trial of rank 0's choice, before any frame: a node of the allocation
// without the GPU codecs rank 0's node has fails the job at start, naming itself, rather than
// at its first segment. The trials Pretry ran while rank 0 planned are not run again.
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
