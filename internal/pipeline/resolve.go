package pipeline

import (
	"fmt"
	"slices"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// Resolved is cfg as this node runs it on the target of info: the trim range's automatic ends
// as frame numbers, the output's frame rate, the encoder OpenEncoder chooses, and, when a model runs, the execution
// providers left after the fallback and tensorrt_fp16 only where TensorRT runs. The resume
// fingerprint compares these rather than the settings: a job asked for cuda that ran on cpu
// gives other pixels than one that ran on cuda, and trim end -1 is another range on another
// target. When no model runs the provider settings stand as given: nothing resolves them, and
// a resume that stops running models is refused for its processors, not for its providers.
// Loads the runtime (once per process) when a model runs.
func Resolved(cfg job.Config, info *video.Info) (job.Config, error) {
	start, end, err := FrameRange(cfg, info.Frames)
	if err != nil {
		return cfg, fault.AsInput(fmt.Errorf("target %s: %w", cfg.TargetPath, err))
	}
	cfg.TrimFrameStart, cfg.TrimFrameEnd = start, end
	cfg.OutputVideoFPS = OutputRate(cfg, info).Float() // 0 is the target's rate: compare the rate
	cfg.OutputVideoEncoder = EncodeOptions(cfg, info).ChosenEncoder()
	if !cfg.FindsFaces() {
		return cfg, nil
	}
	if err := InitRuntime(cfg); err != nil { // the providers are asked of the runtime
		return cfg, err
	}
	used, err := infer.ResolveProviders(sessionConfig(cfg, "").Execution)
	if err != nil {
		return cfg, fault.AsEnvironment(err)
	}
	cfg.ExecutionProviders = used
	cfg.TensorRTFP16 = cfg.TensorRTFP16 && slices.Contains(used, infer.ProviderTensorRT)
	return cfg, nil
}
