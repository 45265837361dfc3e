package pipeline

import (
	"slices"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
)

// ResolveProviders is cfg (as its spec settled it, spec.Spec.Settled) with, when a model runs,
// the execution providers left after the fallback and tensorrt_fp16 only where TensorRT runs.
// The resume fingerprint compares these rather than the settings: a job asked for cuda that
// ran on cpu gives other pixels than one that ran on cuda. When no model runs the provider
// settings stand as given: nothing resolves them, and a resume that stops running models is
// refused for its processors, not for its providers. Loads the runtime (once per process) when
// a model runs.
func ResolveProviders(cfg job.Config) (job.Config, error) {
	if !cfg.RunsModels() {
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
