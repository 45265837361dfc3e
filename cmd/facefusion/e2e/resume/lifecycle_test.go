package resume

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// The job folder's life: the program deletes only what it created, a second run never disturbs
// a live one, and a killed run's leftovers are cleaned by the next run of the same job.

// mustExist fails the test when path is gone.
func mustExist(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s is gone: %v", path, err)
	}
}

// hidden lists the dot files in dir (temp files a run may have left).
func hidden(dir string) []string {
	names, _ := filepath.Glob(filepath.Join(dir, ".*"))
	return names
}

// --job-dir naming a folder the program did not create (a scratch folder, the output's own
// folder) is used inside, never removed: on success and on failure every file of the user's is
// still there.
func TestJobDirNeverDeletesUsersFolder(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	want := bframeClip(t, in, 24)

	t.Run("scratch-folder", func(t *testing.T) {
		scratch := filepath.Join(t.TempDir(), "scratch")
		os.Mkdir(scratch, 0o755)
		notes := filepath.Join(scratch, "notes.txt")
		os.WriteFile(notes, []byte("mine"), 0o644)
		out := filepath.Join(t.TempDir(), "out.mkv")
		r := clitest.Run(t, clitest.PassThroughArgs(in, out, 24, "--job-dir", scratch)...) // one chunk: chunks are not the point
		if r.Code != 0 || !strings.Contains(r.Stderr, "was not created by facefusion") {
			t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
		}
		clitest.CheckFrames(t, out, want)
		mustExist(t, notes)
		if ents, _ := os.ReadDir(scratch); len(ents) != 1 {
			t.Errorf("the job's subfolder was not removed after success: %v", ents)
		}
		// A failing run (the manifest write fails like a full disk) leaves the user's folder too.
		out2 := filepath.Join(t.TempDir(), "out.mkv")
		cmd := exec.Command(clitest.Bin, clitest.PassThroughArgs(in, out2, 24, "--job-dir", scratch)...)
		cmd.Env = append(clitest.LaunchEnv(t), lustre.FaultEnv+"=manifest.json:1")
		if err := cmd.Run(); err == nil {
			t.Fatal("the run with a failing manifest write succeeded")
		}
		mustExist(t, notes)
		clitest.MustNotExist(t, out2)
	})

	t.Run("output-folder", func(t *testing.T) {
		odir := t.TempDir()
		other := filepath.Join(odir, "other.mkv")
		os.WriteFile(other, []byte("another output"), 0o644)
		out := filepath.Join(odir, "out.mkv")
		r := clitest.Run(t, clitest.PassThroughArgs(in, out, 24, "--job-dir", odir)...)
		if r.Code != 0 || strings.TrimSpace(r.Stdout) != out {
			t.Fatalf("exit %d, stdout %q\n%s", r.Code, r.Stdout, r.Stderr)
		}
		clitest.CheckFrames(t, out, want)
		mustExist(t, other)
		if _, err := os.Stat(out + ".job"); err == nil {
			t.Errorf("the job's subfolder %s.job is left", out)
		}
	})

	t.Run("default-folder-with-a-users-file", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out.mkv")
		// The run makes OUT.job; a user drops a file into it while the job is held mid-way.
		p := clitest.StartPaused(t, "chunk-1", append([]string{clitest.Bin}, clitest.PassThroughArgs(in, out, 8)...)...)
		keep := filepath.Join(out+".job", "keep.txt")
		os.WriteFile(keep, []byte("mine"), 0o644)
		syscall.Kill(p.PID, syscall.SIGKILL)
		p.Wait(t)
		r := clitest.Run(t, clitest.PassThroughArgs(in, out, 8)...)
		if r.Code != 0 || !strings.Contains(r.Stderr, "kept: it holds files facefusion did not write (keep.txt)") {
			t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
		}
		clitest.CheckFrames(t, out, want)
		mustExist(t, keep)
		// What stays is the user's file and the marker that keeps the folder the program's.
		if ents, _ := os.ReadDir(out + ".job"); len(ents) != 2 || ents[0].Name() != lustre.MarkerName || ents[1].Name() != "keep.txt" {
			t.Errorf("facefusion's own files were left beside the user's: %v", ents)
		}
	})
}

// A second run of a job that is running is refused (exit 5) naming the running one, and touches
// nothing of it: not its temp segment, not its attempt, whether it is the same job or another
// one given the same folder. The first run then stops and resumes as if alone.
func TestSecondRunRefusedWhileFirstRuns(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	inFrames := bframeClip(t, in, 32)
	other := filepath.Join(dir, "other.mp4")
	clitest.FaceClip(t, other, 160, 120, 24, "25")
	out := filepath.Join(dir, "out.mkv")
	prom := filepath.Join(dir, "job.prom")
	args := clitest.PassThroughArgs(in, out, 8, "--metrics-path", prom)
	p := clitest.StartPaused(t, "chunk-3", append([]string{clitest.Bin}, args...)...)
	jobDir := out + ".job"
	temps, _ := filepath.Glob(filepath.Join(jobDir, ".seg-*.part.nut"))
	if len(temps) != 1 {
		t.Fatalf("want the held chunk's temp segment, found %v", temps)
	}
	attempt := clitest.ReadFile(filepath.Join(jobDir, "ATTEMPT"))
	for _, second := range [][]string{args, clitest.PassThroughArgs(other, out, 8), append(args, "--fresh")} {
		r := clitest.Run(t, second...)
		line := strings.TrimSpace(r.Stderr)
		if r.Code != fault.ExitBusy || strings.Contains(line, "\n") || !strings.Contains(line, "is in use by a running job") ||
			!strings.Contains(line, "pid "+strconv.Itoa(p.PID)) || !strings.Contains(line, "started ") {
			t.Fatalf("second run %v: exit %d, %q; want exit %d and one line naming the running job", second, r.Code, r.Stderr, fault.ExitBusy)
		}
		mustExist(t, temps[0])
		if got := clitest.ReadFile(filepath.Join(jobDir, "ATTEMPT")); got != attempt {
			t.Fatalf("the refused run changed ATTEMPT from %q to %q", attempt, got)
		}
		if _, err := os.Lstat(report.Path(out)); err == nil { // the report is the running job's to write
			t.Fatalf("the refused run %v wrote a run report", second)
		}
	}
	// The metrics file while the job runs (rewritten from rank 0's progress ticker; the refused
	// runs, given the same --metrics-path, wrote none).
	for ctx := clitest.HangGuard(t); ; time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(prom); err == nil || ctx.Err() != nil {
			break
		}
	}
	live := clitest.ParseMetrics(t, prom)
	if clitest.MetricValue(t, live, "facefusion_job_running") != 1 || clitest.MetricValue(t, live, "facefusion_frames_planned") != 32 ||
		clitest.MetricValue(t, live, "facefusion_frames_done", "rank", "0") > 32 || live["facefusion_exit_status"] != nil {
		t.Errorf("the live metrics: %v", live)
	}
	p.Cmd.Process.Signal(syscall.SIGUSR1)
	code := p.Wait(t)
	if code != fault.ExitCheckpointed {
		t.Fatalf("the first run, stopped: exit %d\n%s", code, p.Output())
	}
	clitest.CheckReportEnd(t, out, clitest.Result{Code: code, Stderr: p.Output()}, lustre.Checkpointed)
	if end := clitest.ParseMetrics(t, prom); clitest.MetricValue(t, end, "facefusion_job_running") != 0 || clitest.MetricValue(t, end, "facefusion_exit_status") != fault.ExitCheckpointed {
		t.Errorf("the metrics at the stop: %v", end)
	}
	r := clitest.Run(t, args...)
	if r.Code != 0 || !clitest.VerifiedLine.MatchString(r.Stderr) {
		t.Fatalf("resume: exit %d\n%s", r.Code, r.Stderr)
	}
	clitest.CheckFrames(t, out, inFrames)
}

// A SIGKILL while the output is joined leaves a temp file as large as the output beside it; the
// next run of the same job removes it (and only it), then finishes; status then reads the run
// report beside the output.
func TestKilledJoinIsCleanedAndReported(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	inFrames := bframeClip(t, in, 24)
	odir := t.TempDir()
	bystander := filepath.Join(odir, ".out.part-1.mkv") // named like this job's temp files, but not recorded
	os.WriteFile(bystander, []byte("x"), 0o644)
	out := filepath.Join(odir, "out.mkv")
	args := clitest.PassThroughArgs(in, out, 8)
	clitest.KilledAt(t, "commit", args)
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a run killed before its final rename left the output")
	}
	left := hidden(odir)
	if len(left) != 2 {
		t.Fatalf("want the killed join's temp file beside the output, found %v", left)
	}
	r := clitest.Run(t, args...)
	if r.Code != 0 || !strings.Contains(r.Stderr, "left by a killed attempt of this job") {
		t.Fatalf("rerun: exit %d\n%s", r.Code, r.Stderr)
	}
	clitest.CheckFrames(t, out, inFrames)
	if got := hidden(odir); len(got) != 1 || got[0] != bystander {
		t.Errorf("hidden files beside the output after the rerun: %v, want only %s", got, bystander)
	}
	if !regexp.MustCompile(`done in [0-9.]+ s on 1 rank\(s\) \(this attempt\); the job took [0-9.]+ s over 2 attempts`).MatchString(r.Stderr) {
		t.Errorf("the final line does not give this attempt's and the job's time:\n%s", r.Stderr)
	}

	// The job folder is gone; its record is the report beside the output.
	clitest.MustNotExist(t, out+".job")
	for _, arg := range []string{out + ".job", out} {
		st := clitest.Run(t, "status", arg)
		if st.Code != 0 || !strings.Contains(st.Stdout, "state:      complete") || !strings.Contains(st.Stdout, "attempts:   2") ||
			!strings.Contains(st.Stdout, "frames:     24 done, 0 pending, of 24") {
			t.Errorf("status %s: exit %d\n%s%s", arg, st.Code, st.Stdout, st.Stderr)
		}
	}
	st := clitest.Run(t, "status", filepath.Join(odir, "nothing.job"))
	if st.Code != fault.ExitInput || !strings.Contains(st.Stderr, "there is no folder") {
		t.Errorf("status of a missing folder: exit %d, %q", st.Code, st.Stderr)
	}
}

// The same for an MP4 output, joined in parallel: killed at "commit" (the joined temp file
// beside the output, the side file in the job folder), the rerun removes both as a killed
// attempt's, joins again in parallel, and gives the 16 frames the killed join had written,
// leaving nothing hidden beside the output and no job folder.
func TestKilledParallelJoinResumes(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	clitest.BframeClip(t, in, 16)
	out := filepath.Join(t.TempDir(), "out.mp4")
	args := clitest.PassThroughArgs(in, out, 8, "--output-video-encoder", "libx264")
	clitest.KilledAt(t, "commit", args)
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a run killed before its final rename left the output")
	}
	side := filepath.Join(out+".job", ".side.a1.mp4")
	if _, err := os.Stat(side); err != nil {
		t.Fatalf("the killed attempt's side file: %v", err)
	}
	left := hidden(filepath.Dir(out))
	if len(left) != 1 {
		t.Fatalf("want the killed join's temp file beside the output, found %v", left)
	}
	killed := clitest.FrameHashes(t, left[0])
	if len(killed) != 16 {
		t.Fatalf("the killed join's temp file has %d frames, want 16", len(killed))
	}
	r := clitest.Run(t, args...)
	if r.Code != 0 || !strings.Contains(r.Stderr, "join: parallel") || !strings.Contains(r.Stderr, "removed "+side+", left by a killed attempt") ||
		strings.Count(r.Stderr, "left by a killed attempt of this job") != 2 {
		t.Fatalf("rerun: exit %d, want the part file and the side file removed and a parallel join\n%s", r.Code, r.Stderr)
	}
	clitest.CheckFrames(t, out, killed)
	if got := hidden(filepath.Dir(out)); len(got) != 0 {
		t.Errorf("hidden files beside the output after the rerun: %v", got)
	}
	clitest.MustNotExist(t, out+".job")
}

// After a resume the rate counts only this attempt's frames.
func TestResumeCountsOnlyThisAttempt(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	clitest.BframeClip(t, in, 32)
	out := filepath.Join(dir, "out.mkv")
	args := clitest.PassThroughArgs(in, out, 16, "--checkpoint-interval", "1")
	// Held half-way into chunk 1: the stop keeps chunk 0 and discards chunk 1.
	p := clitest.StartPaused(t, "frames-20", append([]string{clitest.Bin}, args...)...)
	p.Cmd.Process.Signal(syscall.SIGUSR1)
	code := p.Wait(t)
	if code != fault.ExitCheckpointed {
		t.Fatalf("the first attempt: exit %d\n%s", code, p.Output())
	}
	clitest.CheckReportEnd(t, out, clitest.Result{Code: code, Stderr: p.Output()}, lustre.Checkpointed) // the stop's code, as the process exited
	cmd := exec.Command(clitest.Bin, args...)
	cmd.Env = clitest.LaunchEnv(t)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, b)
	}
	if !strings.Contains(string(b), "16 of 32 frames were done by earlier attempts; 16 to do") {
		t.Errorf("no line separating earlier attempts' frames from this one's:\n%s", b)
	}
	// The batch-log progress lines count this attempt's frames against this attempt's total.
	if m := regexp.MustCompile(`\[FACEFUSION\] rank 0: progress: (\d+)/(\d+) frames`).FindStringSubmatch(string(b)); m == nil || m[1] != "16" || m[2] != "16" {
		t.Errorf("progress lines %v, want this attempt's 16/16:\n%s", m, b)
	}
}

// What the run writes never lands on an input or a file it did not write: the run report beside
// the output is checked like the output (an input by name or link is refused even with --force;
// an existing one needs --force), and an output or input inside the job folder, whose files the
// job removes, is refused before any frame, as is a job folder that is the output itself.
func TestWritesNeverLandOnInputs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	clitest.BframeClip(t, in, 16)
	odir := t.TempDir()

	victim := filepath.Join(odir, "out.mkv.report.json") // the target, named like the report
	data, _ := os.ReadFile(in)
	os.WriteFile(victim, data, 0o644)
	r := clitest.Run(t, clitest.PassThroughArgs(victim, filepath.Join(odir, "out.mkv"), 8, "--force")...)
	if r.Code != fault.ExitUsage || !strings.Contains(r.Stderr, "its run report") || clitest.FileMD5(t, victim) != clitest.FileMD5(t, in) {
		t.Fatalf("report over the target: exit %d, %q", r.Code, r.Stderr)
	}

	notes := filepath.Join(odir, "o2.mkv.report.json")
	os.WriteFile(notes, []byte("my notes"), 0o644)
	o2 := filepath.Join(odir, "o2.mkv")
	if r := clitest.Run(t, clitest.PassThroughArgs(in, o2, 8)...); r.Code != fault.ExitUsage || !strings.Contains(r.Stderr, "pass --force") || clitest.ReadFile(notes) != "my notes" {
		t.Fatalf("existing report without --force: exit %d, %q", r.Code, r.Stderr)
	}
	// The run with --force also keeps its segments: its job folder is the one the runs below
	// must not write into (it was a run of its own).
	kept := o2
	if r := clitest.Run(t, clitest.PassThroughArgs(in, o2, 8, "--force", "--keep-segments")...); r.Code != 0 || !strings.Contains(clitest.ReadFile(notes), `"outcome": "complete"`) {
		t.Fatalf("existing report with --force: exit %d, %q", r.Code, r.Stderr)
	}
	segs, _ := filepath.Glob(filepath.Join(kept+".job", "seg-*.nut"))
	for _, c := range [][]string{
		{"-o", filepath.Join(kept+".job", "seg-000013.nut"), "--job-dir", kept + ".job"},
		{"-o", filepath.Join(odir, "same.mkv"), "--job-dir", filepath.Join(odir, "same.mkv")},
	} {
		args := append([]string{"run", "--processors", "none", "--output-video-encoder", "ffv1", "--chunk-frames", "8", "-t", in, "--force"}, c...)
		if r := clitest.Run(t, args...); r.Code != fault.ExitUsage || !strings.Contains(r.Stderr, "the job folder") || strings.Contains(r.Stderr, "frames") {
			t.Errorf("%v: exit %d, %q; want exit 2 before any frame", c, r.Code, r.Stderr)
		}
	}
	if now, _ := filepath.Glob(filepath.Join(kept+".job", "seg-*.nut")); len(now) != len(segs) || len(segs) != 2 {
		t.Errorf("the kept job folder's segments changed: %v → %v", segs, now)
	}

	// A link to a folder (a cluster's /scratch often is one) is that folder: used inside.
	real := filepath.Join(odir, "real")
	os.Mkdir(real, 0o755)
	link := filepath.Join(odir, "scratch")
	os.Symlink(real, link)
	if r := clitest.Run(t, clitest.PassThroughArgs(in, filepath.Join(odir, "l.mkv"), 16, "--job-dir", link)...); r.Code != 0 {
		t.Fatalf("--job-dir a link to a folder: exit %d\n%s", r.Code, r.Stderr)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link given as --job-dir is gone")
	}
}

// Something the program did not write in a chunk's place (here a folder) is named before any
// frame, with what to do; the program does not remove it, and once moved the job resumes.
func TestSegmentPathBlocked(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	inFrames := bframeClip(t, in, 32)
	out := filepath.Join(dir, "out.mkv")
	args := clitest.PassThroughArgs(in, out, 8)
	clitest.KilledAt(t, "chunk-1", args)
	blocker := filepath.Join(out+".job", "seg-000003.nut")
	os.Mkdir(blocker, 0o755)
	r := clitest.Run(t, args...)
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	last := lines[len(lines)-1]
	if r.Code != fault.ExitInput || !strings.Contains(last, blocker) || !strings.Contains(last, "is a folder") || !strings.Contains(last, "move it away") ||
		strings.Contains(r.Stderr, "frames,") {
		t.Fatalf("exit %d, want %d and one line naming the folder before any frame:\n%s", r.Code, fault.ExitInput, r.Stderr)
	}
	mustExist(t, blocker)
	os.Remove(blocker)
	if r := clitest.Run(t, args...); r.Code != 0 {
		t.Fatalf("after moving it: exit %d\n%s", r.Code, r.Stderr)
	}
	clitest.CheckFrames(t, out, inFrames)
}
