package lustre

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/video"
)

// TestWriteModes: the job's own files are private whatever the umask; WriteReadable's follow
// the umask as a new output file does, also when they replace a private file.
func TestWriteModes(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		umask          int
		private, other os.FileMode
	}{{0o022, 0o600, 0o644}, {0o077, 0o600, 0o600}, {0o002, 0o600, 0o664}} {
		old := syscall.Umask(c.umask)
		errA := WriteAtomic(filepath.Join(dir, "manifest"), []byte("x"))
		errR := WriteReadable(filepath.Join(dir, "report.json"), []byte("x"))
		syscall.Umask(old)
		if errA != nil || errR != nil {
			t.Fatal(errA, errR)
		}
		for name, want := range map[string]os.FileMode{"manifest": c.private, "report.json": c.other} {
			st, err := os.Stat(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != want {
				t.Errorf("umask %03o: %s has mode %v, want %v", c.umask, name, st.Mode().Perm(), want)
			}
		}
	}
}

func TestWriteAtomicReplacesWholeAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "manifest")
	for i, s := range []string{"first", "second, longer", "third"} {
		write := WriteAtomic
		if i == 2 {
			write = WriteAdvisory // same replacement, without the fsyncs
		}
		if err := write(p, []byte(s)); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != s {
			t.Fatalf("read %q, want %q", b, s)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("%d entries in the folder, want only the file", len(ents))
	}
	if err := WriteAtomic(filepath.Join(dir, "no", "such", "folder"), []byte("x")); err == nil {
		t.Fatal("writing into a missing folder succeeded")
	}
}

func TestCreateMakesTheFolderAndSaysWhyNotStriped(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a", "b.job")
	j, created, err := Create(p)
	if err != nil || !created {
		t.Fatal(created, err)
	}
	if st, err := os.Stat(j.Path); err != nil || !st.IsDir() || st.Mode().Perm() != 0o755 || !j.Owned() {
		t.Fatal("job folder not created with its marker")
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".b.job.new-*")); len(leftovers) > 0 {
		t.Errorf("temp folders left: %v", leftovers)
	}
	if _, created, err := Create(p); err != nil || created {
		t.Errorf("the second Create: created %v, %v", created, err)
	}
	// lfs is not in Debian: Stripe says so with ErrNoLFS, which the driver logs once at debug.
	if note, err := j.Stripe(); !errors.Is(err, ErrNoLFS) || note != "" {
		t.Errorf("Stripe without lfs: %q, %v", note, err)
	}
	// The segments are in the container video's encoder writes, and the layout (what Remove
	// and --fresh may delete) knows their names, and the earlier layout's.
	if filepath.Dir(j.Segment(3)) != p || !strings.HasSuffix(j.Segment(3), "seg-000003"+video.SegmentExt) {
		t.Errorf("segment path %s", j.Segment(3))
	}
	// An MP4 output joined in parallel has MP4 segments (ForJob), in the layout too.
	format := func(j *JobDir) string { return video.SegmentFormat(j.SegmentContainer()) }
	times := video.Timeline{TimeBase: video.Rational{Num: 1, Den: 12800}, Step: 512, End: 5120}
	m := ForJob(p, video.SegmentExtFor("out.mp4", "libx264", times))
	if !strings.HasSuffix(m.Segment(3), "seg-000003"+video.MP4SegmentExt) || !strings.HasSuffix(m.SegmentTemp(3, 1, 2), video.MP4SegmentExt) ||
		format(m) == format(j) || ForJob(p, video.SegmentExtFor("out.mkv", "libx264", times)).Segment(3) != j.Segment(3) {
		t.Errorf("an MP4 output's segment %s, temp %s, format %q (NUT's %q)", m.Segment(3), m.SegmentTemp(3, 1, 2), format(m), format(j))
	}
	for _, name := range []string{filepath.Base(j.Segment(3)), filepath.Base(j.SegmentTemp(3, 1, 2)), filepath.Base(m.Segment(3)), filepath.Base(m.SegmentTemp(3, 1, 2)), "seg-000003.mkv", ".seg-000003.rank1.a2.part.mkv"} {
		if !ours(name) {
			t.Errorf("%s is not in the job folder's layout", name)
		}
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if _, _, err := Create(filepath.Join(file, "x")); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("a job folder under a file: error %v", err)
	}
}

// The job's one progress file reads back what rank 0 wrote; none is not an error.
func TestProgressRoundTrip(t *testing.T) {
	j := &JobDir{Path: t.TempDir()}
	if frames, ok, err := j.ReadProgress(); ok || err != nil || frames != nil {
		t.Fatalf("no progress file: %v %v %v", frames, ok, err)
	}
	want := []int64{24, 0, 40}
	if err := j.WriteProgress(want); err != nil {
		t.Fatal(err)
	}
	frames, ok, err := j.ReadProgress()
	if !ok || err != nil || len(frames) != 3 || frames[0] != 24 || frames[1] != 0 || frames[2] != 40 {
		t.Fatalf("read back %v %v %v, want %v", frames, ok, err, want)
	}
	os.WriteFile(j.Progress(), []byte("12"), 0o644) // a torn or foreign file is named
	if _, _, err := j.ReadProgress(); err == nil || !strings.Contains(err.Error(), j.Progress()) {
		t.Fatalf("a bad progress file: %v", err)
	}
}

// The job folder names the segments of every container the video package writes them in, the
// default first: its list is video's, held as plain names so that the folder needs no media.
func TestSegmentExtsAreVideos(t *testing.T) {
	if !slices.Equal(SegmentExts, video.SegmentExts) || SegmentExts[0] != video.SegmentExt {
		t.Errorf("the job folder's segment containers %v, video's %v (default %s)", SegmentExts, video.SegmentExts, video.SegmentExt)
	}
}
