package batch

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/job"
)

// touch writes each file (its folders made) with its own name as its contents.
func touch(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// batchConfig is a batch over dir with the given patterns (relative to dir).
func batchConfig(dir, source, target, output string) job.Config {
	c := job.Default()
	c.Processors = []string{"face_swapper"}
	if source == "" {
		c.Processors = nil
	} else {
		c.SourcePattern = filepath.Join(dir, source)
	}
	c.TargetPattern = filepath.Join(dir, target)
	c.OutputPattern = filepath.Join(dir, output)
	return c
}

// Every source with every target, sources outermost (FaceFusion's itertools.product(sources,
// targets)), each list sorted by name; the placeholders are FaceFusion's str.format names, with
// {target_extension} keeping its dot in lower case; hidden files and folders are skipped.
func TestExpand(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, "faces/bob.jpg", "faces/amy.png", "faces/.cal.jpg",
		"in/y.MP4", "in/x.mov", "in/.z.mp4.part", "in/sub.mp4/inner.mp4")
	cfg := batchConfig(dir, "faces/*", "in/*", "out/{index}-{source_name}-{target_name}{target_extension}")
	got, err := Expand(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := func(s string) string { return filepath.Join(dir, s) }
	want := []Entry{
		{0, []string{p("faces/amy.png")}, p("in/x.mov"), p("out/0-amy-x.mov"), ""},
		{1, []string{p("faces/amy.png")}, p("in/y.MP4"), p("out/1-amy-y.mp4"), ""},
		{2, []string{p("faces/bob.jpg")}, p("in/x.mov"), p("out/2-bob-x.mov"), ""},
		{3, []string{p("faces/bob.jpg")}, p("in/y.MP4"), p("out/3-bob-y.mp4"), ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("entries:\n%+v\nwant\n%+v", got, want)
	}

	// Without a swapper no source is needed: one entry a target, {source_name} empty.
	cfg = batchConfig(dir, "", "in/*", "out/{{{target_name}}}{source_name}{target_extension}")
	if got, err = Expand(cfg); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Output != p("out/{x}.mov") || got[0].Sources != nil || got[1].Index != 1 {
		t.Fatalf("entries without sources: %+v", got)
	}

	// A pattern matching nothing in a folder that exists is no entries (an empty inbox), except
	// a source pattern when the job swaps; a folder that is not there is an error (a typo, an
	// unmounted file system: cron must not read "nothing to do" every night).
	if got, err = Expand(batchConfig(dir, "", "in/*.nothing", "out/{target_name}")); err != nil || len(got) != 0 {
		t.Errorf("a target pattern matching nothing: %v, %v; want no entries", got, err)
	}
	if _, err = Expand(batchConfig(dir, "", "nowhere/*", "out/{target_name}")); err == nil || !strings.Contains(err.Error(), "folder") || !strings.Contains(err.Error(), "nowhere") {
		t.Errorf("a target pattern in a folder that does not exist: %v, want an error naming the folder", err)
	}
	if _, err = Expand(batchConfig(dir, "nobody/*", "in/*", "out/{target_name}")); err == nil || !strings.Contains(err.Error(), "source_pattern") {
		t.Errorf("a source pattern matching nothing with a swapper: %v, want an error naming source_pattern", err)
	}
	if _, err = Expand(batchConfig(dir, "", "in/[", "out/{target_name}")); err == nil || !strings.Contains(err.Error(), "target_pattern") {
		t.Errorf("a malformed pattern: %v, want an error naming target_pattern", err)
	}
}

// Two entries with one output are refused before any work, naming both; so are unknown
// placeholders and unbalanced braces.
func TestExpandRefuses(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, "faces/a.jpg", "faces/b.jpg", "in/x.mp4", "in/y.mp4", "in/x.mkv", "in2/x.mp4")
	for _, c := range []struct {
		source, target, output string
		want                   []string
	}{
		{"", "in/*", "out/clip.mp4", []string{"out/clip.mp4", "target " + filepath.Join(dir, "in/x.mkv"), "target " + filepath.Join(dir, "in/x.mp4")}},
		{"", "in/*", "out/clip.mp4", []string{"add {target_name} and {target_extension}"}},
		// The advice names the placeholder that tells the two apart, never one the pattern has.
		{"", "in/*", "out/{target_name}.mp4", []string{"out/x.mp4", "in/x.mkv", "in/x.mp4", "add {target_extension}"}},
		{"", "in/x.*", "out/{index}.mp4", nil},
		{"", "*/x.mp4", "out/{target_name}{target_extension}.out", []string{"one name and extension in two folders", "add {index}"}},
		{"faces/*", "in/x.mp4", "out/{target_name}.mp4", []string{"source " + filepath.Join(dir, "faces/a.jpg"), "source " + filepath.Join(dir, "faces/b.jpg"), "add {source_name}"}},
	} {
		_, err := Expand(batchConfig(dir, c.source, c.target, c.output))
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: %v", c.output, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: no error for one output from two entries", c.output)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nwant it to name %q", c.output, err, w)
			}
		}
		if strings.Contains(c.output, "{target_name}") && strings.Contains(err.Error(), "add {target_name}") {
			t.Errorf("%s: %v\nadvises a placeholder the pattern has", c.output, err)
		}
	}
	for pattern, want := range map[string]string{
		"out/{name}.mp4":          "unknown placeholder {name}",
		"out/{target_name.mp4":    "{ without its }",
		"out/target_name}.mp4":    "} without its {",
		"out/{Target_Name}.mp4":   "unknown placeholder {Target_Name}",
		"out/{ target_name }.mp4": "unknown placeholder { target_name }",
	} {
		if _, err := Expand(batchConfig(dir, "", "in/*", pattern)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", pattern, err, want)
		}
	}
}

// With job_dir, each entry's job folder is its own, also for outputs of one name in two
// folders (one target with several sources): one folder for both made the second entry busy
// (or "another job") while the first ran or had failed, e.g. in another task of an array.
func TestEntryJobDirsDistinct(t *testing.T) {
	cfg := job.Default()
	cfg.JobDir = "/scratch/jobs"
	a := entryConfig(cfg, Entry{Sources: []string{"faces/amy.jpg"}, Target: "in/t.mp4", Output: "out/amy/t.mp4"})
	b := entryConfig(cfg, Entry{Sources: []string{"faces/bob.jpg"}, Target: "in/t.mp4", Output: "out/bob/t.mp4"})
	if a.JobDir == b.JobDir {
		t.Errorf("two entries share the job folder %s", a.JobDir)
	}
	for _, c := range []job.Config{a, b} {
		if filepath.Dir(c.JobDir) != cfg.JobDir || !strings.Contains(filepath.Base(c.JobDir), "t.mp4") {
			t.Errorf("job folder %s: want one in %s named after its output", c.JobDir, cfg.JobDir)
		}
	}
	if again := entryConfig(cfg, Entry{Target: "in/t.mp4", Output: "out/amy/t.mp4"}); again.JobDir != a.JobDir {
		t.Errorf("one output, two job folders: %s and %s (a rerun must find its folder)", again.JobDir, a.JobDir)
	}
}

// An output the target pattern would match is refused before any work: in a nightly batch each
// run's outputs would be the next run's targets (a-swapped.mp4, then a-swapped-swapped.mp4, ...),
// and an output named as its target fails every night until quarantined.
func TestExpandRefusesOutputsAsTargets(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, "media/a.mp4", "in/b.mp4")
	for _, c := range []struct{ target, output string }{
		{"media/*.mp4", "media/{target_name}-swapped{target_extension}"},
		{"media/*", "media/{target_name}{target_extension}"},
		{"*/*.mp4", "out/{target_name}.mp4"},
	} {
		_, err := Expand(batchConfig(dir, "", c.target, c.output))
		if err == nil || !strings.Contains(err.Error(), "target_pattern") || !strings.Contains(err.Error(), "output") {
			t.Errorf("-t %s -o %s: %v, want a refusal naming target_pattern and the output", c.target, c.output, err)
		}
	}
	// Relative patterns are compared as the paths they name.
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(dir)
	c := job.Default()
	c.Processors, c.TargetPattern, c.OutputPattern = nil, "media/*.mp4", filepath.Join(dir, "media/{target_name}-x.mp4")
	if _, err := Expand(c); err == nil {
		t.Error("a relative target pattern and an absolute output pattern for one folder: not refused")
	}
	if got, err := Expand(batchConfig(dir, "", "media/*.mp4", "media/{target_name}.mkv")); err != nil || len(got) != 1 {
		t.Errorf("outputs beside the targets that the pattern does not match: %v, %v", got, err)
	}
}

// The batch's records (summary, metrics) may not land on its files or where its targets are
// found, and an output folder that is a link to the inbox is the inbox.
func TestRecordsAndLinkedInbox(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "in"), 0o755)
	os.WriteFile(filepath.Join(dir, "in/a.mp4"), []byte("a"), 0o644)
	if err := os.Symlink(filepath.Join(dir, "in"), filepath.Join(dir, "inlink")); err != nil {
		t.Fatal(err)
	}
	cfg := batchConfig(dir, "", "in/*.mp4", "inlink/{target_name}-x.mp4")
	if _, err := Expand(cfg); err == nil || !strings.Contains(err.Error(), "next run") {
		t.Errorf("outputs through a link into the inbox: %v, want them refused", err)
	}
	cfg = batchConfig(dir, "", "in/*.mp4", "out/{target_name}.mkv")
	os.MkdirAll(filepath.Join(dir, "out"), 0o755)
	entries, err := Expand(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ summary, metrics, want string }{
		{filepath.Join(dir, "sum.json"), filepath.Join(dir, "in/m.mp4"), "finds targets"},
		{filepath.Join(dir, "sum.json"), filepath.Join(dir, "out/a.mkv"), "a file of the batch"},
		{filepath.Join(dir, "sum.json"), filepath.Join(dir, "sum.json"), "summary"},
		{filepath.Join(dir, "nowhere/sum.json"), "", "does not exist"},
		{filepath.Join(dir, "sum.json"), filepath.Join(dir, "m.prom"), ""},
	} {
		c2 := cfg
		c2.ReportPath, c2.MetricsPath = c.summary, c.metrics
		err := checkRecords(c2, c.summary, entries)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("summary %s, metrics %s: %v, want %q", c.summary, c.metrics, err, c.want)
		}
	}
}

// Names in the inbox that are no file (a link to nothing, a link loop, a FIFO) are no entries,
// but are listed after them with why, not dropped without a word; folders and hidden names are
// left out as before.
func TestExpandUnusable(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, "in/good.mp4", "faces/amy.png")
	p := func(s string) string { return filepath.Join(dir, s) }
	os.Symlink(p("in/gone.mp4.src"), p("in/dangling.mp4"))
	os.Symlink(p("in/loop2.mp4"), p("in/loop1.mp4"))
	os.Symlink(p("in/loop1.mp4"), p("in/loop2.mp4"))
	syscall.Mkfifo(p("in/pipe.mp4"), 0o644)
	os.Symlink(p("faces/gone.png"), p("faces/bob.png"))
	os.Mkdir(p("in/folder.mp4"), 0o755)
	os.Symlink(p("nowhere"), p("in/.hidden.mp4"))

	got, err := Expand(batchConfig(dir, "faces/*", "in/*.mp4", "out/{source_name}-{target_name}{target_extension}"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{0, []string{p("faces/amy.png")}, p("in/good.mp4"), p("out/amy-good.mp4"), ""},
		{-1, nil, p("in/dangling.mp4"), "", `a link to nothing ("` + p("in/gone.mp4.src") + `" does not exist)`},
		{-1, nil, p("in/loop1.mp4"), "", "a link loop (a link that leads back to itself)"},
		{-1, nil, p("in/loop2.mp4"), "", "a link loop (a link that leads back to itself)"},
		{-1, nil, p("in/pipe.mp4"), "", "a FIFO (named pipe), not a regular file"},
		{-1, []string{p("faces/bob.png")}, "", "", `a link to nothing ("` + p("faces/gone.png") + `" does not exist)`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("entries:\n%+v\nwant\n%+v", got, want)
	}
	if d := describe(got[5]); d != "source "+p("faces/bob.png") {
		t.Errorf("a skipped source is described as %q", d)
	}
}
