package metrics

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/rank"
)

// metricName is a metric of this package as a page writes it; facefusion_batch_* are
// internal/batch's (docs/batch.md).
var metricName = regexp.MustCompile(`facefusion_(?:[a-z0-9]+_?)*[a-z0-9]`)

// TestDocsObservability: docs/observability.md names every metric and label this package
// writes, live and at the end (a report with every part set), and no metric it no longer writes.
func TestDocsObservability(t *testing.T) {
	data, err := os.ReadFile("../../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	gpu := &rank.GPUStats{Available: true, Samples: 1}
	rep := &report.Report{Output: "out.mp4", OutputBytes: 1, PerRank: []report.Rank{{StageSeconds: map[string]float64{"swap": 1}, GPU: gpu}}}
	var names, labels []string
	o := Origin{SlurmJobID: "1", SlurmArrayTaskID: "2", User: "u"}
	for _, f := range append(Progress(o, "out.mp4", 1, []int64{1}, time.Now()), Report(o, rep, time.Now())...) {
		if !slices.Contains(names, f.GetName()) {
			names = append(names, f.GetName())
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if !slices.Contains(labels, l.GetName()) {
					labels = append(labels, l.GetName())
				}
			}
		}
	}
	var missing []string
	for _, n := range append(slices.Clone(names), labels...) {
		if !strings.Contains(page, "`"+n+"`") {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		t.Errorf("docs/observability.md does not name these metrics or labels (as `name`): %s", strings.Join(missing, ", "))
	}
	var gone []string
	for _, n := range metricName.FindAllString(page, -1) {
		if !strings.HasPrefix(n, "facefusion_batch_") && !slices.Contains(names, n) && !slices.Contains(gone, n) {
			gone = append(gone, n)
		}
	}
	if len(gone) > 0 {
		t.Errorf("docs/observability.md names metrics this package does not write: %s", strings.Join(gone, ", "))
	}
}
