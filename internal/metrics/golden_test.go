package metrics

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// goldenNow is the fixed clock of the golden files (their last-update sample).
var goldenNow = time.Unix(1_790_000_000, 500_000_000)

// goldenReport is a finished 2-rank job's report: rank 0 with a GPU sampled, rank 1 on the CPU.
func goldenReport() *report.Report {
	stages := func(scale float64) map[string]float64 {
		return map[string]float64{"decode": 1.5 * scale, "swap": 20.25 * scale, "encode": 3 * scale, "join": 0.5 * scale}
	}
	return &report.Report{Version: report.Version, Outcome: lustre.Complete, Output: "/data/clips/out.mp4", Target: "/data/in.mp4",
		FrameStart: 0, FrameEnd: 100, Chunks: 4, Attempts: make([]lustre.Attempt, 2), Seconds: 95.5, LastSeconds: 40.25,
		Ranks: 2, OutputBytes: 1_234_567,
		PerRank: []report.Rank{
			{Rank: 0, Frames: 50, FacesFound: 52, FacesSwapped: 50, FacesEnhanced: 3, FramesPerSecond: 1.25, StageSeconds: stages(1),
				GPU: &rank.GPUStats{Available: true, MemoryTotalBytes: 85_520_809_984, Samples: 40, UtilizationMean: 0.625, UtilizationMax: 0.98,
					MemoryUsedMaxBytes: 3_221_225_472, PowerMeanWatts: 310.5, PowerMaxWatts: 402, TemperatureMaxC: 61}},
			{Rank: 1, Frames: 50, FacesFound: 49, FacesSwapped: 49, FramesPerSecond: 1.2, StageSeconds: stages(2),
				GPU: &rank.GPUStats{Reason: "CPU execution: execution_providers names no GPU provider"}},
		}}
}

// TestGoldenMetrics: the textfile's bytes as node_exporter reads them (names, help, types,
// labels, sort order, number formats), for a finished run and for a running one with a batch's
// families added. Nothing is masked: the clock is fixed. Each file parses with Prometheus's
// own parser.
func TestGoldenMetrics(t *testing.T) {
	// A job array's task at the end; the live file of a run outside Slurm (no Slurm labels).
	task, here := Origin{SlurmJobID: "4242", SlurmArrayTaskID: "7", User: "alice"}, Origin{User: "alice"}
	batch := NewSet(here, "inbox")
	batch.Gauge("facefusion_batch_targets", "targets of the batch by state", 2, "state", "done")
	batch.Gauge("facefusion_batch_targets", "targets of the batch by state", 1, "state", "failed")
	for _, c := range []struct {
		name  string
		lists [][]*dto.MetricFamily
	}{
		{"metrics-report", [][]*dto.MetricFamily{Report(task, goldenReport(), goldenNow)}},
		{"metrics-progress", [][]*dto.MetricFamily{Progress(here, "out.mp4", 100, []int64{12, 9, 0}, goldenNow), batch.Families()}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "facefusion.prom")
			if err := Write(path, c.lists...); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			testenv.Golden(t, c.name, data)
			p := expfmt.NewTextParser(model.UTF8Validation)
			if _, err := p.TextToMetricFamilies(bytes.NewReader(data)); err != nil {
				t.Errorf("the textfile does not parse: %v", err)
			}
		})
	}
}
