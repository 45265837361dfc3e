package metrics

import (
	"os"
	"path/filepath"
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
	extra := NewSet("inbox")
	extra.Gauge("facefusion_batch_targets", "targets of the batch by state", 2, "state", "done")
	extra.Gauge("facefusion_batch_targets", "targets of the batch by state", 1, "state", "failed")
	extra.Gauge(nameRunning, helpRunning, 1) // the same family as the job's: merged
	if err := Write(path, Progress("out.mp4", 40, []int64{12, 9}, time.Unix(1700000000, 0)), extra.Families()); err != nil {
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
