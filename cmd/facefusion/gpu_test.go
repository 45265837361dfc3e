package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// A rank Slurm gave a GPU whose models would run on the CPU (this machine's runtime is a CPU
// build) fails before the first frame, in one line that says what was allocated, what the
// runtime lacks and what to do; cuda cpu asked for is refused the same way; cpu asked for (a
// flag or a job file's key) runs.
func TestGPUAllocationRefusesCPURun(t *testing.T) {
	dir := t.TempDir()
	img := testenv.Sample(t, "grace_hopper.png")
	run := func(out string, extra ...string) clitest.Result {
		cmd := clitest.Command(t, append([]string{"run", "-s", img, "-t", img, "-o", out}, extra...)...)
		// No GPU providers: the checkout's .cache/ort-gpu may hold make fetch-gpu's.
		cmd.Env = append(cmd.Env, "SLURM_JOB_ID=7", "SLURM_JOB_GPUS=0", "FACEFUSION_EXECUTION_PROVIDER_LIBRARY="+dir)
		return clitest.Exec(t, cmd)
	}
	for _, extra := range [][]string{nil, {"--execution-providers", "cuda", "cpu"}} {
		out := filepath.Join(dir, "refused.png")
		r := run(out, extra...)
		if r.Code != exitEnvironment {
			t.Fatalf("%v: exit %d, want %d; stderr:\n%s", extra, r.Code, exitEnvironment, r.Stderr)
		}
		if lines := strings.Split(strings.TrimSpace(r.Stderr), "\n"); len(lines) != 1 {
			t.Errorf("%v: want one line, got %d:\n%s", extra, len(lines), r.Stderr)
		}
		for _, want := range []string{"SLURM_JOB_GPUS=0", "would run on the CPU", "has cpu only", "no CUDA provider library (run `make fetch-gpu`, or set execution_provider_library)",
			`execution_providers = ["cpu"]`, "docs/cluster.md"} {
			if !strings.Contains(r.Stderr, want) {
				t.Errorf("%v: the line lacks %q:\n%s", extra, want, r.Stderr)
			}
		}
		clitest.MustNotExist(t, out)
	}
	cfg := filepath.Join(dir, "cpu.toml")
	if err := os.WriteFile(cfg, []byte("execution_providers = [\"cpu\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "cpu.png")
	if r := run(out, "--config", cfg, "--log-level", "error"); r.Code != 0 || strings.TrimSpace(r.Stderr) != "" {
		t.Fatalf("execution_providers = [\"cpu\"]: exit %d, want 0 and nothing on stderr; stderr:\n%s", r.Code, r.Stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Error(err)
	}
}

// What gives a rank a GPU: Slurm's GPU variables naming a device, CUDA_VISIBLE_DEVICES in a
// Slurm job; not NoDevFiles, a count of 0, or CUDA_VISIBLE_DEVICES outside Slurm (no driver
// here to show the rank a device).
func TestGPUAllocationVariables(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want string
	}{
		{nil, ""},
		{[]string{"SLURM_JOB_GPUS", "0"}, "SLURM_JOB_GPUS=0"},
		{[]string{"SLURM_STEP_GPUS", "2,3"}, "SLURM_STEP_GPUS=2,3"},
		{[]string{"SLURM_GPUS_ON_NODE", "0"}, ""},
		{[]string{"SLURM_GPUS_ON_NODE", "4"}, "SLURM_GPUS_ON_NODE=4"},
		{[]string{"GPU_DEVICE_ORDINAL", "1"}, "GPU_DEVICE_ORDINAL=1"},
		{[]string{"SLURM_JOB_ID", "7", "CUDA_VISIBLE_DEVICES", "NoDevFiles"}, ""},
		{[]string{"SLURM_JOB_ID", "7", "CUDA_VISIBLE_DEVICES", "0"}, "CUDA_VISIBLE_DEVICES=0 in Slurm job"},
		{[]string{"CUDA_VISIBLE_DEVICES", "0"}, ""},
	} {
		env := func(name string) (string, bool) {
			for i := 0; i+1 < len(c.env); i += 2 {
				if c.env[i] == name {
					return c.env[i+1], true
				}
			}
			return "", false
		}
		if got := gpuAllocation(collective.Single(), env); got != c.want {
			t.Errorf("%v: %q, want %q", c.env, got, c.want)
		}
	}
}

// Without a GPU allocation the default providers resolve to the runtime's first, cpu here:
// the run needs no flag and says nothing of providers.
func TestDefaultProvidersRunOnCPU(t *testing.T) {
	dir := t.TempDir()
	img := testenv.Sample(t, "grace_hopper.png")
	out := filepath.Join(dir, "out.png")
	r := clitest.Run(t, "headless-run", "-s", img, "-t", img, "-o", out, "--log-level", "debug")
	if r.Code != 0 || !strings.Contains(r.Stderr, "execution providers: cpu, FaceFusion's default") {
		t.Fatalf("exit %d, want 0 and the default's debug line; stderr:\n%s", r.Code, r.Stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Error(err)
	}
}

// A GPU provider library the user names but the runtime cannot use is said once, on rank 0,
// when the job falls back to the CPU by default; naming cpu is the user's own choice and gets
// no word.
func TestNamedProviderLibraryUnusedIsSaid(t *testing.T) {
	dir := t.TempDir()
	img := testenv.Sample(t, "grace_hopper.png")
	lib := filepath.Join(dir, "libonnxruntime_providers_cuda.so")
	if err := os.WriteFile(lib, []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(extra ...string) clitest.Result {
		return clitest.Run(t, append([]string{"headless-run", "-s", img, "-t", img, "-o", filepath.Join(dir, "out.png"),
			"--execution-provider-library", lib, "--force"}, extra...)...)
	}
	r := run()
	if r.Code != 0 || strings.Count(r.Stderr, "the GPU provider library "+lib) != 1 || !strings.Contains(r.Stderr, "models run on the CPU") {
		t.Errorf("default providers: exit %d, want 0 and one warning naming %s; stderr:\n%s", r.Code, lib, r.Stderr)
	}
	if r := run("--execution-providers", "cpu"); r.Code != 0 || strings.Contains(r.Stderr, "GPU provider library") {
		t.Errorf("cpu named: exit %d, want 0 and no word of the library; stderr:\n%s", r.Code, r.Stderr)
	}
}

// probe shows the runtime it found, where and why there, and its providers, each provider's
// why once, on its library's line; it takes FaceFusion's --execution-device-ids, several of
// them, and the singular.
func TestProbeShowsProviders(t *testing.T) {
	empty := t.TempDir()
	for _, args := range [][]string{{"probe"}, {"probe", "--execution-device-ids", "0", "1"}, {"probe", "--execution-device-id", "cpu"}} {
		r := clitest.Run(t, append(args, "--execution-provider-library", empty)...)
		if r.Code != 0 || !strings.Contains(r.Stdout, "onnx runtime: ") || !strings.Contains(r.Stdout, "libonnxruntime.so.1 (from ") ||
			!strings.Contains(r.Stdout, ": providers cpu; no cuda, tensorrt (why: their lines below)\n") ||
			!strings.Contains(r.Stdout, "\n  GPU providers from "+empty+" (from execution_provider_library") ||
			!strings.Contains(r.Stdout, "\n  cuda: no CUDA provider library (run `make fetch-gpu`, or set execution_provider_library): "+empty) ||
			strings.Count(r.Stdout, "no CUDA provider library") != 1 || strings.Count(r.Stdout, "no TensorRT provider library") != 1 {
			t.Errorf("%v: exit %d, want each provider's why once; stdout:\n%s\nstderr:\n%s", args, r.Code, r.Stdout, r.Stderr)
		}
	}
	if r := clitest.Run(t, "probe", "--execution-device-ids", "x"); r.Code != exitUsage || !strings.Contains(r.Stderr, "--execution-device-ids") {
		t.Errorf("a bad device: exit %d, want %d; stderr:\n%s", r.Code, exitUsage, r.Stderr)
	}
}

// FaceFusion's benchmark and job-* commands are refused in one line naming what to use here;
// config-kind, and job-kind under its first name, say which command a job file is for.
func TestJobCommandsOfFaceFusion(t *testing.T) {
	if len(notHere) != 15 {
		t.Errorf("%d of FaceFusion's commands refused, want benchmark and its fourteen job-* commands", len(notHere))
	}
	for name := range notHere {
		r := clitest.Run(t, name, "--job-id", "x")
		if r.Code != exitUsage || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 ||
			!strings.Contains(r.Stderr, name+" is FaceFusion's command, not this program's: "+notHere[name]) {
			t.Errorf("%s: exit %d, want %d and one line with what to use; stderr:\n%s", name, r.Code, exitUsage, r.Stderr)
		}
	}
	cfg := filepath.Join(t.TempDir(), "job.toml")
	if err := os.WriteFile(cfg, []byte("target_pattern = \"a/*.png\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"config-kind", "job-kind"} {
		if r := clitest.Run(t, cmd, cfg); r.Code != 0 || strings.TrimSpace(r.Stdout) != "batch-run" {
			t.Errorf("%s: exit %d, stdout %q, want batch-run; stderr:\n%s", cmd, r.Code, r.Stdout, r.Stderr)
		}
	}
}

// A job that asks for cuda alone, whose CUDA provider library needs a CUDA library this machine
// lacks (a generated provider that needs libcublasLt.so.13, as ONNX Runtime's does), fails
// before the first frame with exit 4 and one line naming that library; probe and models name
// the provider library and say why it did not load.
func TestCUDAProviderLibraryMissingCUDA(t *testing.T) {
	testenv.Full(t, "runs the binary")
	dir := t.TempDir()
	lib := testenv.StubLibrary(t, filepath.Join(dir, "gpu", "libonnxruntime_providers_cuda.so"), []string{"CreateEpFactories"}, []string{"libcublasLt.so.13"})
	img := testenv.Sample(t, "grace_hopper.png")
	out := filepath.Join(dir, "out.png")
	r := clitest.Run(t, "run", "-s", img, "-t", img, "-o", out, "--execution-providers", "cuda", "--execution-provider-library", filepath.Dir(lib))
	if r.Code != exitEnvironment {
		t.Fatalf("exit %d, want %d; stderr:\n%s", r.Code, exitEnvironment, r.Stderr)
	}
	if lines := strings.Split(strings.TrimSpace(r.Stderr), "\n"); len(lines) != 1 {
		t.Errorf("want one line, got %d:\n%s", len(lines), r.Stderr)
	}
	for _, want := range []string{"execution providers cuda: none is available here", lib, "libcublasLt.so.13: cannot open shared object file", "CUDA 13's libraries are missing"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("the line lacks %q:\n%s", want, r.Stderr)
		}
	}
	clitest.MustNotExist(t, out)
	for _, args := range [][]string{{"probe"}, {"models"}} {
		r := clitest.Run(t, append(args, "--execution-provider-library", filepath.Dir(lib))...)
		if !strings.Contains(r.Stdout, lib+": cannot be loaded: libcublasLt.so.13: cannot open shared object file") ||
			args[0] == "probe" && strings.Count(r.Stdout, "libcublasLt.so.13") != 1 {
			t.Errorf("%s: exit %d; stdout:\n%s\nstderr:\n%s", args[0], r.Code, r.Stdout, r.Stderr)
		}
	}
}
