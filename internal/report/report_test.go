package report

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/facefusion-hpc/facefusion/lustre"
)

// A version 1 report (written before reports recorded failures) still reads, field for field.
func TestReadReportVersion1(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.mp4")
	v1 := `{"version": 1, "outcome": "complete", "output": "` + out + `", "target": "in.mp4", "job_dir": "` + out + `.job",
  "frame_start": 0, "frame_end": 150, "chunks": 2, "attempts": [{"started": "2026-11-01T10:00:00Z", "ranks": 2, "planned_chunks": 2,
  "outcome": "complete", "updated": "2026-11-01T10:00:05Z"}], "seconds": 5, "attempt_seconds": 5, "finished": "2026-11-01T10:00:05Z",
  "fingerprint": {"chunk_frames": "96"}}`
	os.WriteFile(Path(out), []byte(v1), 0o644)
	r, ok, err := Read(out)
	if err != nil || !ok || r.Version != 1 || r.Outcome != lustre.Complete || r.FrameEnd != 150 || len(r.Attempts) != 1 || r.Attempts[0].Ranks != 2 ||
		r.Seconds != 5 || r.Fingerprint["chunk_frames"] != "96" || r.PerRank != nil {
		t.Errorf("version 1: %+v, %v, %v", r, ok, err)
	}
	if Replaceable(Path(out)) {
		t.Error("a finished job's report is replaceable")
	}
}

// Only a report of a run that did not finish may be replaced by a run that does not force.
func TestReplaceable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(data), 0o644)
		return p
	}
	for _, c := range []struct {
		path string
		want bool
	}{
		{filepath.Join(dir, "none.json"), true},
		{write("failed.json", `{"version": 2, "outcome": "failed", "output": "x.mp4", "exit_status": 3}`), true},
		{write("stopped.json", `{"version": 2, "outcome": "checkpointed", "output": "x.mp4", "exit_status": 75}`), true},
		{write("complete.json", `{"version": 2, "outcome": "complete", "output": "x.mp4"}`), false},
		{write("notes.json", `my notes`), false},
		{write("other.json", `{"outcome": "failed"}`), false}, // JSON, but not a report of this program
	} {
		if got := Replaceable(c.path); got != c.want {
			t.Errorf("%s: replaceable %v, want %v", filepath.Base(c.path), got, c.want)
		}
	}
	link := filepath.Join(dir, "dangling.json")
	os.Symlink(filepath.Join(dir, "nowhere"), link)
	if Replaceable(link) {
		t.Error("a dangling link is replaceable")
	}
}

// TestIdentitySumsAnyOrder: the identity sums are exact, so faces (and ranks) added in any
// order give the same sums and means, with similarities whose float64 sum depends on the order.
func TestIdentitySumsAnyOrder(t *testing.T) {
	sims := []float64{0.1, 0.2, 0.3} // 0.1+0.2+0.3 ≠ 0.3+0.2+0.1 in float64
	sum := func(order []int) lustre.IdentitySums {
		s := lustre.IdentitySums{}
		for _, i := range order {
			f := lustre.IdentityFixed(sims[i])
			s.Add(lustre.IdentitySums{Recognizer: "fr_feature", Every: 10, Faces: 1, After: f, Before: -f, ToTarget: f / 2})
		}
		return s
	}
	fwd, rev := []int{}, []int{}
	for i := range sims {
		fwd, rev = append(fwd, i), append(rev, len(sims)-1-i)
	}
	// Floats first: the order changes the sum (else this test proves nothing).
	var a, b float64
	for i := range fwd {
		a, b = a+sims[fwd[i]], b+sims[rev[i]]
	}
	if a == b {
		t.Fatalf("the float64 sums agree (%v): choose similarities whose sum depends on the order", a)
	}
	s1, s2 := sum(fwd), sum(rev)
	if s1 != s2 || *Means(s1) != *Means(s2) {
		t.Errorf("sums %+v and %+v, means %+v and %+v: the order changed them", s1, s2, *Means(s1), *Means(s2))
	}
	if m := Means(s1); m.Faces != 3 || m.After != 0.2 || m.Before != -0.2 || m.ToTarget != 0.1 || m.Recognizer != "fr_feature" {
		t.Errorf("means %+v, want 3 faces, after 0.2, before −0.2, to_target 0.1", *m)
	}
}

// TestWriteToFollowsUmask: the report gets the mode a new output gets, so that colleagues and
// monitoring, as other users, read it where the umask lets them.
func TestWriteToFollowsUmask(t *testing.T) {
	path := Path(filepath.Join(t.TempDir(), "out.mp4"))
	for umask, want := range map[int]os.FileMode{0o022: 0o644, 0o077: 0o600} {
		old := syscall.Umask(umask)
		err := (&Report{Version: Version, Output: "out.mp4"}).WriteTo(path)
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("umask %03o: the report has mode %v, want %v", umask, st.Mode().Perm(), want)
		}
	}
}
