package job

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// batch-run's -s, -t and -o are its patterns; its own keys come from flags, a TOML job file
// and facefusion.ini's [patterns], flags winning.
func TestParseBatch(t *testing.T) {
	dir := t.TempDir()
	ini := filepath.Join(dir, "facefusion.ini")
	os.WriteFile(ini, []byte("[patterns]\nsource_pattern = ini/*.jpg\ntarget_pattern = ini/*.mp4\noutput_pattern = ini/{target_name}.mp4\n"), 0o644)
	file := filepath.Join(dir, "batch.toml")
	os.WriteFile(file, []byte("target_pattern = \"toml/*.mp4\"\nsettle_time = 5\nmax_failures = 2\nbatch_dir = \"state\"\n"), 0o644)
	c, err := ParseBatch([]string{"--config-path", ini, "--config", file, "-o", "flag/{index}{target_extension}", "--max-failures", "4"})
	if err != nil {
		t.Fatal(err)
	}
	want := Batch{SourcePattern: "ini/*.jpg", TargetPattern: "toml/*.mp4", OutputPattern: "flag/{index}{target_extension}", BatchDir: "state", SettleTime: 5, MaxFailures: 4}
	if c.Batch != want {
		t.Errorf("batch keys %+v, want %+v", c.Batch, want)
	}
	if len(c.SourcePaths) != 0 || c.TargetPath != "" || c.OutputPath != "" {
		t.Errorf("batch-run's -s, -t, -o set run's paths: %+v", c)
	}
	d, err := ParseBatch([]string{"-s", "f/*.jpg", "-t", "in/*.mp4", "-o", "out/{target_name}.mp4"})
	if err != nil {
		t.Fatal(err)
	}
	if d.SettleTime != 60 || d.MaxFailures != 3 || d.BatchDir != "" || d.SourcePattern != "f/*.jpg" {
		t.Errorf("defaults: %+v, want settle_time 60, max_failures 3", d.Batch)
	}
}

// Each command refuses the other's per-target keys, naming them, from flags, a job file and
// facefusion.ini alike.
func TestBatchAndRunKeysRefused(t *testing.T) {
	dir := t.TempDir()
	runFile := filepath.Join(dir, "run.toml")
	os.WriteFile(runFile, []byte("target_path = \"t.mp4\"\n"), 0o644)
	batchFile := filepath.Join(dir, "batch.toml")
	os.WriteFile(batchFile, []byte("target_pattern = \"in/*.mp4\"\n"), 0o644)
	ini := filepath.Join(dir, "facefusion.ini")
	os.WriteFile(ini, []byte("[patterns]\ntarget_pattern = in/*.mp4\n"), 0o644)
	run := []string{"--processors", "none", "-t", "t.mp4", "-o", "o.mp4"}
	batch := []string{"--processors", "none", "-t", "in/*.mp4", "-o", "out/{target_name}.mp4"}
	for _, c := range []struct {
		batch bool
		args  []string
		want  string
	}{
		{false, append(run, "--target-pattern", "in/*.mp4"), "--target-pattern is a flag of facefusion batch-run"},
		{false, append(run, "--settle-time", "3"), "--settle-time is a flag of facefusion batch-run"},
		{false, append([]string{"--config", batchFile}, run...), "target_pattern is set"},
		{false, append([]string{"--config-path", ini}, run...), "target_pattern is set"},
		{true, append(batch, "--target-path", "t.mp4"), "--target-path is run's flag"},
		{true, append(batch, "--output-path=o.mp4"), "--output-path=o.mp4 is run's flag"},
		{true, append([]string{"--config", runFile}, batch...), "source_paths, target_path and output_path are run's keys"},
		{true, []string{"--processors", "none", "-o", "out/{target_name}.mp4"}, "target_pattern: give the targets"},
		{true, []string{"-t", "in/*", "-o", "out/{target_name}.mp4"}, "source_pattern: give the source images"},
		{true, []string{"--processors", "none", "-t", "in/*"}, "output_pattern: give where"},
		{true, append(batch[:4:4], "-o", "out/{nope}.mp4"), "output_pattern: unknown placeholder {nope}"},
		{true, append(batch, "--settle-time", "-1"), "settle_time: -1 is negative"},
		{true, append(batch, "--max-failures", "0"), "max_failures: 0"},
	} {
		var err error
		if c.batch {
			_, err = ParseBatch(c.args)
		} else {
			_, err = Parse(c.args)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("batch-run %v %v: %v\nwant %q", c.batch, c.args, err, c.want)
		}
	}
}

// ExpandOutput is Python's str.format over FaceFusion's names.
func TestExpandOutput(t *testing.T) {
	vals := map[string]string{"index": "3", "source_name": "amy", "target_name": "clip {1}", "target_extension": ".mp4"}
	for pattern, want := range map[string]string{
		"out/{target_name}{target_extension}":     "out/clip {1}.mp4",
		"{index}-{source_name}-{target_name}.mkv": "3-amy-clip {1}.mkv",
		"{{literal}}/{{{index}}}":                 "{literal}/{3}",
		"out/{index}{index}":                      "out/33",
		"no placeholders.mp4":                     "no placeholders.mp4",
	} {
		if got, err := ExpandOutput(pattern, vals); err != nil || got != want {
			t.Errorf("%s: %q (%v), want %q", pattern, got, err, want)
		}
	}
	for _, bad := range []string{"{target}", "{", "}", "a{index", "{0}", "{}"} {
		if got, err := ExpandOutput(bad, vals); err == nil {
			t.Errorf("%s: %q, want an error", bad, got)
		}
	}
}

// KindOf tells a batch job file from a run's.
func TestKindOf(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string]string{
		"target_pattern = \"in/*.mp4\"\noutput_pattern = \"out/{target_name}.mp4\"\n": "batch-run",
		"target_path = \"t.mp4\"\noutput_path = \"o.mp4\"\n":                          "run",
		"": "run",
	} {
		p := filepath.Join(dir, "job.toml")
		os.WriteFile(p, []byte(text), 0o644)
		if got, err := KindOf(p); err != nil || got != want {
			t.Errorf("%q: %q (%v), want %s", text, got, err, want)
		}
	}
	os.WriteFile(filepath.Join(dir, "bad.toml"), []byte("target_patern = \"x\"\n"), 0o644)
	if _, err := KindOf(filepath.Join(dir, "bad.toml")); err == nil || !strings.Contains(err.Error(), "target_patern") {
		t.Errorf("an unknown key: %v, want an error naming it", err)
	}
	if _, err := KindOf(filepath.Join(dir, "none.toml")); err == nil {
		t.Error("no error for a missing file")
	}
}

// The batch keys are operational: a target's job fingerprint does not change with the patterns
// that found it.
func TestBatchKeysOperational(t *testing.T) {
	a, b := Default(), Default()
	b.Batch = Batch{SourcePattern: "x", TargetPattern: "y", OutputPattern: "z", BatchDir: "d", SettleTime: 1, MaxFailures: 9}
	if !reflect.DeepEqual(a.Settings(), b.Settings()) {
		t.Error("a batch key is in the job fingerprint")
	}
}
