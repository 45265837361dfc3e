package collective

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/slurmtest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

var built struct {
	sync.Once
	path string
	err  error
	dir  string
}

// program builds internal/mpitest once per test binary.
func program(t *testing.T) string {
	t.Helper()
	built.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "mpitest")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "mpitest")
		out, err := exec.Command(testenv.Tool(t, "go"), "build", "-o", built.path, "./internal/mpitest").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build ./internal/mpitest: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// guard bounds a launcher run so a hang fails the test instead of stalling it; it is a
// safety net, not a speed assertion.
func guard(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// checkRun asserts the output of a clean mpitest run over n ranks.
func checkRun(t *testing.T, out []byte, n int) {
	t.Helper()
	var ranks []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "rank ") {
			ranks = append(ranks, line)
		}
	}
	sort.Strings(ranks)
	var want []string
	for r := 0; r < n; r++ {
		// One node: every rank shares it, so local rank = world rank under both launchers.
		want = append(want, fmt.Sprintf("rank %d size %d local %d/%d", r, n, r, n))
	}
	if strings.Join(ranks, "\n") != strings.Join(want, "\n") {
		t.Fatalf("ranks reported\n%s\nwant\n%s\nfull output:\n%s", strings.Join(ranks, "\n"), strings.Join(want, "\n"), out)
	}
	parts := []string{"r0::5000"}
	if n > 1 {
		parts = append(parts, "")
	}
	for r := 2; r < n; r++ {
		parts = append(parts, fmt.Sprintf("r%d:%s:5000", r, strings.Repeat("x", r)))
	}
	gather := "gather " + strings.Join(parts, ",")
	sum := 0
	for r := 0; r < n; r++ {
		sum += r
	}
	reduce := fmt.Sprintf("allreduce sum %d max %d min 0", sum, n-1)
	// The non-blocking allreduce is in flight on rank 0 until the other ranks post it.
	iallreduce := fmt.Sprintf("in flight until every rank posted: %v", n > 1)
	// Rank 0's exclusive scan is zeros (each rank checks its own).
	p2p := fmt.Sprintf("p2p 3 messages in order from each of %d rank(s)", n-1)
	if n == 1 {
		p2p = "p2p none: a job of 1 rank"
	}
	for _, line := range []string{gather, reduce, iallreduce, "exscan [0 0]", "bcast in pieces: 0 byte(s) wrong over every rank", p2p} {
		if !strings.Contains(string(out), line+"\n") {
			t.Fatalf("output lacks %q:\n%s", line, out)
		}
	}
}

func mpirun(ctx context.Context, t *testing.T, n int, args ...string) *exec.Cmd {
	testenv.Full(t, "launches mpirun") // before program's build
	argv := append([]string{"-np", fmt.Sprint(n), "--oversubscribe", "--allow-run-as-root", program(t)}, args...)
	cmd := exec.CommandContext(ctx, testenv.Tool(t, "mpirun"), argv...)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// One rank (no peers: p2p none, a singleton's collectives) and three (rank 1's empty gather
// contribution, ranks past 1 with payloads of their own, p2p from several ranks): every path
// checkRun knows. Two and four ranks add nothing a path of their own (four run under sbatch, in
// TestUnderSlurm), and each mpirun costs about a CPU-second.
func TestUnderMpirun(t *testing.T) {
	for _, n := range []int{1, 3} {
		out, err := mpirun(guard(t), t, n).CombinedOutput()
		if err != nil {
			t.Fatalf("mpirun -np %d: %v\n%s", n, err, out)
		}
		checkRun(t, out, n)
	}
}

func TestStartedAlone(t *testing.T) {
	for _, args := range [][]string{nil, {"-mpi"}} { // collective.Init's choice, then a forced MPI singleton
		cmd := exec.CommandContext(guard(t), program(t), args...)
		cmd.Env = append(cleanEnv(), "FACEFUSION_MPI=auto")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("mpitest %v alone: %v\n%s", args, err, out)
		}
		checkRun(t, out, 1)
	}
}

// cleanEnv drops launcher variables the test itself may have inherited.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OMPI_") && !strings.HasPrefix(kv, "PMIX_") && !strings.HasPrefix(kv, "SLURM_") {
			env = append(env, kv)
		}
	}
	return env
}

// expectFailure runs cmd and wants a non-zero exit before the guard fires.
func expectFailure(t *testing.T, ctx context.Context, cmd *exec.Cmd, code int) {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%v hung after a rank failed (killed by the test guard)\n%s", cmd.Args, out)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("%v: %v, want a non-zero exit\n%s", cmd.Args, err, out)
	}
	if code != 0 && ee.ExitCode() != code {
		t.Fatalf("%v exited %d, want %d\n%s", cmd.Args, ee.ExitCode(), code, out)
	}
}

func TestMpirunAbortStopsEveryRank(t *testing.T) {
	ctx := guard(t)
	expectFailure(t, ctx, mpirun(ctx, t, 3, "-abort", "1"), 3)
}

func TestMpirunRankExitStopsEveryRank(t *testing.T) {
	ctx := guard(t)
	expectFailure(t, ctx, mpirun(ctx, t, 3, "-exit", "2"), 4)
}

func TestUnderSlurm(t *testing.T) {
	prog := program(t)
	c := slurmtest.Start(t, slurmtest.Options{})

	t.Run("srun", func(t *testing.T) {
		out, err := c.Command(guard(t), "srun", "-n", "3", "--mpi=pmix", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("srun: %v\n%s\n%s", err, out, c.Logs())
		}
		checkRun(t, out, 3)
	})
	// Both ways a batch script starts ranks: srun, and mpirun inside the allocation (where
	// every rank inherits the batch step's SLURM_PROCID=0).
	for name, launch := range map[string]string{"sbatch-srun": "srun --mpi=pmix", "sbatch-mpirun": "mpirun --allow-run-as-root"} {
		t.Run(name, func(t *testing.T) {
			script := filepath.Join(c.Dir, name+".sbatch")
			log := filepath.Join(c.Dir, name+".out")
			body := fmt.Sprintf("#!/bin/sh\n#SBATCH -n 4\n%s %s\n", launch, prog)
			if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			ctx := guard(t)
			out, err := c.Command(ctx, "sbatch", "--parsable", "-o", log, script).CombinedOutput()
			if err != nil {
				t.Fatalf("sbatch: %v\n%s\n%s", err, out, c.Logs())
			}
			state, code, err := c.WaitJob(ctx, strings.TrimSpace(string(out)))
			if err != nil || state != "COMPLETED" || code != "0:0" {
				t.Fatalf("the batch job ended %s, exit code %s (%v)\n%s", state, code, err, c.Logs())
			}
			data, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			checkRun(t, data, 4)
		})
	}
	t.Run("abort", func(t *testing.T) {
		ctx := guard(t)
		expectFailure(t, ctx, c.Command(ctx, "srun", "-n", "3", "--mpi=pmix", prog, "-abort", "1"), 0)
	})
	t.Run("exit", func(t *testing.T) {
		ctx := guard(t)
		expectFailure(t, ctx, c.Command(ctx, "srun", "-n", "3", "--mpi=pmix", prog, "-exit", "2"), 0)
	})
	t.Run("srun-without-pmix", func(t *testing.T) {
		ctx := guard(t)
		cmd := c.Command(ctx, "srun", "-n", "2", "--mpi=none", prog)
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), "--mpi=pmix") {
			t.Fatalf("srun --mpi=none should be refused with a hint, got:\n%s", out)
		}
	})
}
