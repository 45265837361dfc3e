package pipeline

import (
	"context"

	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/spec"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// Pretry is a rank's own trials of the codecs rank 0 may choose for cfg (the NVENC pair of its
// encoder and NVDEC on its target, as spec.ChooseCodecs tries them), run while rank 0 plans, before
// the plan says what rank 0 chose: the answers are cached (video.TryEncoder,
// video.TryHardwareDecode), so spec.Codecs.Check, once the plan is in, compares at no further cost.
// Nothing for a job that tries no hardware, or an image target; errors wait for Check.
func Pretry(ctx context.Context, cfg job.Config) {
	if !spec.TriesHardware(cfg) || video.IsImagePath(cfg.TargetPath) {
		return
	}
	if enc := spec.HardwareTrial(cfg); enc != "" {
		video.TryEncoder(ctx, enc)
	}
	if info, err := video.ProbeHeader(ctx, cfg.TargetPath); err == nil {
		video.TryHardwareDecode(ctx, info)
	}
}
