// Package metrics writes a run's figures as a Prometheus textfile for node_exporter's textfile
// collector: the text exposition format, written beside its final name and renamed into place
// so that the collector never reads half a file.
package metrics

import (
	"bytes"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/slurm"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// Origin is who writes a textfile: the Slurm job (its array task) and the user of the process.
// Each textfile is one job's, so these are labels on its every sample, not a series of their
// own: a query can sum or select by job and user without knowing the file's name.
type Origin struct {
	// SlurmJobID is the job's id as squeue shows it: an array's job id for each of its tasks
	// (SLURM_ARRAY_JOB_ID), with SlurmArrayTaskID the task's; empty outside Slurm.
	SlurmJobID, SlurmArrayTaskID string
	User                         string // the user name, or the uid where none is known
}

// OriginFromEnv is this process's Origin, from Slurm's environment and the user database.
func OriginFromEnv() Origin {
	env := slurm.FromEnv()
	o := Origin{SlurmJobID: env.JobID, User: strconv.Itoa(os.Getuid())}
	if env.ArrayJobID != "" {
		o.SlurmJobID, o.SlurmArrayTaskID = env.ArrayJobID, env.ArrayTaskID
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		o.User = u.Username
	}
	return o
}

// OutputLabel is the value of the output label on every sample of a run: its output file's
// name (not the path: a label is a short name, and one inbox's outputs differ by name).
func OutputLabel(output string) string { return filepath.Base(output) }

// Set collects families whose every sample has the same output label and the Origin's labels.
// The output label is not called job: Prometheus sets job to the scrape job's name (that of
// node_exporter), and a textfile's own would be renamed exported_job.
type Set struct {
	common []*dto.LabelPair
	fams   map[string]*dto.MetricFamily
}

// NewSet starts a set for the run of output (a label value: OutputLabel) in o. An Origin's
// empty value is no label, as Prometheus reads it anyway.
func NewSet(o Origin, output string) *Set {
	s := &Set{fams: map[string]*dto.MetricFamily{}}
	for _, l := range [][2]string{{"output", output}, {"slurm_job_id", o.SlurmJobID}, {"slurm_array_task_id", o.SlurmArrayTaskID}, {"user", o.User}} {
		if l[1] != "" {
			s.common = append(s.common, pair(l[0], l[1]))
		}
	}
	return s
}

// Gauge adds a gauge sample; labels are name, value pairs after the set's own.
func (s *Set) Gauge(name, help string, v float64, labels ...string) {
	s.add(name, help, dto.MetricType_GAUGE, v, labels)
}

// Counter adds a counter sample (its name ends in _total).
func (s *Set) Counter(name, help string, v float64, labels ...string) {
	s.add(name, help, dto.MetricType_COUNTER, v, labels)
}

func (s *Set) add(name, help string, typ dto.MetricType, v float64, labels []string) {
	f := s.fams[name]
	if f == nil {
		f = &dto.MetricFamily{Name: &name, Help: &help, Type: typ.Enum()}
		s.fams[name] = f
	}
	m := &dto.Metric{Label: slices.Clone(s.common)}
	for i := 0; i+1 < len(labels); i += 2 {
		m.Label = append(m.Label, pair(labels[i], labels[i+1]))
	}
	if typ == dto.MetricType_COUNTER {
		m.Counter = &dto.Counter{Value: &v}
	} else {
		m.Gauge = &dto.Gauge{Value: &v}
	}
	f.Metric = append(f.Metric, m)
}

func pair(name, value string) *dto.LabelPair { return &dto.LabelPair{Name: &name, Value: &value} }

// Families are the set's families, sorted by name.
func (s *Set) Families() []*dto.MetricFamily {
	out := make([]*dto.MetricFamily, 0, len(s.fams))
	for _, f := range s.fams {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

// Write puts families in the text format at path atomically (a temp file in the same folder,
// fsync, rename), with the mode the umask gives a new file: node_exporter reads it as its own
// user. Families of the same name from different lists are merged.
func Write(path string, lists ...[]*dto.MetricFamily) error {
	merged := map[string]*dto.MetricFamily{}
	var names []string
	for _, l := range lists {
		for _, f := range l {
			if have := merged[f.GetName()]; have != nil {
				have.Metric = append(have.Metric, f.Metric...)
				continue
			}
			c := &dto.MetricFamily{Name: f.Name, Help: f.Help, Type: f.Type, Metric: append([]*dto.Metric(nil), f.Metric...)}
			merged[f.GetName()] = c
			names = append(names, f.GetName())
		}
	}
	sort.Strings(names)
	var buf bytes.Buffer
	for _, n := range names {
		if _, err := expfmt.MetricFamilyToText(&buf, merged[n]); err != nil {
			return err
		}
	}
	return lustre.WriteReadable(path, buf.Bytes())
}

// The names and help of the figures, one place for the live file and the final one.
const (
	nameRunning   = "facefusion_job_running"
	nameUpdated   = "facefusion_last_update_timestamp_seconds"
	namePlanned   = "facefusion_frames_planned"
	nameDone      = "facefusion_frames_done"
	helpRunning   = "1 while the job runs, 0 once it ended (see facefusion_exit_status)"
	helpUpdated   = "when this file was written, in seconds since the Unix epoch"
	helpPlanned   = "frames of the output"
	helpDone      = "frames this rank encoded in this attempt"
	helpDoneTotal = "frames encoded in this attempt, every rank"
)

// Progress are the figures of a running job labelled output (OutputLabel): frames done by each
// rank (done[r], from the ranks' control rounds) of planned.
func Progress(o Origin, output string, planned int, done []int64, now time.Time) []*dto.MetricFamily {
	s := NewSet(o, output)
	s.Gauge(nameRunning, helpRunning, 1)
	s.Gauge(nameUpdated, helpUpdated, float64(now.UnixNano())/1e9)
	s.Gauge(namePlanned, helpPlanned, float64(planned))
	for r, n := range done {
		s.Gauge(nameDone, helpDone, float64(n), "rank", strconv.Itoa(r))
	}
	return s.Families()
}

// Report are the figures of a run's report, as it ended, written in o.
func Report(o Origin, rep *report.Report, now time.Time) []*dto.MetricFamily {
	s := NewSet(o, OutputLabel(rep.Output))
	s.Gauge(nameRunning, helpRunning, 0)
	s.Gauge(nameUpdated, helpUpdated, float64(now.UnixNano())/1e9)
	s.Gauge(namePlanned, helpPlanned, float64(rep.FrameEnd-rep.FrameStart))
	s.Gauge("facefusion_exit_status", "the exit code of the run (0 done; see docs/options.md, Exit codes)", float64(rep.ExitStatus))
	s.Gauge("facefusion_attempts", "attempts of the job so far, this one included", float64(len(rep.Attempts)))
	s.Gauge("facefusion_ranks", "ranks of this attempt", float64(rep.Ranks))
	s.Gauge("facefusion_job_seconds", "wall time of every attempt of the job, added up", rep.Seconds)
	s.Gauge("facefusion_attempt_seconds", "wall time of this attempt", rep.LastSeconds)
	if rep.OutputBytes > 0 {
		s.Gauge("facefusion_output_bytes", "size of the output file", float64(rep.OutputBytes))
	}
	for _, r := range rep.PerRank {
		rk := strconv.Itoa(r.Rank)
		s.Gauge(nameDone, helpDone, float64(r.Frames), "rank", rk)
		s.Counter("facefusion_faces_found_total", "faces the detector found in this attempt", float64(r.FacesFound), "rank", rk)
		s.Counter("facefusion_faces_swapped_total", "faces the swapper changed in this attempt", float64(r.FacesSwapped), "rank", rk)
		s.Counter("facefusion_faces_enhanced_total", "faces the enhancer changed in this attempt", float64(r.FacesEnhanced), "rank", rk)
		s.Counter("facefusion_faces_expression_restored_total", "faces the expression restorer changed in this attempt", float64(r.FacesExpressionRestored), "rank", rk)
		s.Counter("facefusion_faces_edited_total", "faces the face editor changed in this attempt", float64(r.FacesEdited), "rank", rk)
		s.Gauge("facefusion_frames_per_second", "frames this rank encoded per second of its share's wall time", r.FramesPerSecond, "rank", rk)
		stages := make([]string, 0, len(r.StageSeconds))
		for st := range r.StageSeconds {
			stages = append(stages, st)
		}
		sort.Strings(stages)
		for _, st := range stages {
			s.Counter("facefusion_stage_busy_seconds_total", "busy time of a stage in this attempt, summed over its goroutines (stages overlap)", r.StageSeconds[st], "rank", rk, "stage", st)
		}
		if g := r.GPU; g != nil {
			avail := 0.0
			if g.Available {
				avail = 1
			}
			s.Gauge("facefusion_gpu_available", "1 when the rank's GPU was sampled through NVML, 0 without one (the report says why)", avail, "rank", rk)
			if g.Available {
				s.Gauge("facefusion_gpu_memory_total_bytes", "memory of the rank's GPU", float64(g.MemoryTotalBytes), "rank", rk)
				s.Counter("facefusion_gpu_samples_total", "NVML samples taken (one a second)", float64(g.Samples), "rank", rk)
				s.Gauge("facefusion_gpu_utilization_ratio", "GPU utilisation over the samples, 0..1", g.UtilizationMean, "rank", rk, "stat", "mean")
				s.Gauge("facefusion_gpu_utilization_ratio", "GPU utilisation over the samples, 0..1", g.UtilizationMax, "rank", rk, "stat", "max")
				s.Gauge("facefusion_gpu_memory_used_max_bytes", "most GPU memory in use in a sample", float64(g.MemoryUsedMaxBytes), "rank", rk)
				s.Gauge("facefusion_gpu_power_watts", "GPU power draw over the samples", g.PowerMeanWatts, "rank", rk, "stat", "mean")
				s.Gauge("facefusion_gpu_power_watts", "GPU power draw over the samples", g.PowerMaxWatts, "rank", rk, "stat", "max")
				s.Gauge("facefusion_gpu_temperature_max_celsius", "highest GPU temperature in a sample", g.TemperatureMaxC, "rank", rk)
			}
		}
	}
	return s.Families()
}
