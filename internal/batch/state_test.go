package batch

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"sync"
	"syscall"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/job"
)

// The content key: the same bytes under another name are the same work; one byte changed, or
// a setting that changes pixels, is other work; an operational setting is not.
func TestKey(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, "faces/a.jpg", "in/x.mp4")
	cfg := batchConfig(dir, "faces/*", "in/*", "out/{target_name}.mp4")
	key := func(c job.Config, target string) string {
		t.Helper()
		k, err := Key(c, Entry{Sources: []string{filepath.Join(dir, "faces/a.jpg")}, Target: filepath.Join(dir, target)})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	base := key(cfg, "in/x.mp4")
	data, _ := os.ReadFile(filepath.Join(dir, "in/x.mp4"))
	os.WriteFile(filepath.Join(dir, "in/copy of x.mkv"), data, 0o644)
	if k := key(cfg, "in/copy of x.mkv"); k != base {
		t.Errorf("a copy under another name has key %s, the original %s", k, base)
	}
	data[len(data)-1] ^= 1
	os.WriteFile(filepath.Join(dir, "in/x2.mp4"), data, 0o644)
	if k := key(cfg, "in/x2.mp4"); k == base {
		t.Errorf("one byte changed, same key %s", k)
	}
	pixels := cfg
	pixels.FaceDetectorScore += 0.1
	if k := key(pixels, "in/x.mp4"); k == base {
		t.Error("face_detector_score changed, same key")
	}
	op := cfg
	op.ExecutionThreadCount, op.SettleTime, op.MaxFailures, op.JobDir, op.OutputPattern = 7, 1, 9, "/elsewhere", "o/{index}.mkv"
	if k := key(op, "in/x.mp4"); k != base {
		t.Errorf("operational settings changed the key: %s, want %s", k, base)
	}
	// So is what the output file is besides its frames: its container and its audio.
	out := func(c job.Config, output string) string {
		k, err := Key(c, Entry{Sources: []string{filepath.Join(dir, "faces/a.jpg")}, Target: filepath.Join(dir, "in/x.mp4"), Output: output})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	if out(cfg, "o/x.mp4") == out(cfg, "o/x.mkv") || out(cfg, "o/x.mp4") != out(cfg, "elsewhere/x.mp4") {
		t.Error("the output's container is not in the key, or its folder is")
	}
	quiet := cfg
	quiet.OutputAudioVolume = 50
	if out(quiet, "o/x.mp4") == out(cfg, "o/x.mp4") {
		t.Error("output_audio_volume changed, same key")
	}
	// The source is part of the work.
	touch(t, dir, "faces/b.jpg")
	k, err := Key(cfg, Entry{Sources: []string{filepath.Join(dir, "faces/b.jpg")}, Target: filepath.Join(dir, "in/x.mp4")})
	if err != nil || k == base {
		t.Errorf("another source: key %s (%v), the same as with a.jpg", k, err)
	}
	if _, err := Key(cfg, Entry{Target: filepath.Join(dir, "in/gone.mp4")}); err == nil {
		t.Error("no error for a target that is gone")
	}
}

// A done record counts while its output is in place as written; removed or replaced, the work
// is due again.
func TestDone(t *testing.T) {
	dir := t.TempDir()
	d := Dir{filepath.Join(dir, "state")}
	if err := d.Make(); err != nil {
		t.Fatal(err)
	}
	e := Entry{Target: filepath.Join(dir, "in.mp4"), Output: filepath.Join(dir, "out.mp4")}
	if _, ok := d.Done("k1"); ok {
		t.Fatal("done before anything was recorded")
	}
	touch(t, dir, "out.mp4")
	if err := d.MarkDone("k1", e); err != nil {
		t.Fatal(err)
	}
	if r, ok := d.Done("k1"); !ok || r.Output != e.Output || r.Target != e.Target {
		t.Fatalf("done record %+v, %v", r, ok)
	}
	os.WriteFile(e.Output, []byte("another, longer output"), 0o644)
	if _, ok := d.Done("k1"); ok {
		t.Error("still done after its output was replaced by another file")
	}
	os.Remove(e.Output)
	if _, ok := d.Done("k1"); ok {
		t.Error("still done after its output was removed")
	}
	if err := d.MarkDone("k1", e); err == nil {
		t.Error("marked done without its output")
	}
}

// Failures recorded at once by several runs each get their own number, and are read back in
// order.
func TestAddFailureConcurrent(t *testing.T) {
	d := Dir{t.TempDir()}
	const n = 12
	nums := make([]int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var err error
			if nums[i], err = d.AddFailure("k", Failure{ExitStatus: 3, Reason: fmt.Sprint("run ", i)}); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	sort.Ints(nums)
	for i, got := range nums {
		if got != i+1 {
			t.Fatalf("failure numbers %v, want 1..%d each once", nums, n)
		}
	}
	fs := d.Failures("k", false)
	if len(fs) != n {
		t.Fatalf("%d failures read back, want %d", len(fs), n)
	}
	names, _ := filepath.Glob(filepath.Join(d.failures("k"), "*"))
	if len(names) != n {
		t.Errorf("failure folder holds %d files (temp files left?): %v", len(names), names)
	}
	if len(d.Failures("other", false)) != 0 {
		t.Error("failures for a key never recorded")
	}
}

// Tasks freezing one list at once all get the first's list; a list made for other patterns is
// refused.
func TestFrozen(t *testing.T) {
	dir := t.TempDir()
	d := Dir{filepath.Join(dir, "state")}
	if err := d.Make(); err != nil {
		t.Fatal(err)
	}
	cfg := batchConfig(dir, "", "in/*", "out/{target_name}.mp4")
	const n = 8
	got := make([][]Entry, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			// Each task sees another inbox (files arriving between their starts).
			var mine []Entry
			for j := 0; j <= i; j++ {
				mine = append(mine, Entry{Index: j, Target: fmt.Sprintf("in/%d.mp4", j), Output: fmt.Sprintf("out/%d.mp4", j)})
			}
			var err error
			if got[i], _, err = d.Frozen("array-7", cfg, func() ([]Entry, error) { return mine, nil }); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	for i := 1; i < n; i++ {
		if !reflect.DeepEqual(got[i], got[0]) {
			t.Fatalf("task %d got %d entries, task 0 %d: not one frozen list", i, len(got[i]), len(got[0]))
		}
	}
	// A later call (a restart) reads it without expanding.
	again, path, err := d.Frozen("array-7", cfg, func() ([]Entry, error) { t.Error("expanded again"); return nil, nil })
	if err != nil || !reflect.DeepEqual(again, got[0]) || path != filepath.Join(d.Path, "lists", "array-7.json") {
		t.Errorf("restart: %d entries at %s (%v)", len(again), path, err)
	}
	other := cfg
	other.OutputPattern = filepath.Join(dir, "elsewhere/{target_name}.mp4")
	if _, _, err := d.Frozen("array-7", other, func() ([]Entry, error) { return nil, nil }); err == nil {
		t.Error("a list frozen for other patterns was used")
	}
	if ents, _ := os.ReadDir(filepath.Join(d.Path, "lists")); len(ents) != 1 {
		t.Errorf("lists/ holds %d files, want the one list", len(ents))
	}
}

// The state folder: batch_dir, else .facefusion-batch in the output pattern's fixed folder.
func TestDirFor(t *testing.T) {
	for pattern, want := range map[string]string{
		"outbox/{target_name}.mp4":             "outbox/.facefusion-batch",
		"/srv/out/{source_name}/{target_name}": "/srv/out/.facefusion-batch",
		"out/day-{index}.mp4":                  "out/.facefusion-batch",
		"{target_name}.mp4":                    ".facefusion-batch",
		"out/x.mp4":                            "out/.facefusion-batch",
	} {
		c := job.Default()
		c.OutputPattern = pattern
		if got := DirFor(c).Path; got != want {
			t.Errorf("output pattern %s: batch folder %s, want %s", pattern, got, want)
		}
	}
	c := job.Default()
	c.OutputPattern, c.BatchDir = "out/{target_name}.mp4", "/var/batch"
	if got := DirFor(c).Path; got != "/var/batch" {
		t.Errorf("batch_dir ignored: %s", got)
	}
}

// A usage failure (exit 2) is the settings' fault and never counts towards quarantine.
func TestUsageFailuresDoNotCount(t *testing.T) {
	d := Dir{t.TempDir()}
	d.AddFailure("k", Failure{Reason: "a", ExitStatus: 3})
	d.AddFailure("k", Failure{Reason: "b", ExitStatus: 2})
	d.AddFailure("k", Failure{Reason: "c", ExitStatus: 1})
	if fs := d.Failures("k", true); len(fs) != 2 || fs[0].Reason != "a" || fs[1].Reason != "c" {
		t.Errorf("failures counting towards quarantine: %+v, want a and c in order", fs)
	}
	if fs := d.Failures("k", false); len(fs) != 3 {
		t.Errorf("every failure: %d, want 3", len(fs))
	}
}

// An entry that cannot be read still has a key of its own (its failures count towards its
// quarantine, not a shared one), and a failure without a key is refused.
func TestUnreadableKey(t *testing.T) {
	cfg := job.Default()
	a, b := Entry{Target: "in/a.mp4"}, Entry{Target: "in/b.mp4"}
	ka := UnreadableKey(cfg, a)
	if ka == UnreadableKey(cfg, b) || ka != UnreadableKey(cfg, a) || ka == "" {
		t.Error("unreadable entries' keys are not one per entry")
	}
	if _, err := (Dir{t.TempDir()}).AddFailure("", Failure{}); err == nil {
		t.Error("a failure without a key was recorded")
	}
}

// The summary follows the umask as the outputs do: colleagues and dashboards read it.
func TestSummaryFollowsUmask(t *testing.T) {
	s := &Summary{Path: filepath.Join(t.TempDir(), "report.json")}
	for umask, want := range map[int]os.FileMode{0o022: 0o644, 0o077: 0o600} {
		old := syscall.Umask(umask)
		s.save()
		syscall.Umask(old)
		st, err := os.Stat(s.Path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("umask %03o: the summary has mode %v, want %v", umask, st.Mode().Perm(), want)
		}
	}
}
