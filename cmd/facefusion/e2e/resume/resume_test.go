package resume

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// Checkpoint, resume and preemption, for real: attempts are killed (SIGKILL, no clean-up) or
// stopped (SIGTERM) at points the test-only pause hook holds them at, and the rerun of the same
// command must give the very frames of an uninterrupted run.

// A killed attempt (the launcher, one rank mid-chunk, rank 0 while joining) leaves nothing at
// the output path, and the rerun gives the target's frames exactly. Segments damaged between
// the attempts are found and redone, and only they.
func TestResumeAfterKill(t *testing.T) {
	testenv.Tool(t, "mpirun")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	want := bframeClip(t, in, 32)
	// 4 chunks of 8 over 2 ranks: rank 0 has chunks 0–1, rank 1 chunks 2–3 (a chunk a rank
	// left is all a kill and its rerun need; each chunk more costs an encoder in both).
	cases := []struct {
		name, point string
		kill        string // launcher or rank
		damage      bool
	}{
		{"launcher-before-first-checkpoint", "chunk-0", "launcher", false},
		{"rank1-mid-chunk", "chunk-3", "rank", false},
		{"rank0-during-concat", "concat", "rank", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.mkv")
			args := clitest.PassThroughArgs(in, out, 8)
			p := clitest.StartPaused(t, c.point, clitest.MpirunArgv(2, args...)...)
			victim := p.PID
			if c.kill == "launcher" {
				victim = p.Cmd.Process.Pid
			}
			syscall.Kill(victim, syscall.SIGKILL)
			if code := p.Wait(t); code == 0 {
				t.Fatalf("killed attempt exited 0:\n%s", p.Output())
			}
			clitest.MustNotExist(t, out)
			if c.point == "concat" {
				m := clitest.ReadManifest(t, out+".job")
				if len(m.Done) != 4 {
					t.Fatalf("before the join the manifest holds %d chunks, want all 4", len(m.Done))
				}
			}
			if c.damage {
				seg := func(i int) string { return filepath.Join(out+".job", fmt.Sprintf("seg-%06d.nut", i)) }
				st, err := os.Stat(seg(1))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Truncate(seg(1), st.Size()/2); err != nil {
					t.Fatal(err)
				}
				st, _ = os.Stat(seg(2))
				if err := os.WriteFile(seg(2), make([]byte, st.Size()), 0o644); err != nil { // junk, same size
					t.Fatal(err)
				}
			}
			// The rerun of the concat case is on 2 ranks, which share the two chunks it redoes
			// (rank 0 verifies every segment either way); the others rerun on 1 (a resume on
			// another rank count than the killed attempt's: TestResumeSwapMoreRanks), without
			// mpirun's start and a second rank's.
			var r clitest.Result
			if c.point == "concat" {
				r = clitest.Mpirun(t, clitest.HangGuard(t), 2, args...)
			} else {
				r = clitest.Run(t, args...)
			}
			if r.Code != 0 {
				t.Fatalf("rerun: exit %d\n%s", r.Code, r.Stderr)
			}
			m := clitest.VerifiedLine.FindStringSubmatch(r.Stderr)
			if m == nil {
				t.Fatalf("the rerun did not resume:\n%s", r.Stderr)
			}
			if c.point == "concat" {
				if m[1] != "2" || m[3] != "2" {
					t.Errorf("rerun verified %s chunks with %s to do, want 2 and 2 (chunks 1 and 2 damaged, one of each rank):\n%s", m[1], m[3], r.Stderr)
				}
				for _, redo := range []string{"chunk 1: segment", "chunk 2: segment"} {
					if !strings.Contains(r.Stderr, redo) {
						t.Errorf("no log line %q… redoing it:\n%s", redo, r.Stderr)
					}
				}
				if strings.Count(r.Stderr, "redoing it") != 2 {
					t.Errorf("want exactly 2 chunks redone:\n%s", r.Stderr)
				}
			}
			clitest.CheckFrames(t, out, want)
			if _, err := os.Stat(out + ".job"); err == nil {
				t.Errorf("job folder left after a finished run without --keep-segments")
			}
		})
	}
}

// A face swap killed midway on 1 rank and resumed on 3 (with 2 chunks done, the 20 frames left
// are cut 7, 7 and 6: a chunk spans ranks) is frame-identical to an uninterrupted 1-rank swap, and its identity
// measure is the uninterrupted run's (the chunks carry it: the killed attempt's measured frames
// count); status reads the killed attempt's checkpoint. (The killed attempt was 2 ranks under
// mpirun: a launcher and a rank's model load more; a kill of several ranks at once and its
// resume are TestResumeAfterKill's.)
func TestResumeSwapMoreRanks(t *testing.T) {
	testenv.Tool(t, "mpirun")
	dir := t.TempDir()
	in := filepath.Join(dir, "face.mp4")
	clitest.FaceClip(t, in, 320, 240, 40, "25")
	src := testenv.Sample(t, "grace_hopper.png")
	// Every 10th frame measured (the job's own sample would take frame 0 alone): the killed
	// attempt's chunk and the resumed ones both hold measured frames.
	t.Setenv(pipeline.IdentityEveryEnv, "10")
	swapArgs := func(out string, chunk int) []string {
		return []string{"run", "-s", src, "-t", in, "-o", out, "--output-video-encoder", "ffv1", "--chunk-frames", strconv.Itoa(chunk)}
	}
	// The reference in one chunk of 40: an encoder, not four; its frames do not depend on where
	// a rank's chunks are cut (e2e/dist's TestDistSwapMatchesOneRank).
	ref := filepath.Join(dir, "ref.mkv")
	if r := clitest.Run(t, swapArgs(ref, 40)...); r.Code != 0 {
		t.Fatalf("reference run: exit %d\n%s", r.Code, r.Stderr)
	}
	out := filepath.Join(dir, "out.mkv")
	// 4 chunks on 1 rank: held at chunk 2, chunks 0 and 1 done (or finishing).
	p := clitest.StartPaused(t, "chunk-2", append([]string{clitest.Bin}, swapArgs(out, 10)...)...)
	time.Sleep(500 * time.Millisecond)
	syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
	p.Wait(t)
	clitest.MustNotExist(t, out)
	st := clitest.Run(t, "status", out+".job")
	if st.Code != 0 || !regexp.MustCompile(`chunks:\s+[1-3] done, [1-3] pending, of 4`).MatchString(st.Stdout) {
		t.Fatalf("status after the kill: exit %d\n%s%s", st.Code, st.Stdout, st.Stderr)
	}
	// The manifest still reads "running"; the claim's dead process tells status otherwise.
	if !strings.Contains(st.Stdout, "state:      not running: killed (its process") {
		t.Fatalf("status calls the killed job:\n%s", st.Stdout)
	}
	r := clitest.Mpirun(t, clitest.HangGuard(t), 3, swapArgs(out, 10)...)
	if r.Code != 0 {
		t.Fatalf("resume on 3 ranks: exit %d\n%s", r.Code, r.Stderr)
	}
	if !clitest.VerifiedLine.MatchString(r.Stderr) {
		t.Errorf("the 3-rank run did not resume:\n%s", r.Stderr)
	}
	got, wantHashes, orig := clitest.FrameHashes(t, out), clitest.FrameHashes(t, ref), clitest.FrameHashes(t, in)
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
	// Frames 0, 10, 20 and 30 are measured (the test's stride); chunk 0 (frame 0) was done by
	// the killed attempt.
	idRef, idOut := clitest.ReadReport(t, report.Path(ref)).Identity, clitest.ReadReport(t, report.Path(out)).Identity
	if idRef == nil || idOut == nil || idRef.Faces != 4 || *idOut != *idRef {
		t.Fatalf("identity measure after the resume %+v, uninterrupted %+v: want the same 4 faces", idOut, idRef)
	}
}

// A job folder whose target changed is refused with one clear line; --fresh starts over.
func TestResumeRefusesChangedJob(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	clitest.BframeClip(t, in, 24)
	out := filepath.Join(dir, "out.mkv")
	args := clitest.PassThroughArgs(in, out, 8)
	clitest.KilledAt(t, "chunk-2", args)
	if n := len(clitest.ReadManifest(t, out+".job").Done); n != 0 {
		// chunks 0 and 1 are in the journal, not yet merged at the default cadence
		t.Logf("manifest already holds %d chunk(s)", n)
	}

	clitest.FaceClip(t, in, 160, 120, 24, "25") // other content, same name and frame count
	r := clitest.Run(t, args...)
	// The killed attempt's claim is taken over (one log line saying so); the refusal is one line.
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	last := lines[len(lines)-1]
	if r.Code != fault.ExitUsage || len(lines) > 2 || (len(lines) == 2 && !strings.Contains(lines[0], "from a dead run")) ||
		!strings.Contains(last, "target file contents changed") || !strings.Contains(last, "pass --fresh to start over") {
		t.Fatalf("changed target: exit %d, %q; want exit %d and one line naming the target and --fresh", r.Code, r.Stderr, fault.ExitUsage)
	}
	clitest.MustNotExist(t, out)
	r = clitest.Run(t, append(args, "--fresh")...)
	if r.Code != 0 {
		t.Fatalf("--fresh: exit %d\n%s", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "--fresh: discarded 2 finished segment(s)") || clitest.VerifiedLine.MatchString(r.Stderr) {
		t.Errorf("--fresh did not start over:\n%s", r.Stderr)
	}
	clitest.CheckFrames(t, out, clitest.FrameHashes(t, in))
}

// Slurm's early warning (SIGUSR1) on every rank, or SIGTERM on one rank alone (rank 0, or rank 1
// while rank 0 is held): a chunk whose encoder had finished is still recorded (rank 0 is held
// with chunk 1 encoded, before its rename: its last of chunks 0–1, 32 frames in 4 chunks of 8
// over 2 ranks), the ranks gather what they finished,
// rank 0 writes the manifest, and every rank exits with rank 0's decision: 75 for USR1 after
// progress, 130 for TERM (also on the rank that got no signal). status reads it; the rerun
// completes. mpirun forwards USR1 to the ranks (TERM it handles itself).
func TestSigtermCheckpoints(t *testing.T) {
	testenv.Tool(t, "mpirun")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	want := bframeClip(t, in, 32)
	for _, who := range []string{"every-rank", "one-rank", "other-rank"} {
		t.Run(who, func(t *testing.T) {
			sigStopsAndResumes(t, in, want, who)
		})
	}
	t.Run("shared-chunk", func(t *testing.T) { stopInSharedChunk(t, in, want) })
	t.Run("start-up", func(t *testing.T) { stopInStartUp(t, in) })
	t.Run("start-up-other-rank", func(t *testing.T) { stopOtherRankInStartUp(t, in) })
	t.Run("image", func(t *testing.T) { stopImage(t, dir) })
}

// stopInStartUp signals rank 0 alone while it plans (held before its probe, which the signal
// then cancels): a stop, not bad input, on every rank, the run report's outcome the stop's.
func stopInStartUp(t *testing.T, in string) {
	out := filepath.Join(t.TempDir(), "out.mkv")
	p := clitest.StartPaused(t, "plan", clitest.MpirunArgv(2, clitest.PassThroughArgs(in, out, 8)...)...)
	syscall.Kill(p.PID, syscall.SIGTERM)
	checkStopped(t, p, out, "cancelled by SIGTERM (rank 0): nothing was written to the output path")
}

// stopOtherRankInStartUp signals rank 1 alone while rank 0 plans (rank 1 held before its
// load): rank 0 plans on, unsignalled, and learns of the signal from the other ranks (the
// set-up's agreement, or the first control round: a pass-through's set-up has nothing the
// signal cancels, so either tells it); the job stops on every rank before a frame, rank 1's
// signal named, as a stop.
func stopOtherRankInStartUp(t *testing.T, in string) {
	out := filepath.Join(t.TempDir(), "out.mkv")
	p := clitest.StartPaused(t, "load", clitest.MpirunArgv(2, clitest.PassThroughArgs(in, out, 8)...)...)
	syscall.Kill(p.PID, syscall.SIGTERM) // the paused process: rank 1
	checkStopped(t, p, out, "cancelled by SIGTERM (rank 1)")
}

// stopImage signals rank 1 of an image job while rank 0 is held before the image: the rounds
// bring the stop to rank 0, which writes nothing.
func stopImage(t *testing.T, dir string) {
	in := filepath.Join(dir, "in.png")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1", in)
	out := filepath.Join(t.TempDir(), "out.png")
	p := clitest.StartPaused(t, "image", clitest.MpirunArgv(2, "run", "--processors", "none", "-t", in, "-o", out)...)
	others := p.OtherRanks()
	if len(others) != 1 {
		t.Fatalf("rank 1's process: found %v", others)
	}
	syscall.Kill(others[0], syscall.SIGTERM)
	checkStopped(t, p, out, "cancelled by SIGTERM (rank 1): nothing was written to the output path")
}

// checkStopped waits for a run stopped by SIGTERM: exit 130, the stop's line, nothing at out,
// and a run report that tells the stop (not a failure) with the exit code.
func checkStopped(t *testing.T, p *clitest.Paused, out, said string) {
	t.Helper()
	if code := p.Wait(t); code != fault.ExitCancelled {
		t.Fatalf("exit %d, want %d\n%s", code, fault.ExitCancelled, p.Output())
	}
	if !strings.Contains(p.Output(), said) {
		t.Errorf("no line %q:\n%s", said, p.Output())
	}
	clitest.MustNotExist(t, out)
	rep := clitest.ReadReport(t, report.Path(out))
	if rep.Outcome != lustre.Checkpointed || rep.ExitStatus != fault.ExitCancelled || !strings.HasPrefix(rep.Error, said) {
		t.Errorf("run report: outcome %s, exit %d, error %q; want %s, %d, %q", rep.Outcome, rep.ExitStatus, rep.Error,
			lustre.Checkpointed, fault.ExitCancelled, said)
	}
}

// stopInSharedChunk stops a 3-rank run while rank 1 sends rank 0 its frames of chunk 1 (32
// frames are 11, 11 and 10 a rank; chunk 1, [8,16), is cut at 11 and encoded by rank 0; rank 1
// is held after the first of its 5 frames of it): rank 1 tells rank 0 its part is discarded, no
// rank waits for another (the hang guard), chunk 1 is not recorded, and a resume on 2 ranks
// redoes it, the output exact.
func stopInSharedChunk(t *testing.T, in string, want []string) {
	out := filepath.Join(t.TempDir(), "out.mkv")
	args := clitest.PassThroughArgs(in, out, 8)
	p := clitest.StartPaused(t, "rank-1-frames-1", clitest.MpirunArgv(3, args...)...)
	// Rank 0's chunk 0 finished first (its segment in place): a stop throws away a chunk in
	// flight, and with none finished the job folder would go with the stop.
	ctx := clitest.HangGuard(t)
	for segs, _ := filepath.Glob(filepath.Join(out+".job", "seg-000000.*")); len(segs) == 0; segs, _ = filepath.Glob(filepath.Join(out+".job", "seg-000000.*")) {
		if ctx.Err() != nil {
			t.Fatalf("rank 0 never finished chunk 0 while rank 1 was held:\n%s", p.Output())
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.Cmd.Process.Signal(syscall.SIGUSR1)
	if code := p.Wait(t); code != fault.ExitCheckpointed && code != fault.ExitNoRequeue {
		t.Fatalf("exit %d, want %d (or %d: no chunk finished)\n%s", code, fault.ExitCheckpointed, fault.ExitNoRequeue, p.Output())
	}
	clitest.MustNotExist(t, out)
	m := clitest.ReadManifest(t, out+".job")
	if slices.ContainsFunc(m.Done, func(c lustre.Chunk) bool { return c.Chunk == 1 }) {
		t.Fatalf("chunk 1 is recorded although rank 1 stopped before sending its frames of it: %+v", m.Done)
	}
	r := clitest.Mpirun(t, clitest.HangGuard(t), 2, args...)
	if r.Code != 0 {
		t.Fatalf("resume on 2 ranks: exit %d\n%s", r.Code, r.Stderr)
	}
	clitest.CheckFrames(t, out, want)
}

// sigStopsAndResumes signals every rank (through mpirun), only rank 0, or only rank 1 while
// rank 0 is held at the pause hook, which only the stop reaching it in the ranks' control round
// releases. The job folder holds one progress file for the job, none per rank.
func sigStopsAndResumes(t *testing.T, in string, wantFrames []string, who string) {
	out := filepath.Join(t.TempDir(), "out.mkv")
	args := clitest.PassThroughArgs(in, out, 8)
	p := clitest.StartPaused(t, "chunk-1", clitest.MpirunArgv(2, args...)...)
	want, said := fault.ExitCheckpointed, `stopped by SIGUSR1 \(rank [01]\): (\d+) of 4 chunk\(s\)`
	switch who {
	case "one-rank":
		syscall.Kill(p.PID, syscall.SIGTERM)
		want, said = fault.ExitCancelled, `cancelled by SIGTERM \(rank 0\): (\d+) of 4 chunk\(s\)`
	case "other-rank":
		others := p.OtherRanks()
		if len(others) != 1 {
			t.Fatalf("rank 1's process: found %v", others)
		}
		syscall.Kill(others[0], syscall.SIGTERM)
		want, said = fault.ExitCancelled, `cancelled by SIGTERM \(rank 1\): (\d+) of 4 chunk\(s\)`
	default:
		p.Cmd.Process.Signal(syscall.SIGUSR1)
	}
	if code := p.Wait(t); code != want {
		t.Fatalf("exit %d, want %d\n%s", code, want, p.Output())
	}
	msg := regexp.MustCompile(said).FindStringSubmatch(p.Output())
	if msg == nil {
		t.Fatalf("no checkpoint message:\n%s", p.Output())
	}
	clitest.MustNotExist(t, out)
	m := clitest.ReadManifest(t, out+".job")
	if strconv.Itoa(len(m.Done)) != msg[1] || m.Attempts[0].Outcome != lustre.Checkpointed {
		t.Fatalf("manifest holds %d chunks (%s), the message says %s", len(m.Done), m.Attempts[0].Outcome, msg[1])
	}
	if !slices.ContainsFunc(m.Done, func(c lustre.Chunk) bool { return c.Chunk == 1 }) {
		t.Errorf("chunk 1, encoded when the stop came, was discarded: %+v", m.Done)
	}
	jd := &lustre.JobDir{Path: out + ".job"}
	if frames, ok, err := jd.ReadProgress(); !ok || err != nil || len(frames) != 2 {
		t.Errorf("the job's progress file: %v %v %v, want both ranks' frames", frames, ok, err)
	}
	if _, err := os.Stat(filepath.Join(jd.Path, "progress")); err == nil {
		t.Errorf("a rank wrote a progress file of its own")
	}
	// status says what stopped it and what comes next in the exit-code table's words.
	words := map[string]string{"every-rank": "requeue wanted", "one-rank": "cancelled by SIGTERM (rank 0): cancelled",
		"other-rank": "cancelled by SIGTERM (rank 1): cancelled"}[who]
	st := clitest.Run(t, "status", out+".job")
	if st.Code != 0 || !strings.Contains(st.Stdout, "state:      checkpointed (") || !strings.Contains(st.Stdout, words+")") ||
		!strings.Contains(st.Stdout, fmt.Sprintf("chunks:     %s done, %d pending, of 4", msg[1], 4-len(m.Done))) {
		t.Fatalf("status: exit %d\n%s%s", st.Code, st.Stdout, st.Stderr)
	}
	if who != "every-rank" {
		// The rerun after a stop is every-rank's: the manifest a stop leaves is the same one
		// (checkpointed, the chunks finished), whichever signal and rank stopped it, and
		// shared-chunk's resume reads one too (each rerun was an mpirun of 2 ranks).
		return
	}
	r := clitest.Mpirun(t, clitest.HangGuard(t), 2, args...)
	if r.Code != 0 {
		t.Fatalf("rerun: exit %d\n%s", r.Code, r.Stderr)
	}
	clitest.CheckFrames(t, out, wantFrames)
}

// Rank 0 merges the journals into the manifest on the checkpoint cadence while chunks are
// still being encoded, not only at the end: chunk 0 of 2 is in it while chunk 1 is held.
func TestCheckpointCadence(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	clitest.BframeClip(t, in, 32)
	out := filepath.Join(dir, "out.mkv")
	p := clitest.StartPaused(t, "chunk-1", append([]string{clitest.Bin}, clitest.PassThroughArgs(in, out, 16, "--checkpoint-interval", "1")...)...)
	ctx := clitest.HangGuard(t)
	for {
		if m := clitest.ReadManifest(t, out+".job"); len(m.Done) == 1 && m.Done[0].Chunk == 0 && m.Attempts[0].Outcome == lustre.Running {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the manifest never held chunk 0 while chunk 1 was held:\n%s", p.Output())
		}
		time.Sleep(200 * time.Millisecond)
	}
	syscall.Kill(p.PID, syscall.SIGKILL)
	p.Wait(t)
}

// A checkpoint write that fails (a full file system, injected at the file layer) is a clear
// one-line error; the manifest on disk stays the last good one, no temp file is left, and the
// rerun loses nothing.
func TestCheckpointWriteFailure(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	want := bframeClip(t, in, 16)
	out := filepath.Join(dir, "out.mkv")
	args := clitest.PassThroughArgs(in, out, 8)
	cmd := exec.Command(clitest.Bin, args...)
	// The 1st manifest write starts the attempt; the 2nd, at its end, fails.
	cmd.Env = append(clitest.LaunchEnv(t), lustre.FaultEnv+"=manifest.json:2")
	var errb strings.Builder
	cmd.Stderr = &errb
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != fault.ExitEnvironment { // a full disk: the environment's
		t.Fatalf("exit %v, want %d\n%s", err, fault.ExitEnvironment, errb.String())
	}
	var errLines []string
	for _, l := range strings.Split(errb.String(), "\n") {
		if strings.Contains(l, "manifest.json") {
			errLines = append(errLines, l)
		}
	}
	if len(errLines) != 1 || !strings.Contains(errLines[0], "no space left on device") || !strings.Contains(errLines[0], "rerun the same command to resume") {
		t.Fatalf("want one line naming the manifest, the cause and what to do:\n%s", errb.String())
	}
	clitest.MustNotExist(t, out)
	m := clitest.ReadManifest(t, out+".job")
	if len(m.Done) != 0 || m.Attempts[0].Outcome != lustre.Running {
		t.Errorf("the manifest is not the last good one: %d chunks, %s", len(m.Done), m.Attempts[0].Outcome)
	}
	if tmp, _ := filepath.Glob(filepath.Join(out+".job", ".manifest.json.tmp-*")); len(tmp) > 0 {
		t.Errorf("temp files left: %v", tmp)
	}
	r := clitest.Run(t, args...)
	if r.Code != 0 {
		t.Fatalf("rerun: exit %d\n%s", r.Code, r.Stderr)
	}
	if m := clitest.VerifiedLine.FindStringSubmatch(r.Stderr); m == nil || m[1] != "2" {
		t.Errorf("the rerun should verify both journaled chunks:\n%s", r.Stderr)
	}
	clitest.CheckFrames(t, out, want)
}

// With --keep-segments the job folder stays after success, its manifest complete.
func TestKeepSegments(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	clitest.BframeClip(t, in, 24)
	out := filepath.Join(dir, "out.mkv")
	if r := clitest.Run(t, clitest.PassThroughArgs(in, out, 8, "--keep-segments")...); r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	m := clitest.ReadManifest(t, out+".job")
	if len(m.Done) != 3 || m.Attempts[len(m.Attempts)-1].Outcome != lustre.Complete {
		t.Fatalf("kept manifest: %d chunks, %s", len(m.Done), m.Attempts[0].Outcome)
	}
	st := clitest.Run(t, "status", out+".job")
	if st.Code != 0 || !strings.Contains(st.Stdout, "state:      complete") || !strings.Contains(st.Stdout, "frames:     24 done, 0 pending, of 24") {
		t.Fatalf("status: exit %d\n%s%s", st.Code, st.Stdout, st.Stderr)
	}
	if r := clitest.Run(t, "status", t.TempDir()); r.Code != fault.ExitInput || !strings.Contains(r.Stderr, "no manifest.json") {
		t.Errorf("status of a non-job folder: exit %d, %q", r.Code, r.Stderr)
	}
	if r := clitest.Run(t, "status", dir); r.Code != fault.ExitInput || !strings.Contains(r.Stderr, "is not a job folder; it holds "+out+".job") {
		t.Errorf("status of a non-job folder: exit %d, %q", r.Code, r.Stderr)
	}
}

// A straggler of an earlier attempt (a rank that outlived its rank 0: here a run held mid-job
// whose claim is made to look like a dead rank 0's) notices that a newer attempt took the folder
// over and stops without touching it; the newer one completes.
func TestStragglerAttemptStops(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	want := bframeClip(t, in, 24)
	out := filepath.Join(dir, "out.mkv")
	args := clitest.PassThroughArgs(in, out, 8)
	p := clitest.StartPaused(t, "chunk-1", append([]string{clitest.Bin}, args...)...)
	jd := &lustre.JobDir{Path: out + ".job"}
	h, ok, err := jd.ReadClaim()
	if !ok || err != nil || h.PID != p.PID {
		t.Fatalf("the running job's claim: %+v %v %v", h, ok, err)
	}
	gone := exec.Command("true")
	gone.Run()
	h.PID = gone.Process.Pid // rank 0 died; the held process plays its straggling rank
	data, _ := json.Marshal(&h)
	os.WriteFile(jd.Claim(), data, 0o644)
	r := clitest.Run(t, args...)
	if r.Code != 0 {
		t.Fatalf("second attempt: exit %d\n%s", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "from a dead run") || !strings.Contains(r.Stderr, "is gone") {
		t.Errorf("the takeover is not logged with its reason:\n%s", r.Stderr)
	}
	if code := p.Wait(t); code != fault.ExitInternal || !strings.Contains(p.Output(), "was taken over by") {
		t.Fatalf("straggler: exit %d, want %d and a line saying why\n%s", code, fault.ExitInternal, p.Output())
	}
	clitest.CheckFrames(t, out, want)
}
