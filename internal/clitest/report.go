package clitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/facefusion-hpc/facefusion/internal/driver"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// ReadReport reads the run report at path.
func ReadReport(t *testing.T, path string) *report.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("run report: %v", err)
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("run report %s: %v\n%s", path, err, b)
	}
	return &r
}

// CheckReportEnd asserts the report beside out says how the run ended: its outcome, the exit
// status the process exited with, and (for a failure) the error line the process printed.
func CheckReportEnd(t *testing.T, out string, r Result, outcome string) *report.Report {
	t.Helper()
	rep := ReadReport(t, report.Path(out))
	if rep.Version != report.Version || rep.Outcome != outcome || rep.ExitStatus != r.Code || rep.Output != out {
		t.Errorf("report of %s: version %d, outcome %q, exit_status %d, output %q; want %d, %q, the process's %d, %q",
			out, rep.Version, rep.Outcome, rep.ExitStatus, rep.Output, report.Version, outcome, r.Code, out)
	}
	if (r.Code == 0) != (rep.Error == "") || (rep.Error != "" && !strings.Contains(r.Stderr, rep.Error)) {
		t.Errorf("report of %s: error %q, the process printed:\n%s", out, rep.Error, r.Stderr)
	}
	return rep
}

// CheckRunReport validates a finished run's report field by field against what the run did:
// the output file (size, sha256, frames), the ranks, the faces and the stages.
func CheckRunReport(t *testing.T, rep *report.Report, target, out string, sources []string, ranks, frames int, enhanced bool) {
	t.Helper()
	CheckOutputHash(t, rep, out)
	host, _ := os.Hostname()
	if rep.Target != target || !slices.Equal(rep.Sources, sources) || rep.FrameEnd-rep.FrameStart != frames ||
		len(rep.Fingerprint) == 0 || len(rep.Attempts) != 1 || rep.Attempts[0].Ranks != ranks ||
		rep.Ranks != ranks || !slices.Equal(rep.Hosts, []string{host}) || rep.Slurm != nil {
		t.Errorf("report: target %q sources %v frames %d fingerprint %d keys attempts %v ranks %d hosts %v slurm %v; want %q %v %d, one attempt on %d ranks, [%s], no Slurm",
			rep.Target, rep.Sources, rep.FrameEnd-rep.FrameStart, len(rep.Fingerprint), rep.Attempts, rep.Ranks, rep.Hosts, rep.Slurm,
			target, sources, frames, ranks, host)
	}
	if len(rep.PerRank) != ranks || rep.Totals == nil {
		t.Fatalf("report: %d per-rank entries, totals %v; want %d and totals", len(rep.PerRank), rep.Totals, ranks)
	}
	sumFrames, sumSwapped, cpus := 0, 0, 0
	// An MP4 or MOV output of the default encoder is joined by every rank.
	parallel, _ := video.ParallelContainer(out, "")
	for i, r := range rep.PerRank {
		sumFrames += r.Frames
		sumSwapped += r.FacesSwapped
		var keys []string
		for k := range r.StageSeconds {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		want := slices.Clone(driver.ReportStages)
		sort.Strings(want)
		if r.Rank != i || r.Host != host || r.Frames <= 0 || r.FacesFound < r.FacesSwapped || r.FramesPerSecond <= 0 || !slices.Equal(keys, want) {
			t.Errorf("rank %d: %+v", i, r)
		}
		for _, st := range driver.ReportStages {
			v := r.StageSeconds[st]
			// These runs name face_swapper, and face_enhancer where enhanced: no other
			// processor's stage runs.
			ran := !pipeline.ProcessorStage(st) || st == "swap" || st == "enhance" && enhanced
			if st == "identity" { // only where the rank measured a face
				ran = r.Identity != nil && r.Identity.Faces > 0
			}
			if st == "join" || st == "plan" {
				ran = i == 0 // rank 0's join and plan
			}
			if st == "join" && parallel {
				ran = true // every rank's share of the parallel join
			}
			if st == "checkpoint" {
				ran = r.Chunks > 0 // a rank whose frames all went to others' chunks records none
			}
			if st == "hash" { // rank 0's part of the output's hash, and a rank's with a block
				ran = i == 0 || hashBlocks(rep.OutputBytes, ranks, i) > 0
			}
			if st == "hash" && parallel {
				// The parallel join hashed the output as it copied it (its time is the join's):
				// no rank read the output back.
				ran = false
			}
			if ran != (v > 0) || v < 0 {
				t.Errorf("rank %d: stage %s: %g s (ran: %v)", i, st, v, ran)
			}
		}
		if c := r.CPU; c == nil || c.CPUs < 1 || c.Workers < 1 || c.FFmpegThreads < 0 || c.FFmpegThreads > c.CPUs {
			t.Errorf("rank %d: cpu budget %+v", i, r.CPU)
		} else {
			cpus += c.CPUs
		}
		if r.GPU == nil || r.GPU.Available || r.GPU.Reason == "" {
			t.Errorf("rank %d: gpu %+v, want unavailable with a reason (CPU providers)", i, r.GPU)
		}
	}
	if online := runtime.NumCPU(); cpus > max(online, ranks) {
		t.Errorf("the ranks' CPU budgets add up to %d on a node of %d CPUs", cpus, online)
	}
	if sumFrames != frames || rep.Totals.Frames != frames || rep.Totals.FacesSwapped != sumSwapped || sumSwapped == 0 || rep.Totals.FacesEnhanced != 0 {
		t.Errorf("per-rank frames add up to %d, totals %+v; want %d frames and faces swapped", sumFrames, rep.Totals, frames)
	}
}

// CheckOutputHash asserts the report's output hash is the one coreutils computes from the file
// (testenv.BlockHash: what a user runs), with the block the report names, and its size.
func CheckOutputHash(t *testing.T, rep *report.Report, out string) {
	t.Helper()
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OutputHashBlock != 16<<20 || rep.OutputBytes != st.Size() || rep.OutputSHA256 != "" ||
		rep.OutputBlocksSHA256 != testenv.BlockHash(t, out, rep.OutputHashBlock) {
		t.Errorf("report of %s: %d bytes, block hash %q of %d-byte blocks, sha256 %q; want %d bytes, coreutils' hash of 16 MiB blocks (split -b 16777216 --filter=sha256sum | sha256sum), no whole-file sha256",
			out, rep.OutputBytes, rep.OutputBlocksSHA256, rep.OutputHashBlock, rep.OutputSHA256, st.Size())
	}
}

// hashBlocks is how many of a file's 16 MiB blocks rank r of ranks hashes: an even share, the
// first ranks one more.
func hashBlocks(size int64, ranks, r int) int {
	blocks := int((size + 16<<20 - 1) / (16 << 20))
	n := blocks / ranks
	if r < blocks%ranks {
		n++
	}
	return n
}

// CheckMetrics parses the .prom file with Prometheus's own parser and compares it with the report.
func CheckMetrics(t *testing.T, path string, rep *report.Report) {
	t.Helper()
	fams := ParseMetrics(t, path)
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")); len(left) > 0 {
		t.Errorf("temp files left beside the metrics file: %v", left)
	}
	output := filepath.Base(rep.Output)
	for name, fam := range fams {
		if !strings.HasPrefix(name, "facefusion_") || fam.GetHelp() == "" ||
			(fam.GetType() == dto.MetricType_COUNTER) != strings.HasSuffix(name, "_total") {
			t.Errorf("family %s: help %q, type %v", name, fam.GetHelp(), fam.GetType())
		}
		for _, m := range fam.Metric {
			have := map[string]string{}
			for _, l := range m.Label {
				have[l.GetName()] = l.GetValue()
			}
			if have["output"] != output || have["user"] == "" || have["job"] != "" {
				t.Errorf("%s: a sample without output=%q and a user, or with a job label: %v", name, output, m.Label)
			}
		}
	}
	value := func(name string, labels ...string) float64 { return MetricValue(t, fams, name, labels...) }
	want := map[string]float64{
		"facefusion_exit_status": float64(rep.ExitStatus), "facefusion_frames_planned": float64(rep.FrameEnd - rep.FrameStart),
		"facefusion_output_bytes": float64(rep.OutputBytes), "facefusion_ranks": float64(rep.Ranks), "facefusion_job_running": 0,
		"facefusion_attempts": float64(len(rep.Attempts)),
	}
	for name, v := range want {
		if got := value(name); got != v {
			t.Errorf("%s = %g, the report says %g", name, got, v)
		}
	}
	for _, r := range rep.PerRank {
		rk := strconv.Itoa(r.Rank)
		for name, v := range map[string]float64{
			"facefusion_frames_done": float64(r.Frames), "facefusion_faces_found_total": float64(r.FacesFound),
			"facefusion_faces_swapped_total": float64(r.FacesSwapped), "facefusion_faces_enhanced_total": float64(r.FacesEnhanced),
			"facefusion_faces_expression_restored_total": float64(r.FacesExpressionRestored),
			"facefusion_faces_edited_total":              float64(r.FacesEdited),
			"facefusion_frames_per_second":               r.FramesPerSecond, "facefusion_gpu_available": 0,
		} {
			if got := value(name, "rank", rk); got != v {
				t.Errorf("%s{rank=%s} = %g, the report says %g", name, rk, got, v)
			}
		}
		for st, v := range r.StageSeconds {
			if got := value("facefusion_stage_busy_seconds_total", "rank", rk, "stage", st); got != v {
				t.Errorf("stage %s of rank %s: %g s, the report says %g", st, rk, got, v)
			}
		}
	}
}

// ParseMetrics parses a .prom file with Prometheus's own text parser.
func ParseMetrics(t *testing.T, path string) map[string]*dto.MetricFamily {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return fams
}

// MetricValue is the value of the sample of family name with the labels (name, value pairs).
func MetricValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	fam := fams[name]
	if fam == nil {
		t.Fatalf("no family %s", name)
	}
next:
	for _, m := range fam.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		if m.Counter != nil {
			return m.Counter.GetValue()
		}
		return m.Gauge.GetValue()
	}
	t.Fatalf("no sample %s%v", name, labels)
	return 0
}
