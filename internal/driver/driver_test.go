package driver

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/spec"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// In-process runs of the whole job on a single-process communicator: the job folder's life as
// the driver lives it (claim, refuse, clean, finish), on a real ffmpeg pass-through.

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func passThrough(in, out string) job.Config {
	c := job.Default()
	c.TargetPath, c.OutputPath = in, out
	c.Processors = []string{job.ProcessorNone}
	c.OutputVideoEncoder = "ffv1"
	c.ChunkFrames = 4
	return c
}

func run(t *testing.T, c job.Config) (string, string, error) {
	t.Helper()
	var log strings.Builder
	out, err := Run(context.Background(), collective.Single(), c, Options{Log: logging.New(&log, logging.Info)})
	return out, log.String(), err
}

// The output's own folder as --job-dir: the job works in a subfolder of its own and leaves the
// folder and every other file in it.
func TestRunKeepsTheUsersJobDir(t *testing.T) {
	testenv.Full(t, "runs a job with ffmpeg end to end")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mkv")
	testenv.Clip(t, in, 8, "25")
	other := filepath.Join(dir, "keep.txt")
	os.WriteFile(other, []byte("x"), 0o644)
	c := passThrough(in, filepath.Join(dir, "out.mkv"))
	c.JobDir = dir
	if _, log, err := run(t, c); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	for _, p := range []string{other, c.OutputPath, report.Path(c.OutputPath)} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out.mkv.job")); err == nil {
		t.Error("the job's own subfolder was left")
	}
}

// A live holder's claim refuses the run as Busy, and the refused run changes nothing there.
func TestRunRefusedWhileClaimed(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mkv")
	testenv.Clip(t, in, 8, "25")
	c := passThrough(in, filepath.Join(dir, "out.mkv"))
	jd, _, err := lustre.Create(lustre.DefaultPath(c.OutputPath))
	if err != nil {
		t.Fatal(err)
	}
	holder := lustre.Me() // this live process, another run's token
	if _, _, err := jd.TakeClaim(holder); err != nil {
		t.Fatal(err)
	}
	temp := jd.SegmentTemp(1, 0, 1)
	os.WriteFile(temp, []byte("in flight"), 0o644)
	before := listing(t, jd.Path)
	_, log, err := run(t, c)
	if fault.KindOf(err) != fault.Busy || !strings.Contains(err.Error(), "is in use by a running job") {
		t.Fatalf("want a Busy refusal, got %v\n%s", err, log)
	}
	if after := listing(t, jd.Path); after != before {
		t.Errorf("the refused run changed the folder:\nbefore %s\nafter  %s", before, after)
	}
	if !jd.Holds(&holder) {
		t.Error("the refused run took the claim")
	}
}

// Another job's folder (its fingerprint differs) is refused as Usage, and the refused run
// removes nothing of it: not the dead attempt's temp segment, not the claim's absence.
func TestRunRefusesAnotherJobTouchingNothing(t *testing.T) {
	testenv.Full(t, "runs jobs with ffmpeg end to end")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mkv")
	testenv.Clip(t, in, 8, "25")
	c := passThrough(in, filepath.Join(dir, "out.mkv"))
	c.KeepSegments = true
	if _, log, err := run(t, c); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	jd := &lustre.JobDir{Path: lustre.DefaultPath(c.OutputPath)}
	temp := jd.SegmentTemp(1, 0, 1)
	os.WriteFile(temp, []byte("left by a killed attempt"), 0o644)
	os.WriteFile(jd.Stop(), []byte("rank 0: SIGUSR1"), 0o644)
	before := listing(t, jd.Path)
	c2 := c
	c2.ChunkFrames = 5
	c2.Force = true
	_, log, err := run(t, c2)
	if fault.KindOf(err) != fault.Usage || !strings.Contains(err.Error(), "chunk_frames") {
		t.Fatalf("want a Usage refusal naming chunk_frames, got %v\n%s", err, log)
	}
	if after := listing(t, jd.Path); after != before {
		t.Errorf("the refused run changed the folder:\nbefore %s\nafter  %s", before, after)
	}
	// The same job again: the dead attempt's leftovers go, the run completes.
	c.Force = true
	if _, log, err := run(t, c); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	for _, p := range []string{temp, jd.Stop()} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s survived the same job's next run", p)
		}
	}
}

// listing is a folder's entries with their sizes and times, for before/after comparisons.
func listing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		// The folder's own mtime moves with any name made and removed in it (the claim's
		// attempt); what is in it must not.
		if err == nil && p != dir {
			b.WriteString(strings.TrimPrefix(p, dir) + ":" + itoa(int(info.Size())) + ":" + info.ModTime().Format(time.RFC3339Nano) + " ")
		}
		return nil
	})
	return b.String()
}

// A run refused after it claimed the folder (here: a folder in a chunk's place) gives the claim
// back on its way out: the next run in the same process, which a leaked claim would refuse as
// busy (same pid, alive), gets the same refusal, not Busy.
func TestRefusedRunReleasesItsClaim(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mkv")
	testenv.Clip(t, in, 8, "25")
	c := passThrough(in, filepath.Join(dir, "out.mkv"))
	jd, _, err := lustre.Create(lustre.DefaultPath(c.OutputPath))
	if err != nil {
		t.Fatal(err)
	}
	os.Mkdir(jd.Segment(1), 0o755)
	for i := 0; i < 2; i++ {
		_, log, err := run(t, c)
		if fault.KindOf(err) != fault.Input || !strings.Contains(err.Error(), "in the way of chunk 1") {
			t.Fatalf("run %d: want the blocked chunk named, got %v\n%s", i, err, log)
		}
		if _, ok, _ := jd.ReadClaim(); ok {
			t.Fatalf("run %d left its claim", i)
		}
	}
}

// A target refused after rank 0 loaded its models leaves no session open: batch-run runs its
// targets in one process, and each refused one kept a whole set of engines (~1 GB with
// FaceFusion's swapper and enhancer). Here: a target ffprobe refuses (the load ran beside the
// probe, and is waited for and closed), a source with no face (Analyse fails once BlazeFace is
// open), then a job folder another live run holds (refused after the models and the source
// were analysed).
func TestRefusedTargetsCloseTheirModels(t *testing.T) {
	testenv.Full(t, "runs jobs with the real models and ffmpeg")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mkv")
	testenv.Clip(t, in, 8, "25")
	c := job.Default()
	c.TargetPath, c.OutputPath = in, filepath.Join(dir, "out.mkv")
	c.ModelsDir = filepath.Join(testenv.Cache(t), "models")
	c.OnnxruntimeLibrary = testenv.ORTLibrary(t)
	before := infer.OpenSessions()

	// A target ffprobe refuses is told at once: the load ran beside the probe and, left behind,
	// closes what it opened (before the next load begins).
	bad := filepath.Join(dir, "bad.mkv")
	if err := os.WriteFile(bad, []byte("not a video"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.SourcePaths = []string{testenv.Sample(t, "grace_hopper.png")}
	c.TargetPath = bad
	returned := make(chan struct{})
	var afterReturn atomic.Bool
	planHooks.loaded = func() {
		select {
		case <-returned:
			afterReturn.Store(true)
		case <-time.After(time.Minute):
		}
	}
	defer func() { planHooks.loaded = nil }()
	_, log, err := run(t, c)
	close(returned)
	if fault.KindOf(err) != fault.Input || !strings.Contains(err.Error(), "bad.mkv") {
		t.Fatalf("a target that is no video: want an input error naming it, got %v\n%s", err, log)
	}
	abandoned.wait()
	planHooks.loaded = nil
	if !afterReturn.Load() {
		t.Error("a target that is no video: the refusal waited for the model load (a minute)")
	}
	if n := infer.OpenSessions(); n != before {
		t.Errorf("a target that is no video: %d model sessions left open, want %d", n, before)
	}
	c.TargetPath = in

	c.SourcePaths = []string{testenv.Sample(t, "brick.png")}
	if _, log, err := run(t, c); err == nil || !strings.Contains(err.Error(), "brick.png") {
		t.Fatalf("a source with no face: want a refusal naming it, got %v\n%s", err, log)
	}
	if n := infer.OpenSessions(); n != before {
		t.Errorf("a source with no face: %d model sessions left open, want %d", n, before)
	}

	c.SourcePaths = []string{testenv.Sample(t, "grace_hopper.png")}
	jd, _, err := lustre.Create(lustre.DefaultPath(c.OutputPath))
	if err != nil {
		t.Fatal(err)
	}
	holder := lustre.Me()
	if _, _, err := jd.TakeClaim(holder); err != nil {
		t.Fatal(err)
	}
	if _, log, err := run(t, c); fault.KindOf(err) != fault.Busy {
		t.Fatalf("a held job folder: want Busy, got %v\n%s", err, log)
	}
	if n := infer.OpenSessions(); n != before {
		t.Errorf("a busy job folder: %d model sessions left open, want %d", n, before)
	}
}

// swapJob is the default face swap of a clip of frames frames, with this checkout's models.
func swapJob(t *testing.T, frames int) job.Config {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mkv")
	testenv.Clip(t, in, frames, "25")
	c := job.Default()
	c.TargetPath, c.OutputPath = in, filepath.Join(dir, "out.mkv")
	c.SourcePaths = []string{testenv.Sample(t, "grace_hopper.png")}
	c.ModelsDir = filepath.Join(testenv.Cache(t), "models")
	c.OnnxruntimeLibrary = testenv.ORTLibrary(t)
	return c
}

// Rank 0 loads its models while it probes the target and checks the codecs and the output
// format: the load has started when the probe is done, and it returns only after the probe
// (its end waits for the probe, which a load done before the checks, not beside them, could not
// let happen: the test would then fail after a minute, not hang).
func TestPlanLoadsBesideItsChecks(t *testing.T) {
	c := swapJob(t, 4)
	var started, startedAtProbe, probedFirst atomic.Bool
	probed := make(chan struct{})
	planHooks.started = func() { started.Store(true) }
	planHooks.probed = func() {
		startedAtProbe.Store(started.Load())
		close(probed)
	}
	planHooks.loaded = func() {
		select {
		case <-probed:
			probedFirst.Store(true)
		case <-time.After(time.Minute):
		}
	}
	defer func() { planHooks.started, planHooks.probed, planHooks.loaded = nil, nil, nil }()
	if _, log, err := run(t, c); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if !startedAtProbe.Load() {
		t.Error("the model load had not started when the target was probed: it comes after the checks")
	}
	if !probedFirst.Load() {
		t.Error("the model load returned before the target was probed, which it waited a minute for: the checks wait for the load")
	}
}

// A stop (a signal) that comes as rank 0's load is started ends the plan at once and loads
// nothing: no model is loaded, no session opened, and the run is a stop.
func TestPlanStopLoadsNothing(t *testing.T) {
	c := swapJob(t, 4)
	before := infer.OpenSessions()
	ctx, signal := context.WithCancel(context.Background())
	var loaded atomic.Bool
	planHooks.started = signal // the probe and the load both see it
	planHooks.loaded = func() { loaded.Store(true) }
	defer func() { planHooks.started, planHooks.loaded = nil, nil }()
	var log strings.Builder
	_, err := Run(ctx, collective.Single(), c, Options{Log: logging.New(&log, logging.Info)})
	var st *Stopped
	if !errors.As(err, &st) {
		t.Fatalf("a signal during the plan: want a stop, got %v\n%s", err, log.String())
	}
	abandoned.wait()
	if loaded.Load() {
		t.Error("a signal before the load began: the models were loaded anyway")
	}
	if n := infer.OpenSessions(); n != before {
		t.Errorf("a signal during the plan: %d sessions left open, want %d", n, before)
	}
}

// stillMine holds while this attempt's claim and attempt id are the folder's, and fails once
// another run's claim or attempt replaced them: the guard before the join, the commit and the
// removal.
func TestStillMine(t *testing.T) {
	jd, _, _ := lustre.Create(filepath.Join(t.TempDir(), "x.job"))
	ck := &checkpointer{jd: jd, me: lustre.Me()}
	if _, _, err := jd.TakeClaim(ck.me); err != nil {
		t.Fatal(err)
	}
	p := &Plan{Attempt: 1, AttemptID: lustre.AttemptID(1, ck.me.Token)}
	jd.WriteAttempt(p.AttemptID)
	if err := ck.stillMine(p); err != nil {
		t.Fatalf("own attempt: %v", err)
	}
	jd.WriteAttempt(lustre.AttemptID(1, "another-run")) // started over with --fresh: number 1 again
	if err := ck.stillMine(p); err == nil || !strings.Contains(err.Error(), "taken over") {
		t.Fatalf("another run's attempt 1: %v", err)
	}
	jd.WriteAttempt(p.AttemptID)
	jd.ReleaseClaim(&ck.me)
	other := lustre.Me()
	jd.TakeClaim(other)
	if err := ck.stillMine(p); err == nil {
		t.Fatal("another run's claim: still mine")
	}
}

// hardware_codecs auto: the job folder, not the node, says which encoder a resume uses. A
// folder whose segments are libx264 stays libx264 without an NVENC trial; one whose segments
// are h264_nvenc (begun on an NVENC node) is refused on this node, which has none, as an
// Environment fault naming the encoder, the folder, hardware_codecs and --fresh, touching
// nothing; the fingerprint records the job's encoder either way, so neither is "another job".
func TestResumeKeepsTheFoldersEncoder(t *testing.T) {
	testenv.Full(t, "runs jobs with ffmpeg end to end")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mkv")
	testenv.Clip(t, in, 8, "25")
	c := passThrough(in, filepath.Join(dir, "out.mkv"))
	c.OutputVideoEncoder, c.ExecutionProviders, c.KeepSegments = "libx264", []string{"cuda"}, true
	if _, log, err := run(t, c); err != nil || !strings.Contains(log, "encoding with libx264 on the CPU") {
		t.Fatalf("first run: %v\n%s", err, log)
	}
	jd := &lustre.JobDir{Path: lustre.DefaultPath(c.OutputPath)}
	m, ok, err := jd.ReadManifest()
	if !ok || err != nil || m.Encoder != "libx264" || m.Fingerprint["output_video_encoder"] != "libx264" {
		t.Fatalf("manifest: %v %v, encoder %q", ok, err, m.Encoder)
	}
	c.Force = true
	if _, log, err := run(t, c); err != nil || !strings.Contains(log, "encoding with libx264, as job folder "+jd.Path+"'s segments were") {
		t.Fatalf("resume of a libx264 folder: %v\n%s", err, log)
	}
	m, _, _ = jd.ReadManifest()
	m.Encoder = "h264_nvenc" // as if its segments had been written on a node with NVENC
	if err := jd.WriteManifest(m); err != nil {
		t.Fatal(err)
	}
	before := listing(t, jd.Path)
	_, log, err := run(t, c)
	if fault.KindOf(err) != fault.Environment {
		t.Fatalf("resume of an NVENC folder without NVENC: want Environment, got %v\n%s", err, log)
	}
	for _, want := range []string{"job folder " + jd.Path + " was encoded with h264_nvenc", "hardware_codecs", "h264_nvenc cannot run on this node", "--fresh to restart it with libx264"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
	if after := listing(t, jd.Path); after != before {
		t.Errorf("the refused run changed the folder:\nbefore %s\nafter  %s", before, after)
	}
}

// The fingerprint records the job's encoder, not the NVENC pair a node chose for it: a
// requeue (and batch-run's done check) on a node without NVENC is the same job.
func TestFingerprintRecordsTheJobsEncoder(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mkv")
	testenv.Clip(t, in, 8, "25")
	c := passThrough(in, filepath.Join(dir, "out.mkv"))
	info, err := video.Probe(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	s, err := spec.Resolve(c, info)
	if err != nil {
		t.Fatal(err)
	}
	p := &Plan{Info: info, Spec: s.WithCodecs(spec.Codecs{Encoder: "h264_nvenc", Requested: "libx264"})}
	fp, err := fingerprint(context.Background(), c, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := fp["output_video_encoder"]; got != "libx264" {
		t.Fatalf("fingerprint's output_video_encoder %q, want the job's libx264", got)
	}
}

// A job whose chunks were measured by one attempt and not by another warns that its identity
// block is partial, naming how many chunks it covers; all or none measured is no warning.
func TestIdentityCoverageWarnsOfAPartialMeasure(t *testing.T) {
	measured := lustre.Chunk{Identity: lustre.IdentitySums{Recognizer: "fr_feature", Every: 10}}
	m := &lustre.Manifest{Done: []lustre.Chunk{measured, {}, measured}}
	line := identityCoverage(m)
	if !strings.Contains(line, "covers 2 of the job's 3 chunks") || !strings.Contains(line, "--fresh") {
		t.Errorf("two of three chunks measured: %q, want the coverage and what to do", line)
	}
	for _, done := range [][]lustre.Chunk{{measured, measured}, {{}, {}}, nil} {
		if line := identityCoverage(&lustre.Manifest{Done: done}); line != "" {
			t.Errorf("%d chunks, all or none measured: %q, want no warning", len(done), line)
		}
	}
}
