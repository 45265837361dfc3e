package rank

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

func TestDecideCPUs(t *testing.T) {
	for _, c := range []struct {
		name string
		f    CPUFacts
		want CPUBudget
	}{
		{"one unbound rank: every CPU", CPUFacts{Affinity: 8, Online: 8, LocalRanks: 1},
			CPUBudget{CPUs: 8, Source: FromAffinity, Workers: 8, FFmpegThreads: 0}},
		{"bound ranks are not divided again", CPUFacts{Affinity: 1, Online: 2, LocalRanks: 2},
			CPUBudget{CPUs: 1, Source: FromAffinity, Workers: 1, FFmpegThreads: 0}},
		{"unbound ranks share the node", CPUFacts{Affinity: 2, Online: 2, LocalRanks: 2},
			CPUBudget{CPUs: 1, Source: FromNodeShare, Workers: 1, FFmpegThreads: 1}},
		{"more unbound ranks than CPUs: one each", CPUFacts{Affinity: 2, Online: 2, LocalRanks: 5},
			CPUBudget{CPUs: 1, Source: FromNodeShare, Workers: 1, FFmpegThreads: 1}},
		{"Slurm's count, narrower than the mask", CPUFacts{Affinity: 64, Online: 64, LocalRanks: 4, SlurmCPUsPerTask: 8},
			CPUBudget{CPUs: 8, Source: FromSlurm, Workers: 8, FFmpegThreads: 8}},
		{"a mask narrower than Slurm's count", CPUFacts{Affinity: 4, Online: 64, LocalRanks: 4, SlurmCPUsPerTask: 8},
			CPUBudget{CPUs: 4, Source: FromAffinity, Workers: 4, FFmpegThreads: 0}},
		{"Slurm's count equal to the mask", CPUFacts{Affinity: 8, Online: 64, LocalRanks: 8, SlurmCPUsPerTask: 8},
			CPUBudget{CPUs: 8, Source: FromAffinity, Workers: 8, FFmpegThreads: 0}},
		{"online CPUs unknown: the mask is taken as the node", CPUFacts{Affinity: 4, LocalRanks: 2},
			CPUBudget{CPUs: 2, Source: FromNodeShare, Workers: 2, FFmpegThreads: 2}},
		{"an explicit count below the CPUs", CPUFacts{Requested: 1, Affinity: 4, Online: 4, LocalRanks: 1},
			CPUBudget{CPUs: 4, Source: FromAffinity, Requested: 1, Workers: 1, FFmpegThreads: 1}},
		{"an explicit count at the cap", CPUFacts{Requested: 8, Affinity: 2, Online: 2, LocalRanks: 1},
			CPUBudget{CPUs: 2, Source: FromAffinity, Requested: 8, Workers: 8, FFmpegThreads: 0}},
		{"an explicit count far above the CPUs", CPUFacts{Requested: 1000, Affinity: 2, Online: 2, LocalRanks: 1},
			CPUBudget{CPUs: 2, Source: FromAffinity, Requested: 1000, Capped: true, Workers: 8, FFmpegThreads: 0}},
		{"the cap follows the node share", CPUFacts{Requested: 1000, Affinity: 2, Online: 2, LocalRanks: 2},
			CPUBudget{CPUs: 1, Source: FromNodeShare, Requested: 1000, Capped: true, Workers: 4, FFmpegThreads: 1}},
		{"no mask read: one CPU", CPUFacts{LocalRanks: 1},
			CPUBudget{CPUs: 1, Source: FromAffinity, Workers: 1, FFmpegThreads: 0}},
	} {
		if got := DecideCPUs(c.f); got != c.want {
			t.Errorf("%s: %+v gives %+v, want %+v", c.name, c.f, got, c.want)
		}
	}
	if note := DecideCPUs(CPUFacts{Requested: 1000, Affinity: 2, Online: 2}).CapNote(); !strings.Contains(note, "execution_thread_count 1000 is capped at 8") {
		t.Errorf("cap note %q does not say what was capped to what", note)
	}
	if note := DecideCPUs(CPUFacts{Requested: 8, Affinity: 2, Online: 2}).CapNote(); note != "" {
		t.Errorf("a count within the cap gives the note %q", note)
	}
}

func TestCountCPUList(t *testing.T) {
	for s, want := range map[string]int{"0\n": 1, "0-1\n": 2, "0-3,8,10-11": 7, "": 0, "x": 0, "3-1": 0} {
		if got := CountCPUList(s); got != want {
			t.Errorf("CountCPUList(%q) = %d, want %d", s, got, want)
		}
	}
}

// ReadCPUFacts reads the real mask: under taskset a child sees one CPU and the budget says so,
// and SLURM_CPUS_PER_TASK comes from the environment.
func TestReadCPUFactsUnderTaskset(t *testing.T) {
	if os.Getenv("RANK_CPUS_CHILD") == "1" {
		b := DecideCPUs(ReadCPUFacts(0, 2, os.Getenv))
		os.Stdout.WriteString("budget " + strconv.Itoa(b.CPUs) + " " + b.Source + "\n")
		return
	}
	taskset := testenv.Tool(t, "taskset")
	online, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		t.Fatal(err)
	}
	n := CountCPUList(string(online))
	// Unbound, the child shares the node with the one other rank it is told of; a test run
	// already bound (a Slurm cpuset) sees its own mask instead.
	unbound := "budget " + strconv.Itoa(max(1, n/2)) + " node_share"
	if mine := runtime.NumCPU(); mine < n {
		unbound = "budget " + strconv.Itoa(mine) + " affinity"
	}
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{taskset, "-c", "0"}, "", "budget 1 affinity"},
		{nil, "", unbound},
		{nil, "SLURM_CPUS_PER_TASK=1", "budget 1 slurm_cpus_per_task"},
	} {
		args := append(c.args, os.Args[0], "-test.run=^TestReadCPUFactsUnderTaskset$")
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "RANK_CPUS_CHILD=1", "SLURM_CPUS_PER_TASK=")
		if c.env != "" {
			cmd.Env = append(cmd.Env, c.env)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		if !strings.Contains(string(out), c.want+"\n") {
			t.Errorf("%v %s: %q, want %q", c.args, c.env, out, c.want)
		}
	}
}
