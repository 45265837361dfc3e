package clitest

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/lustre"
)

// Runs held at the test-only pause hook (FACEFUSION_TEST_PAUSE_AT) to be killed or stopped
// there: checkpoint, resume and preemption, for real.

// Paused is a run held at the pause hook.
type Paused struct {
	Cmd    *exec.Cmd
	PID    int    // the paused rank's process
	procs  []int  // every process the launch started (ranks may leave the launcher's group)
	marker string // StartHeld's: removed, it lets the held rank go on
	done   chan struct{}
	mu     sync.Mutex
	errb   strings.Builder
}

var pauseLine = regexp.MustCompile(`test pause at (\S+) \(pid (\d+)\)`)

// StartPaused starts argv with the pause hook at point and returns once a rank is held there.
func StartPaused(t *testing.T, point string, argv ...string) *Paused {
	t.Helper()
	return StartPausedEnv(t, point, nil, argv...)
}

// StartPausedEnv is StartPaused with more environment variables.
func StartPausedEnv(t *testing.T, point string, env []string, argv ...string) *Paused {
	t.Helper()
	return startPaused(t, point, "", env, argv...)
}

// StartHeld is StartPausedEnv for a run that goes on: the rank is held at point until Go.
func StartHeld(t *testing.T, point string, env []string, argv ...string) *Paused {
	t.Helper()
	return startPaused(t, point, filepath.Join(t.TempDir(), "held"), env, argv...)
}

// Go lets a run StartHeld holds go on from its point (the hook's marker removed).
func (p *Paused) Go(t *testing.T) {
	t.Helper()
	if p.marker == "" {
		t.Fatal("Go: the run was not started by StartHeld")
	}
	if err := os.Remove(p.marker); err != nil {
		t.Fatal(err)
	}
}

func startPaused(t *testing.T, point, marker string, env []string, argv ...string) *Paused {
	t.Helper()
	fullTier(t)
	ctx := HangGuard(t)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	spec := point
	if marker != "" {
		spec += "," + marker
	}
	cmd.Env = append(append(LaunchEnv(t), env...), "FACEFUSION_TEST_PAUSE_AT="+spec)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a group: nothing outlives the test
	stderr, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Paused{Cmd: cmd, done: make(chan struct{}), marker: marker}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-p.done })
	found := make(chan int, 1)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.errb.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if m := pauseLine.FindStringSubmatch(sc.Text()); m != nil && m[1] == point {
				pid, _ := strconv.Atoi(m[2])
				found <- pid
			}
		}
	}()
	select {
	case p.PID = <-found:
		p.procs = descendants(cmd.Process.Pid)
		return p
	case <-p.done:
		t.Fatalf("%s ended before pausing at %s:\n%s", strings.Join(argv, " "), point, p.Output())
	case <-ctx.Done():
		t.Fatalf("%s never paused at %s:\n%s", strings.Join(argv, " "), point, p.Output())
	}
	return nil
}

// OtherRanks are the launch's facefusion processes other than the paused one: under mpirun,
// the ranks that are not held.
func (p *Paused) OtherRanks() []int {
	bin, _ := filepath.EvalSymlinks(Bin) // /proc names the executable by its real path
	var out []int
	runs := func(pid int) bool {
		exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
		return err == nil && exe == bin
	}
	for _, pid := range p.procs {
		// A rank's child caught between fork and exec (its ffmpeg, starting) still runs the
		// binary; a rank's parent is the launcher's, never a rank.
		if runs(pid) && pid != p.PID && !runs(parentOf(pid)) {
			out = append(out, pid)
		}
	}
	return out
}

// parentOf is pid's parent's pid, 0 where /proc no longer has it.
func parentOf(pid int) int {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	// pid (comm) state ppid …: comm may hold spaces, so parse after the last ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// Output is what the run has printed so far, stdout and stderr together.
func (p *Paused) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errb.String()
}

// Wait waits for the launch to end and returns its exit code; whatever is left of its process
// group is killed (a lost node takes everything with it).
func (p *Paused) Wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		// Ranks orphaned by a killed launcher: take them down as a lost node would.
		syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	err := p.Cmd.Wait()
	syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
	// Ranks orphaned by a killed mpirun notice within a second or two and exit; the next
	// attempt starts only when they are gone, as Slurm guarantees before a requeue.
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range p.procs {
		for alive(pid) && time.Now().Before(deadline.Add(5*time.Second)) {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return 0
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// descendants lists the processes below pid (from /proc).
func descendants(pid int) []int {
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid := parentOf(n); ppid != 0 {
			children[ppid] = append(children[ppid], n)
		}
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			out = append(out, c)
			walk(c)
		}
	}
	walk(pid)
	return out
}

// KilledAt runs facefusion with args until it is held at point, kills it there outright
// (SIGKILL: no clean-up, as a lost node) and returns the exit code of the killed run.
func KilledAt(t *testing.T, point string, args []string) int {
	t.Helper()
	p := StartPaused(t, point, append([]string{Bin}, args...)...)
	syscall.Kill(p.PID, syscall.SIGKILL)
	return p.Wait(t)
}

// MpirunArgv is the command line that runs facefusion with args as n ranks under mpirun.
func MpirunArgv(n int, args ...string) []string {
	return append([]string{"mpirun", "-np", strconv.Itoa(n), "--oversubscribe", "--allow-run-as-root", Bin}, args...)
}

// ReadManifest decodes the job folder's manifest, failing the test if it is not valid JSON.
func ReadManifest(t *testing.T, jobDir string) *lustre.Manifest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(jobDir, "manifest.json"))
	if err != nil {
		t.Fatalf("manifest: %v", err)
	}
	var m lustre.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("manifest %s is corrupt: %v\n%s", jobDir, err, data)
	}
	return &m
}

// VerifiedLine is the log line of a resumed run: chunks verified, of all, and to do.
var VerifiedLine = regexp.MustCompile(`resuming \S+: (\d+) of (\d+) chunk\(s\) verified, (\d+) to do`)
