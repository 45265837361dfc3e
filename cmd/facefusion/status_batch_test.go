package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/batch"
	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// goldenBatch writes a batch as batch-run leaves it: an inbox of five targets, one done, one
// failed once, one quarantined after three failures, one running (a live claim from another
// node) and one pending. It returns the batch's job file and its folder.
func goldenBatch(t *testing.T) (toml string, d batch.Dir) {
	t.Helper()
	dir := t.TempDir()
	for _, sub := range []string{"inbox", "outbox"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		if err := os.WriteFile(filepath.Join(dir, "inbox", name+".mp4"), []byte("clip "+name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	toml = filepath.Join(dir, "batch.toml")
	body := "processors = [\"none\"]\ntarget_pattern = \"" + dir + "/inbox/*.mp4\"\noutput_pattern = \"" + dir + "/outbox/{target_name}{target_extension}\"\nmax_failures = 3\n"
	if err := os.WriteFile(toml, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := job.ParseBatch([]string{"--config", toml})
	if err != nil {
		t.Fatal(err)
	}
	d = batch.DirFor(cfg)
	if err := d.Make(); err != nil {
		t.Fatal(err)
	}
	entry := func(name string) batch.Entry {
		return batch.Entry{Target: filepath.Join(dir, "inbox", name+".mp4"), Output: filepath.Join(dir, "outbox", name+".mp4")}
	}
	a := entry("a")
	if err := os.WriteFile(a.Output, []byte("swapped a"), 0o644); err != nil {
		t.Fatal(err)
	}
	key, err := batch.Key(cfg, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.MarkDone(key, a); err != nil {
		t.Fatal(err)
	}
	// The done record's time is the clock's: goldenTime instead, for the golden file.
	rec := filepath.Join(d.Path, "done", key+".json")
	done, _ := d.Done(key)
	done.Finished = goldenTime
	writeJSON(t, rec, done)
	fail := func(key, name string, exit int, why string) {
		e := entry(name)
		if _, err := d.AddFailure(key, batch.Failure{Target: e.Target, Output: e.Output, ExitStatus: exit, Reason: why, Time: goldenTime, Host: "node03"}); err != nil {
			t.Fatal(err)
		}
	}
	fail("k-b", "b", fault.ExitInput, "target: ffprobe: invalid data")
	for range 3 {
		fail("k-d", "d", fault.ExitInternal, "ffmpeg crashed")
	}
	jd := &lustre.JobDir{Path: lustre.DefaultPath(entry("e").Output)}
	if err := os.Mkdir(jd.Path, 0o755); err != nil {
		t.Fatal(err)
	}
	h := lustre.Me()
	h.Host, h.PID, h.SlurmJob = "node07", 4242, "4711"
	if _, _, err := jd.TakeClaim(h); err != nil {
		t.Fatal(err)
	}
	// The last run's summary, which lists every entry: the folder alone knows the pending one.
	sum := batch.Summary{Version: 1, Outcome: batch.OutcomeStopped, ExitStatus: fault.ExitCheckpointed, Started: goldenTime.Add(-time.Hour),
		Finished: goldenTime, Host: "node03", BatchDir: d.Path, TargetPattern: cfg.TargetPattern, OutputPattern: cfg.OutputPattern}
	for i, name := range []string{"a", "b", "c", "d", "e"} {
		e := entry(name)
		e.Index = i
		sum.Entries = append(sum.Entries, batch.Result{Entry: e, State: batch.NotRun})
	}
	writeJSON(t, filepath.Join(d.Path, "report.json"), sum)
	return toml, d
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGoldenStatusBatch: status of a batch, by its folder (entries from its last summary) and
// by its job file (the patterns expanded),
// in the process and through the binary. Masked: the temporary folder and the claim's times.
func TestGoldenStatusBatch(t *testing.T) {
	toml, d := goldenBatch(t)
	tmp := filepath.Dir(toml)
	masks := []testenv.Mask{testenv.Literal(tmp, "<TMP>"),
		{Pattern: `started [0-9T:-]+Z, last heartbeat [0-9T:-]+Z`, With: "started <TIME>, last heartbeat <TIME>"}}
	for name, arg := range map[string]string{"status-batch-folder": d.Path, "status-batch-toml": toml} {
		var out bytes.Buffer
		if err := cmdStatus([]string{arg}, &out); err != nil {
			t.Fatal(err)
		}
		testenv.Golden(t, name, out.Bytes(), masks...)
		r := clitest.Run(t, "status", arg)
		if r.Code != 0 || r.Stderr != "" {
			t.Fatalf("status %s: exit %d, stderr:\n%s", arg, r.Code, r.Stderr)
		}
		testenv.Golden(t, name, []byte(r.Stdout), masks...)
	}
	// The outbox names its batch folder.
	r := clitest.Run(t, "status", filepath.Join(tmp, "outbox"))
	if r.Code != fault.ExitInput || !strings.Contains(r.Stderr, d.Path+": give one of those") {
		t.Errorf("status OUTBOX: exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
}
