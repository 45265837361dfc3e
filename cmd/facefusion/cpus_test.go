package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// A rank's CPU budget follows its binding, and the run report says so per rank. One mpirun run,
// --bind-to none, two app contexts: rank 0 unbound takes its share of the node (the node's CPUs
// over its two ranks); rank 1, bound to one core as --bind-to core binds it (taskset: the same
// affinity call), takes that core, not halved again by the node's rank count. An
// execution_thread_count far above the budget is capped on both, said once (rank 0).
func TestCPUBudgetFollowsBinding(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	clitest.FaceClip(t, in, 96, 64, 8, "25")
	online, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		t.Fatal(err)
	}
	share := max(1, rank.CountCPUList(string(online))/2)
	out := filepath.Join(dir, "out.mkv")
	args := clitest.PassThroughArgs(in, out, 4, "--execution-thread-count", "1000")
	argv := append([]string{"--bind-to", "none", "--oversubscribe", "--allow-run-as-root", "-np", "1", clitest.Bin}, args...)
	argv = append(append(argv, ":", "-np", "1", testenv.Tool(t, "taskset"), "-c", "0", clitest.Bin), args...)
	ctx := clitest.HangGuard(t)
	cmd := exec.CommandContext(ctx, testenv.Tool(t, "mpirun"), argv...)
	cmd.Env = clitest.LaunchEnv(t)
	r := clitest.RunCmd(t, ctx, cmd)
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	rep := clitest.CheckReportEnd(t, out, r, lustre.Complete)
	want := []rank.CPUBudget{
		{CPUs: share, Source: rank.FromNodeShare, Requested: 1000, Capped: true, Workers: rank.MaxWorkersPerCPU * share, FFmpegThreads: share},
		{CPUs: 1, Source: rank.FromAffinity, Requested: 1000, Capped: true, Workers: rank.MaxWorkersPerCPU}, // ffmpeg's own threads
	}
	if len(rep.PerRank) != len(want) {
		t.Fatalf("%d per-rank entries, want %d", len(rep.PerRank), len(want))
	}
	for i, pr := range rep.PerRank {
		if pr.CPU == nil || *pr.CPU != want[i] {
			t.Errorf("rank %d's budget %+v, want %+v", pr.Rank, pr.CPU, want[i])
		}
	}
	if n := strings.Count(r.Stderr, "execution_thread_count 1000 is capped at"); n != 1 {
		t.Errorf("the cap is said %d times, want once:\n%s", n, r.Stderr)
	}
}
