package main

import (
	"bufio"
	"encoding/json"
	"fmt"
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

	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// Checkpoint, resume and preemption, for real: attempts are killed (SIGKILL, no clean-up) or
// stopped (SIGTERM) at points the test-only pause hook holds them at, and the rerun of the same
// command must give the very frames of an uninterrupted run.

// paused is a run held at the pause hook.
type paused struct {
	cmd   *exec.Cmd
	pid   int   // the paused rank's process
	procs []int // every process the launch started (ranks may leave the launcher's group)
	done  chan struct{}
	mu    sync.Mutex
	errb  strings.Builder
}

var pauseLine = regexp.MustCompile(`test pause at (\S+) \(pid (\d+)\)`)

// startPaused starts argv with the pause hook at point and returns once a rank is held there.
func startPaused(t *testing.T, point string, argv ...string) *paused {
	t.Helper()
	return startPausedEnv(t, point, nil, argv...)
}

// startPausedEnv is startPaused with more environment variables.
func startPausedEnv(t *testing.T, point string, env []string, argv ...string) *paused {
	t.Helper()
	ctx := hangGuard(t)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(append(launchEnv(t), env...), "FACEFUSION_TEST_PAUSE_AT="+point)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a group: nothing outlives the test
	stderr, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &paused{cmd: cmd, done: make(chan struct{})}
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
	case p.pid = <-found:
		p.procs = descendants(cmd.Process.Pid)
		return p
	case <-p.done:
		t.Fatalf("%s ended before pausing at %s:\n%s", strings.Join(argv, " "), point, p.output())
	case <-ctx.Done():
		t.Fatalf("%s never paused at %s:\n%s", strings.Join(argv, " "), point, p.output())
	}
	return nil
}

func (p *paused) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errb.String()
}

// wait waits for the launch to end and returns its exit code; whatever is left of its process
// group is killed (a lost node takes everything with it).
func (p *paused) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		// Ranks orphaned by a killed launcher: take them down as a lost node would.
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	err := p.cmd.Wait()
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
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
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so parse after the last ')'.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 {
			ppid, _ := strconv.Atoi(f[1])
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

// killedAt runs facefusion with args until it is held at point, kills it there outright
// (SIGKILL: no clean-up, as a lost node) and returns the exit code of the killed run.
func killedAt(t *testing.T, point string, args []string) int {
	t.Helper()
	p := startPaused(t, point, append([]string{bin}, args...)...)
	syscall.Kill(p.pid, syscall.SIGKILL)
	return p.wait(t)
}

func mpirunArgv(n int, args ...string) []string {
	return append([]string{"mpirun", "-np", strconv.Itoa(n), "--oversubscribe", "--allow-run-as-root", bin}, args...)
}

// readManifest decodes the job folder's manifest, failing the test if it is not valid JSON.
func readManifest(t *testing.T, jobDir string) *lustre.Manifest {
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

var verifiedLine = regexp.MustCompile(`resuming \S+: (\d+) of (\d+) chunk\(s\) verified, (\d+) to do`)

// A killed attempt (the launcher, one rank mid-chunk, rank 0 while joining) leaves nothing at
// the output path, and the rerun gives the target's frames exactly. Segments damaged between
// the attempts are found and redone, and only they.
func TestResumeAfterKill(t *testing.T) {
	testenv.Tool(t, "mpirun")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	bframeClip(t, in, 80)
	want := frameHashes(t, in)
	// 10 chunks of 8 over 2 ranks: rank 0 has chunks 0–4, rank 1 chunks 5–9.
	cases := []struct {
		name, point string
		kill        string // launcher or rank
		damage      bool
	}{
		{"launcher-before-first-checkpoint", "chunk-0", "launcher", false},
		{"rank1-mid-chunk", "chunk-7", "rank", false},
		{"rank0-during-concat", "concat", "rank", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.mkv")
			args := passThroughArgs(in, out, 8)
			p := startPaused(t, c.point, mpirunArgv(2, args...)...)
			victim := p.pid
			if c.kill == "launcher" {
				victim = p.cmd.Process.Pid
			}
			syscall.Kill(victim, syscall.SIGKILL)
			if code := p.wait(t); code == 0 {
				t.Fatalf("killed attempt exited 0:\n%s", p.output())
			}
			mustNotExist(t, out)
			if c.point == "concat" {
				m := readManifest(t, out+".job")
				if len(m.Done) != 10 {
					t.Fatalf("before the join the manifest holds %d chunks, want all 10", len(m.Done))
				}
			}
			if c.damage {
				seg := func(i int) string { return filepath.Join(out+".job", fmt.Sprintf("seg-%06d.mkv", i)) }
				st, err := os.Stat(seg(1))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Truncate(seg(1), st.Size()/2); err != nil {
					t.Fatal(err)
				}
				st, _ = os.Stat(seg(6))
				if err := os.WriteFile(seg(6), make([]byte, st.Size()), 0o644); err != nil { // junk, same size
					t.Fatal(err)
				}
			}
			r := mpirun(t, hangGuard(t), 2, args...)
			if r.code != 0 {
				t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
			}
			m := verifiedLine.FindStringSubmatch(r.stderr)
			if m == nil {
				t.Fatalf("the rerun did not resume:\n%s", r.stderr)
			}
			if c.point == "concat" {
				if m[1] != "8" || m[3] != "2" {
					t.Errorf("rerun verified %s chunks with %s to do, want 8 and 2 (chunks 1 and 6 damaged):\n%s", m[1], m[3], r.stderr)
				}
				for _, redo := range []string{"chunk 1: segment", "chunk 6: segment"} {
					if !strings.Contains(r.stderr, redo) {
						t.Errorf("no log line %q… redoing it:\n%s", redo, r.stderr)
					}
				}
				if strings.Count(r.stderr, "redoing it") != 2 {
					t.Errorf("want exactly 2 chunks redone:\n%s", r.stderr)
				}
			}
			checkFrames(t, out, want)
			if _, err := os.Stat(out + ".job"); err == nil {
				t.Errorf("job folder left after a finished run without --keep-segments")
			}
		})
	}
}

// A face swap stopped midway on 2 ranks (both killed) and resumed on 3 is frame-identical to
// an uninterrupted 1-rank swap; status reads the killed attempt's checkpoint.
func TestResumeSwapMoreRanks(t *testing.T) {
	testenv.Tool(t, "mpirun")
	dir := t.TempDir()
	in := filepath.Join(dir, "face.mp4")
	faceClip(t, in, 320, 240, 40, "25")
	src := testenv.Sample(t, "grace_hopper.png")
	swapArgs := func(out string) []string {
		return []string{"run", "-s", src, "-t", in, "-o", out, "--output-video-encoder", "ffv1", "--chunk-frames", "8"}
	}
	ref := filepath.Join(dir, "ref.mkv")
	if r := facefusion(t, swapArgs(ref)...); r.code != 0 {
		t.Fatalf("reference run: exit %d\n%s", r.code, r.stderr)
	}
	out := filepath.Join(dir, "out.mkv")
	// 5 chunks over 2 ranks: rank 0 has 0–2, rank 1 has 3–4; hold rank 1 at chunk 4.
	p := startPaused(t, "chunk-4", mpirunArgv(2, swapArgs(out)...)...)
	time.Sleep(500 * time.Millisecond)
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) // every rank and the launcher at once
	p.wait(t)
	mustNotExist(t, out)
	st := facefusion(t, "status", out+".job")
	if st.code != 0 || !regexp.MustCompile(`chunks:\s+[1-4] done, [1-4] pending, of 5`).MatchString(st.stdout) {
		t.Fatalf("status after the kill: exit %d\n%s%s", st.code, st.stdout, st.stderr)
	}
	r := mpirun(t, hangGuard(t), 3, swapArgs(out)...)
	if r.code != 0 {
		t.Fatalf("resume on 3 ranks: exit %d\n%s", r.code, r.stderr)
	}
	if !verifiedLine.MatchString(r.stderr) {
		t.Errorf("the 3-rank run did not resume:\n%s", r.stderr)
	}
	got, wantHashes, orig := frameHashes(t, out), frameHashes(t, ref), frameHashes(t, in)
	if len(got) != 40 || len(wantHashes) != 40 {
		t.Fatalf("%d and %d frames, want 40", len(got), len(wantHashes))
	}
	changed := 0
	for i := range got {
		if got[i] != wantHashes[i] {
			t.Fatalf("frame %d differs from the uninterrupted run", i)
		}
		if got[i] != orig[i] {
			changed++
		}
	}
	if changed < 20 {
		t.Fatalf("only %d of 40 frames swapped: the comparison says little", changed)
	}
}

// A job folder whose target changed is refused with one clear line; --fresh starts over.
func TestResumeRefusesChangedJob(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	bframeClip(t, in, 40)
	out := filepath.Join(dir, "out.mkv")
	args := passThroughArgs(in, out, 8)
	killedAt(t, "chunk-2", args)
	if n := len(readManifest(t, out+".job").Done); n != 0 {
		// chunks 0 and 1 are in the journal, not yet merged at the default cadence
		t.Logf("manifest already holds %d chunk(s)", n)
	}

	faceClip(t, in, 160, 120, 40, "25") // other content, same name and frame count
	r := facefusion(t, args...)
	// The killed attempt's claim is taken over (one log line saying so); the refusal is one line.
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	last := lines[len(lines)-1]
	if r.code != exitUsage || len(lines) > 2 || (len(lines) == 2 && !strings.Contains(lines[0], "from a dead run")) ||
		!strings.Contains(last, "target file contents changed") || !strings.Contains(last, "pass --fresh to start over") {
		t.Fatalf("changed target: exit %d, %q; want exit %d and one line naming the target and --fresh", r.code, r.stderr, exitUsage)
	}
	mustNotExist(t, out)
	r = facefusion(t, append(args, "--fresh")...)
	if r.code != 0 {
		t.Fatalf("--fresh: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "--fresh: discarded 2 finished segment(s)") || verifiedLine.MatchString(r.stderr) {
		t.Errorf("--fresh did not start over:\n%s", r.stderr)
	}
	checkFrames(t, out, frameHashes(t, in))
}

// Slurm's early warning (SIGUSR1) on every rank, or SIGTERM on rank 0 alone: the chunk in
// flight is discarded, the ranks gather what they finished, rank 0 writes the manifest, and
// every rank exits with rank 0's decision: 75 for USR1 after progress, 130 for TERM (also on
// the rank that got no signal). status reads it; the rerun completes. mpirun forwards USR1 to
// the ranks (TERM it handles itself).
func TestSigtermCheckpoints(t *testing.T) {
	testenv.Tool(t, "mpirun")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	bframeClip(t, in, 80)
	for _, only := range []bool{false, true} {
		t.Run(map[bool]string{false: "every-rank", true: "one-rank"}[only], func(t *testing.T) {
			sigStopsAndResumes(t, in, only)
		})
	}
}

// sigStopsAndResumes signals every rank (through mpirun) or only rank 0, which then stops
// the other one through the job folder's STOP flag.
func sigStopsAndResumes(t *testing.T, in string, onlyRank0 bool) {
	out := filepath.Join(t.TempDir(), "out.mkv")
	args := passThroughArgs(in, out, 8)
	p := startPaused(t, "chunk-3", mpirunArgv(2, args...)...)
	want, said := exitCheckpointed, `stopped by SIGUSR1 \(rank [01]\): (\d+) of 10 chunk\(s\)`
	if onlyRank0 {
		syscall.Kill(p.pid, syscall.SIGTERM)
		want, said = exitCancelled, `cancelled by SIGTERM \(rank 0\): (\d+) of 10 chunk\(s\)`
	} else {
		p.cmd.Process.Signal(syscall.SIGUSR1)
	}
	if code := p.wait(t); code != want {
		t.Fatalf("exit %d, want %d\n%s", code, want, p.output())
	}
	msg := regexp.MustCompile(said).FindStringSubmatch(p.output())
	if msg == nil {
		t.Fatalf("no checkpoint message:\n%s", p.output())
	}
	mustNotExist(t, out)
	m := readManifest(t, out+".job")
	if strconv.Itoa(len(m.Done)) != msg[1] || m.Attempts[0].Outcome != lustre.Checkpointed {
		t.Fatalf("manifest holds %d chunks (%s), the message says %s", len(m.Done), m.Attempts[0].Outcome, msg[1])
	}
	for _, c := range m.Done {
		if c.Chunk == 3 {
			t.Errorf("chunk 3 was in flight and must have been discarded")
		}
	}
	// status says what stopped it and what comes next in the exit-code table's words.
	words := "requeue wanted"
	if onlyRank0 {
		words = "cancelled by SIGTERM (rank 0): cancelled"
	}
	st := facefusion(t, "status", out+".job")
	if st.code != 0 || !strings.Contains(st.stdout, "state:      checkpointed (") || !strings.Contains(st.stdout, words+")") ||
		!strings.Contains(st.stdout, fmt.Sprintf("chunks:     %s done, %d pending, of 10", msg[1], 10-len(m.Done))) {
		t.Fatalf("status: exit %d\n%s%s", st.code, st.stdout, st.stderr)
	}
	r := mpirun(t, hangGuard(t), 2, args...)
	if r.code != 0 {
		t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
	}
	checkFrames(t, out, frameHashes(t, in))
}

// Rank 0 merges the journals into the manifest on the checkpoint cadence while chunks are
// still being encoded, not only at the end.
func TestCheckpointCadence(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	bframeClip(t, in, 40)
	out := filepath.Join(dir, "out.mkv")
	p := startPaused(t, "chunk-3", append([]string{bin}, passThroughArgs(in, out, 8, "--checkpoint-interval", "1")...)...)
	ctx := hangGuard(t)
	for {
		if m := readManifest(t, out+".job"); len(m.Done) == 3 && m.Attempts[0].Outcome == lustre.Running {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the manifest never held chunks 0–2 while chunk 3 was held:\n%s", p.output())
		}
		time.Sleep(200 * time.Millisecond)
	}
	syscall.Kill(p.pid, syscall.SIGKILL)
	p.wait(t)
}

// A checkpoint write that fails (a full file system, injected at the file layer) is a clear
// one-line error; the manifest on disk stays the last good one, no temp file is left, and the
// rerun loses nothing.
func TestCheckpointWriteFailure(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	bframeClip(t, in, 40)
	out := filepath.Join(dir, "out.mkv")
	args := passThroughArgs(in, out, 8)
	cmd := exec.Command(bin, args...)
	// The 1st manifest write starts the attempt; the 2nd, at its end, fails.
	cmd.Env = append(launchEnv(t), lustre.FaultEnv+"=manifest.json:2")
	var errb strings.Builder
	cmd.Stderr = &errb
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != exitInternal {
		t.Fatalf("exit %v, want %d\n%s", err, exitInternal, errb.String())
	}
	var errLines []string
	for _, l := range strings.Split(errb.String(), "\n") {
		if strings.Contains(l, "manifest.json") {
			errLines = append(errLines, l)
		}
	}
	if len(errLines) != 1 || !strings.Contains(errLines[0], "no space left on device") || !strings.Contains(errLines[0], "rerun to resume") {
		t.Fatalf("want one line naming the manifest, the cause and what to do:\n%s", errb.String())
	}
	mustNotExist(t, out)
	m := readManifest(t, out+".job")
	if len(m.Done) != 0 || m.Attempts[0].Outcome != lustre.Running {
		t.Errorf("the manifest is not the last good one: %d chunks, %s", len(m.Done), m.Attempts[0].Outcome)
	}
	if tmp, _ := filepath.Glob(filepath.Join(out+".job", ".manifest.json.tmp-*")); len(tmp) > 0 {
		t.Errorf("temp files left: %v", tmp)
	}
	r := facefusion(t, args...)
	if r.code != 0 {
		t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
	}
	if m := verifiedLine.FindStringSubmatch(r.stderr); m == nil || m[1] != "5" {
		t.Errorf("the rerun should verify all 5 journaled chunks:\n%s", r.stderr)
	}
	checkFrames(t, out, frameHashes(t, in))
}

// With --keep-segments the job folder stays after success, its manifest complete.
func TestKeepSegments(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	bframeClip(t, in, 24)
	out := filepath.Join(dir, "out.mkv")
	if r := facefusion(t, passThroughArgs(in, out, 8, "--keep-segments")...); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	m := readManifest(t, out+".job")
	if len(m.Done) != 3 || m.Attempts[len(m.Attempts)-1].Outcome != lustre.Complete {
		t.Fatalf("kept manifest: %d chunks, %s", len(m.Done), m.Attempts[0].Outcome)
	}
	st := facefusion(t, "status", out+".job")
	if st.code != 0 || !strings.Contains(st.stdout, "state:      complete") || !strings.Contains(st.stdout, "frames:     24 done, 0 pending, of 24") {
		t.Fatalf("status: exit %d\n%s%s", st.code, st.stdout, st.stderr)
	}
	if r := facefusion(t, "status", t.TempDir()); r.code != exitInput || !strings.Contains(r.stderr, "no manifest.json") {
		t.Errorf("status of a non-job folder: exit %d, %q", r.code, r.stderr)
	}
	if r := facefusion(t, "status", dir); r.code != exitInput || !strings.Contains(r.stderr, "is not a job folder; it holds "+out+".job") {
		t.Errorf("status of a non-job folder: exit %d, %q", r.code, r.stderr)
	}
}

// A straggler of an earlier attempt (a rank that outlived its rank 0: here a run held mid-job
// whose claim is made to look like a dead rank 0's) notices that a newer attempt took the folder
// over and stops without touching it; the newer one completes.
func TestStragglerAttemptStops(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	bframeClip(t, in, 40)
	out := filepath.Join(dir, "out.mkv")
	args := passThroughArgs(in, out, 8)
	p := startPaused(t, "chunk-3", append([]string{bin}, args...)...)
	jd := &lustre.JobDir{Path: out + ".job"}
	h, ok, err := jd.ReadClaim()
	if !ok || err != nil || h.PID != p.pid {
		t.Fatalf("the running job's claim: %+v %v %v", h, ok, err)
	}
	gone := exec.Command("true")
	gone.Run()
	h.PID = gone.Process.Pid // rank 0 died; the held process plays its straggling rank
	data, _ := json.Marshal(&h)
	os.WriteFile(jd.Claim(), data, 0o644)
	r := facefusion(t, args...)
	if r.code != 0 {
		t.Fatalf("second attempt: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "from a dead run") || !strings.Contains(r.stderr, "is gone") {
		t.Errorf("the takeover is not logged with its reason:\n%s", r.stderr)
	}
	if code := p.wait(t); code != exitInternal || !strings.Contains(p.output(), "was taken over by") {
		t.Fatalf("straggler: exit %d, want %d and a line saying why\n%s", code, exitInternal, p.output())
	}
	checkFrames(t, out, frameHashes(t, in))
}
