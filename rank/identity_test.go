package rank

import (
	"errors"
	"strings"
	"testing"
)

type fakeProbe struct {
	count int
	err   error
	seen  []string
}

func (f *fakeProbe) Count() (int, error) { return f.count, f.err }
func (f *fakeProbe) Info(v string) (GPUInfo, error) {
	f.seen = append(f.seen, v)
	if f.err != nil {
		return GPUInfo{}, f.err
	}
	return GPUInfo{Name: "Fake H200", UUID: "GPU-uuid-" + v, MemoryBytes: 141 << 30}, nil
}

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestBindByLocalRankWithinVisibleDevices(t *testing.T) {
	for local, want := range []struct {
		dev     int
		visible string
	}{{0, "4"}, {1, "5"}, {2, "7"}, {0, "4"}} {
		p := &fakeProbe{count: 8}
		id, err := Identify(10+local, 16, local, 4, Options{
			LookupEnv: envOf(map[string]string{"CUDA_VISIBLE_DEVICES": "4,5,7"}), Probe: p, Host: "n1"})
		if err != nil {
			t.Fatal(err)
		}
		if local == 3 {
			want.dev = 0 // four ranks on three GPUs wrap round
		}
		if id.GPU.Device != want.dev || id.GPU.Visible != want.visible || id.GPU.UUID != "GPU-uuid-"+want.visible || id.GPU.CPU() {
			t.Fatalf("local rank %d bound %+v, want device %d (visible %s)", local, id.GPU, want.dev, want.visible)
		}
	}
}

func TestBindOneVisibleGPUIsDeviceZero(t *testing.T) {
	id, err := Identify(5, 8, 3, 4, Options{LookupEnv: envOf(map[string]string{"CUDA_VISIBLE_DEVICES": "GPU-abc"}), Probe: &fakeProbe{count: 4}, Host: "n"})
	if err != nil || id.GPU.Device != 0 || id.GPU.Visible != "GPU-abc" {
		t.Fatalf("Slurm-bound single GPU: got %+v, %v; want device 0", id.GPU, err)
	}
}

func TestBindWithoutVariableUsesDriverCount(t *testing.T) {
	id, err := Identify(1, 2, 1, 2, Options{LookupEnv: envOf(nil), Probe: &fakeProbe{count: 2}, Host: "n"})
	if err != nil || id.GPU.Device != 1 || id.GPU.Visible != "1" {
		t.Fatalf("got %+v, %v; want device 1", id.GPU, err)
	}
}

func TestBindCPU(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		p    *fakeProbe
		dev  string
		why  string
	}{
		{"no driver", nil, &fakeProbe{err: errors.New("NVML library not found")}, "", "NVML"},
		{"zero GPUs", nil, &fakeProbe{}, "", "no GPU"},
		{"hidden", map[string]string{"CUDA_VISIBLE_DEVICES": ""}, &fakeProbe{count: 2}, "", "hides"},
		{"slurm none", map[string]string{"CUDA_VISIBLE_DEVICES": "NoDevFiles"}, &fakeProbe{count: 2}, "", "hides"},
		{"forced", map[string]string{"CUDA_VISIBLE_DEVICES": "0"}, &fakeProbe{count: 2}, "cpu", "requested"},
	}
	for _, c := range cases {
		id, err := Identify(0, 1, 0, 1, Options{LookupEnv: envOf(c.env), Probe: c.p, Device: c.dev, Host: "n"})
		if err != nil || !id.GPU.CPU() || !strings.Contains(id.GPU.String(), "no GPU: CPU execution") || !strings.Contains(id.GPU.Reason, c.why) {
			t.Errorf("%s: got %v (%v), want CPU because %q", c.name, id.GPU, err, c.why)
		}
	}
}

func TestBindOverride(t *testing.T) {
	env := envOf(map[string]string{"CUDA_VISIBLE_DEVICES": "2,3"})
	id, err := Identify(0, 2, 0, 2, Options{LookupEnv: env, Probe: &fakeProbe{count: 4}, Device: "1", Host: "n"})
	if err != nil || id.GPU.Device != 1 || id.GPU.Visible != "3" {
		t.Fatalf("override 1: got %+v, %v", id.GPU, err)
	}
	for _, bad := range []string{"2", "x", "-1"} {
		if _, err := Identify(0, 2, 0, 2, Options{LookupEnv: env, Probe: &fakeProbe{count: 4}, Device: bad, Host: "n"}); err == nil {
			t.Errorf("device %q: want an error", bad)
		}
	}
}

func TestLocalRankCrossCheck(t *testing.T) {
	p := &fakeProbe{count: 1}
	ok := []map[string]string{
		{"OMPI_COMM_WORLD_LOCAL_RANK": "2"},
		{"SLURM_LOCALID": "2", "SLURM_PROCID": "6", "SLURM_NTASKS": "8"},
		// mpirun inside an allocation: SLURM_LOCALID belongs to the batch step, ignore it.
		{"SLURM_LOCALID": "0", "SLURM_PROCID": "0", "SLURM_NTASKS": "1", "OMPI_COMM_WORLD_LOCAL_RANK": "2"},
		{"SLURM_LOCALID": "0", "SLURM_PROCID": "0", "SLURM_NTASKS": "8"},
	}
	for _, m := range ok {
		if _, err := Identify(6, 8, 2, 4, Options{LookupEnv: envOf(m), Probe: p, Host: "n"}); err != nil {
			t.Errorf("%v: unexpected error %v", m, err)
		}
	}
	bad := []map[string]string{
		{"OMPI_COMM_WORLD_LOCAL_RANK": "1"},
		{"SLURM_LOCALID": "3", "SLURM_PROCID": "6", "SLURM_NTASKS": "8"},
		{"LOCAL_RANK": "0"},
	}
	for _, m := range bad {
		_, err := Identify(6, 8, 2, 4, Options{LookupEnv: envOf(m), Probe: p, Host: "n"})
		if err == nil || !strings.Contains(err.Error(), "disagrees") {
			t.Errorf("%v: want a disagreement error, got %v", m, err)
		}
	}
}

// The real NVML path: on a machine without the NVIDIA driver it must report CPU execution
// and not crash; with a driver it must describe the GPU it bound.
func TestIdentifyRealNVML(t *testing.T) {
	id, err := Identify(0, 1, 0, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(id)
	if id.GPU.CPU() {
		if id.GPU.Reason == "" {
			t.Fatalf("CPU binding without a reason: %+v", id.GPU)
		}
		return
	}
	if id.GPU.Name == "" || !strings.HasPrefix(id.GPU.UUID, "GPU-") || id.GPU.MemoryBytes == 0 {
		t.Fatalf("GPU bound but NVML description missing: %+v", id.GPU)
	}
}
