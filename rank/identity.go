package rank

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Identity is who this process is: its place in the world and on its node, and its GPU.
type Identity struct {
	WorldRank, WorldSize int
	LocalRank, LocalSize int // among the ranks sharing this node
	Host                 string
	GPU                  Binding
}

func (id Identity) String() string {
	return fmt.Sprintf("rank %d/%d (local %d/%d on %s): %s", id.WorldRank, id.WorldSize, id.LocalRank, id.LocalSize, id.Host, id.GPU)
}

// Binding is the GPU this rank runs its models on, or CPU execution.
type Binding struct {
	// Device is the CUDA device index as the process sees it (an index into
	// CUDA_VISIBLE_DEVICES, which is what ONNX Runtime's device_id means); -1 is CPU.
	Device int
	// Visible is the CUDA_VISIBLE_DEVICES entry for Device (a physical index or a UUID),
	// or the physical index when the variable is unset.
	Visible string
	// Name, UUID and MemoryBytes come from NVML; empty when NVML is unavailable.
	Name        string
	UUID        string
	MemoryBytes uint64
	// Reason says why the rank runs on the CPU, or what went wrong asking NVML.
	Reason string
}

// CPU reports whether the rank has no GPU and runs its models on the CPU.
func (b Binding) CPU() bool { return b.Device < 0 }

func (b Binding) String() string {
	if b.CPU() {
		return "no GPU: CPU execution (" + b.Reason + ")"
	}
	s := fmt.Sprintf("GPU %d (visible %s)", b.Device, b.Visible)
	if b.Name != "" {
		s += fmt.Sprintf(" %s %s %.1f GiB", b.Name, b.UUID, float64(b.MemoryBytes)/(1<<30))
	} else if b.Reason != "" {
		s += " (" + b.Reason + ")"
	}
	return s
}

// GPUInfo is what a probe learns about one physical GPU.
type GPUInfo struct {
	Name, UUID  string
	MemoryBytes uint64
}

// Prober asks the driver about GPUs: Count is how many the driver sees (ignoring
// CUDA_VISIBLE_DEVICES), Info describes one by physical index or UUID.
type Prober interface {
	Count() (int, error)
	Info(visible string) (GPUInfo, error)
}

// Options adjusts Identify. The zero value chooses the GPU by local rank through NVML.
type Options struct {
	// Device overrides the choice: "" or "auto" picks by local rank, "cpu" forces CPU
	// execution, a number N picks visible device N.
	Device string
	// LookupEnv reads the environment; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Probe asks the driver; nil means NVML (absent NVML means CPU execution, not a crash).
	Probe Prober
	// Host names the node; "" means os.Hostname.
	Host string
}

// Identify builds this process's Identity from the ranks its communicator reports, checks
// the node-local rank against what the launcher exported, and binds a GPU.
func Identify(worldRank, worldSize, localRank, localSize int, o Options) (Identity, error) {
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.Host == "" {
		o.Host, _ = os.Hostname()
	}
	id := Identity{WorldRank: worldRank, WorldSize: worldSize, LocalRank: localRank, LocalSize: localSize, Host: o.Host}
	if err := checkLocalRank(worldRank, worldSize, localRank, o.LookupEnv); err != nil {
		return id, err
	}
	b, err := bind(localRank, o)
	id.GPU = b
	return id, err
}

// checkLocalRank compares the communicator's node-local rank with the launcher's. A
// disagreement means two ranks would pick the same GPU, so it is an error, not a warning.
func checkLocalRank(worldRank, worldSize, localRank int, env func(string) (string, bool)) error {
	check := func(name string) error {
		v, ok := env(name)
		if !ok {
			return nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("rank: %s=%q is not a number", name, v)
		}
		if n != localRank {
			return fmt.Errorf("rank: node-local rank %d from MPI disagrees with %s=%d; launch with one MPI rank per Slurm task (srun --mpi=pmix, or mpirun inside the allocation)", localRank, name, n)
		}
		return nil
	}
	// mpirun exports its own local rank; it is authoritative whenever present.
	if _, ok := env("OMPI_COMM_WORLD_LOCAL_RANK"); ok {
		return check("OMPI_COMM_WORLD_LOCAL_RANK")
	}
	// SLURM_LOCALID describes this process only when srun started every rank itself; under
	// mpirun inside an allocation it is the batch step's 0 on every rank.
	if envInt(env, "SLURM_PROCID") == worldRank && envInt(env, "SLURM_NTASKS") == worldSize {
		if err := check("SLURM_LOCALID"); err != nil {
			return err
		}
	}
	return check("LOCAL_RANK")
}

func envInt(env func(string) (string, bool), name string) int {
	v, ok := env(name)
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return -1
	}
	return n
}

func bind(localRank int, o Options) (Binding, error) {
	cpu := func(reason string) Binding { return Binding{Device: -1, Reason: reason} }
	dev := strings.TrimSpace(o.Device)
	if dev == "cpu" {
		return cpu("device = cpu requested"), nil
	}
	var visible []string
	cvd, set := o.LookupEnv("CUDA_VISIBLE_DEVICES")
	if set {
		for _, f := range strings.Split(cvd, ",") {
			if f = strings.TrimSpace(f); f != "" {
				visible = append(visible, f)
			}
		}
		// Slurm writes NoDevFiles when the job asked for no GPUs.
		if len(visible) == 0 || visible[0] == "NoDevFiles" || visible[0] == "-1" {
			return cpu(fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q hides every GPU", cvd)), nil
		}
	}
	probe := o.Probe
	if probe == nil {
		probe = nvmlProbe{}
	}
	if !set {
		n, err := probe.Count()
		if err != nil {
			return cpu(err.Error()), nil
		}
		if n == 0 {
			return cpu("the driver reports no GPU"), nil
		}
		for i := 0; i < n; i++ {
			visible = append(visible, strconv.Itoa(i))
		}
	}
	var index int
	switch {
	case dev == "" || dev == "auto":
		// One visible GPU means Slurm (or the user) already bound one per task.
		// More ranks than GPUs share them round-robin rather than fail.
		index = localRank % len(visible)
	default:
		n, err := strconv.Atoi(dev)
		if err != nil || n < 0 {
			return cpu("bad device"), fmt.Errorf("rank: device %q is not auto, cpu or a device number", o.Device)
		}
		if n >= len(visible) {
			return cpu("bad device"), fmt.Errorf("rank: device %d requested but only %d visible (CUDA_VISIBLE_DEVICES=%q)", n, len(visible), cvd)
		}
		index = n
	}
	b := Binding{Device: index, Visible: visible[index]}
	info, err := probe.Info(b.Visible)
	if err != nil {
		// The device index is still right for CUDA; only the description is missing.
		b.Reason = err.Error()
		return b, nil
	}
	b.Name, b.UUID, b.MemoryBytes = info.Name, info.UUID, info.MemoryBytes
	return b, nil
}
