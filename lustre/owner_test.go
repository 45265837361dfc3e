package lustre

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A folder the program did not create is never used directly, so never removed: the job goes
// into a subfolder of its own. One it created (the marker) is used again.
func TestResolveNeverTakesAUsersFolder(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.mp4")
	p, note, err := Resolve("", out)
	if err != nil || p != out+".job" || note != "" {
		t.Fatalf("default: %q %q %v", p, note, err)
	}
	// --job-dir naming the output's own folder (exists, not ours).
	p, note, err = Resolve(dir, out)
	if err != nil || p != filepath.Join(dir, "out.mp4.job") || !strings.Contains(note, "was not created by facefusion") {
		t.Fatalf("existing folder: %q %q %v", p, note, err)
	}
	// An existing empty folder is the user's too.
	empty := filepath.Join(dir, "scratch")
	os.Mkdir(empty, 0o755)
	if p, _, _ = Resolve(empty, out); p != filepath.Join(empty, "out.mp4.job") {
		t.Fatalf("empty user folder used directly: %s", p)
	}
	// One the program created is used as it is.
	mine := filepath.Join(dir, "mine.job")
	if _, _, err := Create(mine); err != nil {
		t.Fatal(err)
	}
	if p, note, _ = Resolve(mine, out); p != mine || note != "" {
		t.Fatalf("own folder: %q %q", p, note)
	}
	// A file is refused.
	f := filepath.Join(dir, "file")
	touch(t, f)
	if _, _, err := Resolve(f, out); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Fatalf("file as job folder: %v", err)
	}
	// Create refuses an existing folder without the marker.
	if _, _, err := Create(empty); err == nil || !strings.Contains(err.Error(), "not created by facefusion") {
		t.Fatalf("Create on a user's folder: %v", err)
	}
}

// Remove deletes exactly the layout's entries: a user's files (and the folder holding them)
// stay; a folder without the marker is not touched at all.
func TestRemoveOnlyWhatItWrote(t *testing.T) {
	dir := t.TempDir()
	j, _, err := Create(filepath.Join(dir, "a.job"))
	if err != nil {
		t.Fatal(err)
	}
	ourFiles := func(j *JobDir) []string {
		return []string{j.Segment(0), j.Segment(12), j.SegmentTemp(3, 1, 2), j.Manifest(), j.Journal(0), j.Journal(3),
			j.Progress(), filepath.Join(j.Path, "progress", "rank-1"), j.Attempt(), j.Stop(), j.Failed(), j.Claim(), j.Joining(), j.JoinTemp(4), j.Side(4, ".mp4"),
			filepath.Join(j.Path, ".manifest.json.tmp-123"), filepath.Join(j.Path, "done", ".rank-0.json.tmp-9")}
	}
	for _, f := range ourFiles(j) {
		touch(t, f)
	}
	left, err := j.Remove()
	if err != nil || left != nil {
		t.Fatalf("own folder: left %v, %v", left, err)
	}
	if _, err := os.Stat(j.Path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the folder remains: %v", err)
	}

	// The same with a user's files mixed in: they and the folder stay.
	j, _, _ = Create(filepath.Join(dir, "b.job"))
	for _, f := range ourFiles(j) {
		touch(t, f)
	}
	users := []string{"notes.txt", "seg-1.mkv", "done/mine.json", "sub/seg-000001.mkv", "manifest.json.bak", ".seg-000001.part.mkv"}
	for _, u := range users {
		touch(t, filepath.Join(j.Path, u))
	}
	left, err = j.Remove()
	if err != nil {
		t.Fatal(err)
	}
	want := ".seg-000001.part.mkv done/ done/mine.json manifest.json.bak notes.txt seg-1.mkv sub"
	if got := strings.Join(left, " "); got != want {
		t.Errorf("left %q, want %q", got, want)
	}
	for _, u := range users {
		if _, err := os.Stat(filepath.Join(j.Path, u)); err != nil {
			t.Errorf("user's file %s removed", u)
		}
	}
	for _, f := range ourFiles(j) {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s not removed", f)
		}
	}

	// No marker: nothing is touched.
	foreign := &JobDir{Path: filepath.Join(dir, "c")}
	touch(t, foreign.Segment(0))
	if _, err := foreign.Remove(); err == nil {
		t.Fatal("removed a folder without the marker")
	}
	if _, err := os.Stat(foreign.Segment(0)); err != nil {
		t.Fatal("a file in a foreign folder was removed")
	}
}

// CleanStale removes a dead attempt's leftovers of this job, including the join's temp file
// beside the output recorded in JOINING and the parallel join's side file, and nothing else.
func TestCleanStale(t *testing.T) {
	dir := t.TempDir()
	j, _, _ := Create(filepath.Join(dir, "out.mkv.job"))
	part := filepath.Join(dir, ".out.part-123.mkv")
	other := filepath.Join(dir, ".other.part-9.mkv") // not recorded: not this job's
	notTemp := filepath.Join(dir, "precious.mkv")    // recorded, but not a temp file name
	for _, f := range []string{part, other, notTemp, j.SegmentTemp(1, 0, 1), j.JoinTemp(1), j.Side(1, ".MOV"), j.Stop(), j.Failed(), j.Progress(), filepath.Join(j.Path, "progress", "rank-0"), j.Segment(0)} {
		touch(t, f)
	}
	if err := j.RecordJoin(filepath.Join(dir, "out.mkv"), part, notTemp); err != nil {
		t.Fatal(err)
	}
	isTemp := func(p, output string) bool {
		return output == filepath.Join(dir, "out.mkv") && strings.HasPrefix(filepath.Base(p), ".out.")
	}
	removed, _ := j.CleanStale(isTemp)
	if len(removed) != 4 {
		t.Errorf("removed %v, want the part file, the temp segment, the join temp and the side file", removed)
	}
	for _, gone := range []string{part, j.SegmentTemp(1, 0, 1), j.JoinTemp(1), j.Side(1, ".MOV"), j.Stop(), j.Failed(), j.Progress(), filepath.Join(j.Path, "progress", "rank-0"), j.Joining()} {
		if _, err := os.Stat(gone); err == nil {
			t.Errorf("%s left", gone)
		}
	}
	for _, kept := range []string{other, notTemp, j.Segment(0)} {
		if _, err := os.Stat(kept); err != nil {
			t.Errorf("%s removed", kept)
		}
	}
}

// A folder removed between its making and the claim (another run of the job finished and
// removed it) is a claim error that says so as fs.ErrNotExist: the driver tells it apart from
// other failures (a busy job, not an internal error).
func TestClaimOfARemovedFolder(t *testing.T) {
	j, _, err := Create(filepath.Join(t.TempDir(), "x.job"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(j.Path); err != nil { // in this test's own temp folder
		t.Fatal(err)
	}
	if _, _, err := j.TakeClaim(Me()); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), j.Path) {
		t.Errorf("claiming a removed folder: %v, want a not-exist error naming it", err)
	}
}

// The claim: a second live holder is refused with who holds it; a dead one (same host, process
// gone; an older restart of the same Slurm job; no heartbeat for StaleAfter) is taken over.
func TestClaim(t *testing.T) {
	j, _, _ := Create(filepath.Join(t.TempDir(), "x.job"))
	a := Me()
	if prev, _, err := j.TakeClaim(a); err != nil || prev != nil {
		t.Fatalf("first claim: %v %v", prev, err)
	}
	// A second holder in this same (live) process's place: refused.
	b := Me()
	_, _, err := j.TakeClaim(b)
	var busy *BusyError
	if !errors.As(err, &busy) || busy.Holder.Token != a.Token || !strings.Contains(err.Error(), "pid ") {
		t.Fatalf("second claim: %v", err)
	}
	if err := j.Beat(&a); err != nil {
		t.Fatal(err)
	}
	if err := j.Beat(&b); !errors.Is(err, ErrClaimLost) {
		t.Fatalf("a non-holder's heartbeat: %v", err)
	}
	j.ReleaseClaim(&b) // not b's: stays
	if !j.Holds(&a) {
		t.Fatal("a non-holder released the claim")
	}
	j.ReleaseClaim(&a)
	if _, ok, _ := j.ReadClaim(); ok {
		t.Fatal("release left the claim")
	}

	// A holder whose process has exited (same host).
	cmd := exec.Command("true")
	cmd.Run()
	gone := Me()
	gone.PID, gone.PIDStart = cmd.Process.Pid, "1"
	writeClaim(t, j, gone)
	prev, why, err := j.TakeClaim(b)
	if err != nil || prev == nil || prev.Token != gone.Token || !strings.Contains(why, "is gone") {
		t.Fatalf("dead process: %v %q %v", prev, why, err)
	}
	j.ReleaseClaim(&b)

	// Another host's holder: alive while it beats, dead after StaleAfter.
	remote := Me()
	remote.Host, remote.PID = "node-elsewhere", 1
	writeClaim(t, j, remote)
	if _, _, err := j.TakeClaim(b); !errors.As(err, &busy) || !strings.Contains(err.Error(), "node-elsewhere") {
		t.Fatalf("live remote holder: %v", err)
	}
	remote.Beat = time.Now().Add(-StaleAfter - time.Second)
	writeClaim(t, j, remote)
	if prev, why, err := j.TakeClaim(b); err != nil || prev == nil || !strings.Contains(why, "no heartbeat") {
		t.Fatalf("stale remote holder: %v %q %v", prev, why, err)
	}
	j.ReleaseClaim(&b)

	// An earlier run of the same Slurm job, on another node: Slurm restarted the job.
	remote.Beat, remote.SlurmJob, remote.RestartCount = time.Now(), "42", 0
	writeClaim(t, j, remote)
	c := b
	c.SlurmJob, c.RestartCount = "42", 1
	if prev, why, err := j.TakeClaim(c); err != nil || prev == nil || !strings.Contains(why, "restarted job 42") {
		t.Fatalf("restarted Slurm job: %v %q %v", prev, why, err)
	}
	// ... but a different Slurm job is refused.
	d := b
	d.SlurmJob, d.RestartCount = "43", 5
	if _, _, err := j.TakeClaim(d); !errors.As(err, &busy) || !strings.Contains(err.Error(), "Slurm job 42") {
		t.Fatalf("other Slurm job: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(j.Path, ".CLAIM.*")); len(left) > 0 {
		t.Errorf("claim temp files left: %v", left)
	}
}

func writeClaim(t *testing.T, j *JobDir, h Holder) {
	t.Helper()
	data, _ := json.Marshal(&h)
	if err := os.WriteFile(j.Claim(), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The heartbeat calls lost when the claim is found in another run's hands.
func TestHeartbeatNoticesALostClaim(t *testing.T) {
	j, _, _ := Create(filepath.Join(t.TempDir(), "x.job"))
	me := Me()
	if _, _, err := j.TakeClaim(me); err != nil {
		t.Fatal(err)
	}
	lost := make(chan error, 1)
	stop := j.Heartbeat(&me, 20*time.Millisecond, func(err error) { lost <- err })
	defer stop()
	// A loaded machine may delay the first beats: wait for one, up to a bound.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if h, _, _ := j.ReadClaim(); h.Beat.After(me.Started) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no heartbeat written in 5 s")
		}
	}
	other := Me()
	writeClaim(t, j, other)
	select {
	case err := <-lost:
		if !errors.Is(err, ErrClaimLost) || !strings.Contains(err.Error(), "now held by") {
			t.Fatalf("lost: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the heartbeat never noticed")
	}
	if h, _, _ := j.ReadClaim(); h.Token != other.Token {
		t.Fatal("the heartbeat overwrote the other run's claim")
	}
}
