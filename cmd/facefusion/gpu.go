package main

import (
	"fmt"
	"strings"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/rank"
)

// gpuVariables are what Slurm sets in a step whose allocation has GPUs: the devices (job,
// step), their count on the node, and gres/gpu's ordinal list.
var gpuVariables = []string{"SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "SLURM_GPUS_ON_NODE", "GPU_DEVICE_ORDINAL"}

// gpuAllocation names what gives this rank a GPU ("SLURM_JOB_GPUS=0", "GPU 0 (visible 0)
// NVIDIA H100 …"), or "" when nothing does: Slurm's GPU variables, CUDA_VISIBLE_DEVICES as a
// Slurm step sets it, or a GPU the driver shows the rank (its binding, rank.Identify).
func gpuAllocation(comm collective.Comm, env func(string) (string, bool)) string {
	for _, name := range gpuVariables {
		if v, ok := env(name); ok && devicesIn(name, v) {
			return name + "=" + strings.TrimSpace(v)
		}
	}
	if _, slurm := env("SLURM_JOB_ID"); slurm {
		if v, ok := env("CUDA_VISIBLE_DEVICES"); ok && devicesIn("CUDA_VISIBLE_DEVICES", v) {
			return "CUDA_VISIBLE_DEVICES=" + strings.TrimSpace(v) + " in Slurm job"
		}
	}
	id, err := rank.Identify(comm.Rank(), comm.Size(), comm.LocalRank(), comm.LocalSize(), rank.Options{LookupEnv: env})
	if err == nil && !id.GPU.CPU() && id.GPU.Name != "" { // the driver knows it: a real device
		return id.GPU.String()
	}
	return ""
}

// devicesIn reports whether a GPU variable's value names at least one device: Slurm writes
// NoDevFiles when the job has none, and SLURM_GPUS_ON_NODE is a count.
func devicesIn(name, v string) bool {
	switch v = strings.TrimSpace(v); v {
	case "", "-1", "NoDevFiles":
		return false
	case "0":
		return name != "SLURM_GPUS_ON_NODE"
	}
	return true
}

// settleProviders gives cfg FaceFusion's default providers when it names none (the first the
// runtime has, infer.FaceFusionOrder), and refuses a job whose rank has a GPU but whose models
// would run on the CPU, unless the user asked for the CPU alone: a GPU partition's hours spent
// on CPU are the costliest silent mistake a cluster job can make. A runtime that does not load
// leaves cfg as it is, for the run to report as it always has.
func settleProviders(comm collective.Comm, cfg job.Config, env func(string) (string, bool)) (job.Config, error) {
	given := len(cfg.ExecutionProviders) > 0
	if !cfg.RunsModels() {
		if !given { // nothing runs on a provider: the fingerprint records cpu as before
			cfg.ExecutionProviders = []string{infer.ProviderCPU}
		}
		return cfg, nil
	}
	if err := pipeline.InitRuntime(cfg); err != nil {
		return cfg, nil
	}
	avail, err := infer.AvailableProviders()
	if err != nil {
		return cfg, nil
	}
	if !given {
		cfg.ExecutionProviders = avail.Default()
	}
	run, err := pipeline.ResolveProviders(cfg)
	if err != nil || run.UsesGPU() || (given && !cfg.UsesGPU()) {
		return cfg, nil // refused later as before, on a GPU, or on the CPU on purpose
	}
	alloc := gpuAllocation(comm, env)
	if alloc == "" {
		return cfg, nil
	}
	return cfg, fault.AsEnvironment(fmt.Errorf("this rank has a GPU (%s) but its models would run on the CPU: the ONNX Runtime %s has %s only (%s): give the runtime its GPU providers (`make fetch-gpu`, docs/cluster.md, \"GPUs\"), or set execution_providers = [\"cpu\"] (--execution-providers cpu) to run on the CPU on purpose",
		alloc, cfg.RuntimeLocation(), strings.Join(avail.Available, " "), avail.Why()))
}

// unusedProviderLibrary is why a GPU provider library the user named (the flag, the TOML key or
// the environment variable) goes unused by a job that runs on the CPU, "" when none was named,
// the job uses a GPU, or it names its providers (given; cpu alone is its own choice): naming a library
// says a GPU was wanted, and the fall back to the CPU must not be silent.
func unusedProviderLibrary(cfg job.Config, given bool) string {
	if !cfg.ProviderLibraryGiven() || !cfg.RunsModels() || cfg.UsesGPU() || given {
		return ""
	}
	a, err := infer.AvailableProviders()
	if err != nil || a.GPU() {
		return ""
	}
	return fmt.Sprintf("the GPU provider library %s is not used, so the models run on the CPU: %s", cfg.ProviderLocation(), a.Why())
}
