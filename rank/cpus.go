package rank

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// MaxWorkersPerCPU caps an explicit execution_thread_count at this many workers per CPU of the
// rank's budget. Workers beyond the CPUs help only while some wait on a GPU's batch; past a few
// per CPU they only contend (1000 workers on 2 cores ran 23× slower than 2). A count above the
// cap is lowered to it with one log line, not refused: one job file runs on nodes of any size.
const MaxWorkersPerCPU = 4

// Where a rank's CPU count came from (CPUBudget.Source).
const (
	FromAffinity  = "affinity"            // the CPUs the process may run on (a bound rank's own set)
	FromSlurm     = "slurm_cpus_per_task" // SLURM_CPUS_PER_TASK, narrower than the affinity
	FromNodeShare = "node_share"          // unbound ranks sharing a node: its CPUs ÷ the node's ranks
)

// CPUFacts are what a rank's CPU budget is decided from.
type CPUFacts struct {
	Requested        int // execution_thread_count; 0: automatic
	Affinity         int // CPUs in the process's affinity mask (sched_getaffinity)
	Online           int // the node's online CPUs; 0: unknown
	SlurmCPUsPerTask int // SLURM_CPUS_PER_TASK; 0: not set
	LocalRanks       int // ranks on this node
}

// CPUBudget is how many CPUs one rank may keep busy, where that came from, and the thread
// counts that follow from it: the pipeline's workers and every ffmpeg decoder and encoder the
// rank starts. Over a node's ranks the CPUs add up to at most its cores.
type CPUBudget struct {
	CPUs   int    `json:"cpus"`
	Source string `json:"source"` // FromAffinity, FromSlurm or FromNodeShare
	// Requested is execution_thread_count (0: automatic, the workers are the CPUs); Capped
	// says it was above MaxWorkersPerCPU × CPUs and Workers is that cap.
	Requested int  `json:"execution_thread_count"`
	Capped    bool `json:"capped,omitempty"`
	Workers   int  `json:"workers"`
	// FFmpegThreads is the -threads of each decoder and encoder: the smaller of the workers and
	// the CPUs where that is narrower than the mask, else 0: ffmpeg's own count for the mask.
	FFmpegThreads int `json:"ffmpeg_threads"`
}

// DecideCPUs is the one place a rank's CPU budget is decided, in this order: its CPUs are the
// affinity mask's (a rank bound by mpirun or srun sees its own set); SLURM_CPUS_PER_TASK where
// Slurm set it and the affinity is wider; and only for an unbound rank (its mask is the whole
// node) sharing the node with others and without Slurm's count, the node's CPUs divided by its
// ranks. An explicit execution_thread_count then sets the workers, capped at MaxWorkersPerCPU
// per CPU, and ffmpeg's threads are the smaller of the workers and the CPUs.
// Over a node's ranks the CPUs add up to at most its cores: a bound rank's threads, ffmpeg's
// included, run only on its own set, and an unbound one's are sized to its share.
func DecideCPUs(f CPUFacts) CPUBudget {
	aff := max(1, f.Affinity)
	b := CPUBudget{CPUs: aff, Source: FromAffinity, Requested: max(0, f.Requested)}
	bound := f.Online > 0 && aff < f.Online
	switch {
	case f.SlurmCPUsPerTask > 0 && f.SlurmCPUsPerTask < aff:
		b.CPUs, b.Source = f.SlurmCPUsPerTask, FromSlurm
	case f.SlurmCPUsPerTask == 0 && !bound && f.LocalRanks > 1:
		b.CPUs, b.Source = max(1, aff/f.LocalRanks), FromNodeShare
	}
	b.Workers = b.CPUs
	if b.Requested > 0 {
		b.Workers = b.Requested
		if limit := MaxWorkersPerCPU * b.CPUs; b.Workers > limit {
			b.Workers, b.Capped = limit, true
		}
	}
	// ffmpeg counts the mask's CPUs itself (av_cpu_count reads sched_getaffinity) and sizes its
	// threads for them, a decoder's frame threads one above the CPUs so that decoding goes on
	// while it waits on the pipe (-threads 1 on one core ran slower here): a count is given only
	// where the budget is narrower than the mask.
	if n := min(b.Workers, b.CPUs); n < aff {
		b.FFmpegThreads = n
	}
	return b
}

// ReadCPUFacts reads this process's affinity mask, the node's online CPUs and
// SLURM_CPUS_PER_TASK (through getenv) for DecideCPUs.
func ReadCPUFacts(requested, localRanks int, getenv func(string) string) CPUFacts {
	f := CPUFacts{Requested: requested, LocalRanks: localRanks, Affinity: runtime.NumCPU()}
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) == nil && set.Count() > 0 {
		f.Affinity = set.Count() // now, not at start-up as runtime.NumCPU
	}
	if b, err := os.ReadFile("/sys/devices/system/cpu/online"); err == nil {
		f.Online = CountCPUList(string(b))
	}
	if n, err := strconv.Atoi(strings.TrimSpace(getenv("SLURM_CPUS_PER_TASK"))); err == nil && n > 0 {
		f.SlurmCPUsPerTask = n
	}
	return f
}

// CountCPUList counts the CPUs of a Linux CPU list ("0-3,8,10-11\n"); 0 if it cannot be read.
func CountCPUList(s string) int {
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}

// String is the budget for a log line.
func (b CPUBudget) String() string {
	ff := "ffmpeg's own threads for the mask"
	if b.FFmpegThreads > 0 {
		ff = fmt.Sprintf("ffmpeg -threads %d", b.FFmpegThreads)
	}
	return fmt.Sprintf("%d CPUs (%s): %d workers, %s", b.CPUs, b.Source, b.Workers, ff)
}

// CapNote is the one log line of a capped execution_thread_count; "" when it was not capped.
func (b CPUBudget) CapNote() string {
	if !b.Capped {
		return ""
	}
	return fmt.Sprintf("execution_thread_count %d is capped at %d worker threads (%d per CPU of the rank's %d, from %s): more only contend for the cores; lower it to silence this",
		b.Requested, b.Workers, MaxWorkersPerCPU, b.CPUs, b.Source)
}
