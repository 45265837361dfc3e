package metrics

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The live file, with a caller's families added (as a batch adds its own), parses with
// Prometheus's own parser; a family both write is one family; the write leaves no temp file.
func TestWriteProgressWithExtraFamilies(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "facefusion.prom")
	extra := NewSet(Origin{}, "inbox")
	extra.Gauge("facefusion_batch_targets", "targets of the batch by state", 2, "state", "done")
	extra.Gauge("facefusion_batch_targets", "targets of the batch by state", 1, "state", "failed")
	extra.Gauge(nameRunning, helpRunning, 1) // the same family as the job's: merged
	if err := Write(path, Progress(Origin{}, "out.mp4", 40, []int64{12, 9}, time.Unix(1700000000, 0)), extra.Families()); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := fams[nameDone].Metric; len(got) != 2 || got[1].Gauge.GetValue() != 9 || got[1].Label[1].GetValue() != "1" {
		t.Errorf("frames done: %v", got)
	}
	if fams[namePlanned].Metric[0].Gauge.GetValue() != 40 || fams[nameUpdated].Metric[0].Gauge.GetValue() != 1700000000 {
		t.Errorf("planned %v, updated %v", fams[namePlanned], fams[nameUpdated])
	}
	if len(fams["facefusion_batch_targets"].Metric) != 2 || len(fams[nameRunning].Metric) != 2 {
		t.Errorf("extra families: %v; running: %v", fams["facefusion_batch_targets"], fams[nameRunning])
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files beside the metrics file: %v", ents)
	}
}

// TestWriteMode: node_exporter reads the textfile as its own user, so the file gets the mode
// the umask gives a new file, as the output does.
func TestWriteMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "facefusion.prom")
	for umask, want := range map[int]os.FileMode{0o022: 0o644, 0o077: 0o600} {
		old := syscall.Umask(umask)
		err := Write(path, Progress(Origin{}, "out.mp4", 1, nil, time.Now()))
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != want {
			t.Errorf("umask %03o: %v, %v; want mode %v", umask, st, err, want)
		}
	}
}

// TestOriginFromEnv: an array task is labelled with its array's job id and its task id, as
// squeue shows it; a plain job with its own id; the user is always named.
func TestOriginFromEnv(t *testing.T) {
	t.Setenv("SLURM_JOB_ID", "101")
	t.Setenv("SLURM_ARRAY_JOB_ID", "")
	t.Setenv("SLURM_ARRAY_TASK_ID", "")
	if o := OriginFromEnv(); o.SlurmJobID != "101" || o.SlurmArrayTaskID != "" || o.User == "" {
		t.Errorf("plain job: %+v", o)
	}
	t.Setenv("SLURM_ARRAY_JOB_ID", "100")
	t.Setenv("SLURM_ARRAY_TASK_ID", "3")
	if o := OriginFromEnv(); o.SlurmJobID != "100" || o.SlurmArrayTaskID != "3" {
		t.Errorf("array task: %+v", o)
	}
	for _, name := range []string{"SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID"} {
		os.Unsetenv(name)
	}
	fams := Progress(OriginFromEnv(), "out.mp4", 1, nil, time.Now())
	for _, l := range fams[0].Metric[0].Label {
		if strings.HasPrefix(l.GetName(), "slurm_") {
			t.Errorf("outside Slurm, label %s=%q", l.GetName(), l.GetValue())
		}
	}
}
