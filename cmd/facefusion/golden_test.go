package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/driver"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// The golden files of plan and status (testdata/*.golden; go test -run Golden -update rewrites
// them). Their inputs are constants where the code allows it; what still differs from run to
// run is masked, each mask named where it is used:
//   - a folder under t.TempDir() becomes <TMP> (a job folder, a clip);
//   - for a running job only (its times are the clock's): the attempt's start and the claim's
//     times become <TIME>, "updated N ago" <AGO>, and the rate and eta <RATE> and <ETA>.
// Hashes, sizes, frame numbers and the times in a file the test wrote are kept as printed.

// goldenTime is the fixed clock of the job folders and reports the tests write.
var goldenTime = time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)

// TestGoldenPlanFrames: plan --frames (no file, no ffprobe): the frames line, and the model of
// the run from the built-in costs, every term with where it comes from.
func TestGoldenPlanFrames(t *testing.T) {
	t.Chdir(t.TempDir()) // no facefusion.ini of the source tree's
	var out bytes.Buffer
	if err := cmdPlan(context.Background(), []string{"--frames", "1000", "--ranks", "6", "--chunk-frames", "64", "--processors", "none"}, &out); err != nil {
		t.Fatal(err)
	}
	testenv.Golden(t, "plan-frames", out.Bytes())
}

// TestGoldenPlanTables: plan's tables for a fixed probe of a 250-frame 1080p target with audio,
// trimmed to [10,250), in chunks of 64 over 4 ranks: the ranks' spans, the chunks they encode
// and those they share with the ranks beside them.
func TestGoldenPlanTables(t *testing.T) {
	info := &video.Info{Path: "/data/in.mp4", Width: 1920, Height: 1080, FPS: video.Rational{Num: 25, Den: 1}, Frames: 250, HasAudio: true}
	frames := rank.Range{Start: 10, End: 250}
	chunks, split := driver.MakePlan(frames, 64, 4)
	var out bytes.Buffer
	writePlan(&out, info.Path, info, frames, 64, chunks, split, "120 frames, 960x540, 25/2 fps: the target's frames [10,250) resampled; frame numbers below count the output's frames from 10")
	testenv.Golden(t, "plan-tables", out.Bytes())
}

// TestGoldenPlanBinary: the binary's plan -t of a real 10-frame clip (ffprobe's facts), at half
// its rate, over 3 ranks. Masked: the clip's folder.
func TestGoldenPlanBinary(t *testing.T) {
	dir := t.TempDir()
	clip := filepath.Join(dir, "clip10.mp4")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "testsrc=s=64x48:r=25", "-frames:v", "10", "-c:v", "libx264", "-pix_fmt", "yuv420p", clip)
	r := clitest.RunIn(t, dir, "plan", "-t", clip, "--ranks", "3", "--chunk-frames", "2", "--output-video-fps", "12.5", "--processors", "none")
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("plan: exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
	testenv.Golden(t, "plan-binary", []byte(r.Stdout), testenv.Literal(dir, "<TMP>"))
}

// goldenJob writes a job folder as a 3-rank job leaves it in its second attempt, which ended
// with outcome or, running, was last saved at now: chunks of both attempts in the manifest, one
// more in rank 2's journal, the progress file, and chunks left pending in two runs.
func goldenJob(t *testing.T, outcome string, now time.Time) *lustre.JobDir {
	t.Helper()
	jd := &lustre.JobDir{Path: filepath.Join(t.TempDir(), "out.mp4.job")}
	if err := os.Mkdir(jd.Path, 0o755); err != nil {
		t.Fatal(err)
	}
	chunk := func(c, r, attempt int) lustre.Chunk {
		return lustre.Chunk{Chunk: c, Start: c * 16, End: c*16 + 16, Frames: 16, Size: 1000 + int64(c), SHA256: strings.Repeat(string(rune('a'+c)), 64), Rank: r, Attempt: attempt}
	}
	m := &lustre.Manifest{Fingerprint: map[string]string{"chunk_frames": "16"}, Target: "/data/in.mp4",
		FrameStart: 0, FrameEnd: 150, ChunkFrames: 16, NumChunks: 10, Encoder: "libx264",
		Attempts: []lustre.Attempt{
			{Started: goldenTime.Add(-time.Hour), Ranks: 2, SlurmJob: "4711", Planned: 10, Outcome: lustre.Checkpointed,
				Stop: "SIGTERM (Slurm's time limit)", Updated: goldenTime.Add(-50 * time.Minute)},
			{Started: now.Add(-2 * time.Minute), Ranks: 3, RestartCount: 1, SlurmJob: "4711", Planned: 7, Outcome: outcome, Updated: now},
		},
		Done: []lustre.Chunk{chunk(0, 0, 1), chunk(1, 1, 1), chunk(2, 0, 1), chunk(3, 0, 2), chunk(5, 1, 2)}}
	if outcome == lustre.Checkpointed {
		m.Attempts[1].Stop = "SIGUSR1 (checkpoint asked): rerun the same command to resume"
	}
	if err := jd.WriteManifest(m); err != nil {
		t.Fatal(err)
	}
	if err := jd.WriteJournal(2, []lustre.Chunk{chunk(7, 2, 2)}); err != nil {
		t.Fatal(err)
	}
	if err := jd.WriteProgress([]int64{20, 23, 16}); err != nil {
		t.Fatal(err)
	}
	return jd
}

// TestGoldenStatusJob: status of a job folder, in the process and through the binary (the
// same bytes): a checkpointed attempt (every line from the files), and a running one whose
// claim another node holds (the lines from the clock masked). Masked: the job's folder.
func TestGoldenStatusJob(t *testing.T) {
	t.Run("checkpointed", func(t *testing.T) {
		jd := goldenJob(t, lustre.Checkpointed, goldenTime)
		var out bytes.Buffer
		if err := cmdStatus([]string{jd.Path}, &out); err != nil {
			t.Fatal(err)
		}
		testenv.Golden(t, "status-job-checkpointed", out.Bytes(), testenv.Literal(jd.Path, "<TMP>/out.mp4.job"))
		r := clitest.Run(t, "status", jd.Path)
		if r.Code != 0 || r.Stderr != "" {
			t.Fatalf("status: exit %d, stderr:\n%s", r.Code, r.Stderr)
		}
		testenv.Golden(t, "status-job-checkpointed", []byte(r.Stdout), testenv.Literal(jd.Path, "<TMP>/out.mp4.job"))
	})
	t.Run("running", func(t *testing.T) {
		jd := goldenJob(t, lustre.Running, time.Now().UTC())
		h := lustre.Me() // a live claim from another node: its heartbeat is now
		h.Host, h.PID, h.SlurmJob, h.RestartCount = "node07", 4242, "4711", 1
		if _, _, err := jd.TakeClaim(h); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := cmdStatus([]string{jd.Path}, &out); err != nil {
			t.Fatal(err)
		}
		testenv.Golden(t, "status-job-running", out.Bytes(), testenv.Literal(jd.Path, "<TMP>/out.mp4.job"),
			testenv.Mask{Pattern: `started [0-9T:-]+Z, last heartbeat [0-9T:-]+Z`, With: "started <TIME>, last heartbeat <TIME>"},
			testenv.Mask{Pattern: `latest started [0-9T:-]+Z`, With: "latest started <TIME>"},
			testenv.Mask{Pattern: `updated [0-9hms.]+ ago`, With: "updated <AGO> ago"},
			testenv.Mask{Pattern: `rate: +[0-9.]+ frames/s`, With: "rate:       <RATE> frames/s"},
			testenv.Mask{Pattern: `eta: +[0-9hms.]+ at`, With: "eta:        <ETA> at"})
	})
}

// TestGoldenStatusReport: status of an output from its run report, in the process and through
// the binary: a finished job (this version's block hash, its folder removed), a version 2
// report (the whole file's sha256) and a failed run whose job folder is kept. The reports hold
// no temp path but the kept folder's, masked.
func TestGoldenStatusReport(t *testing.T) {
	dir := t.TempDir()
	kept := filepath.Join(dir, "failed.mp4.job")
	if err := os.Mkdir(kept, 0o755); err != nil {
		t.Fatal(err)
	}
	attempts := []lustre.Attempt{
		{Started: goldenTime.Add(-time.Hour), Ranks: 2, Planned: 10, Outcome: lustre.Checkpointed, Updated: goldenTime.Add(-50 * time.Minute)},
		{Started: goldenTime.Add(-2 * time.Minute), Ranks: 3, Planned: 7, Outcome: lustre.Complete, Updated: goldenTime},
	}
	reports := map[string]string{}
	write := func(name string, r *report.Report) {
		out := filepath.Join(dir, name)
		if err := r.WriteTo(report.Path(out)); err != nil {
			t.Fatal(err)
		}
		reports[name] = out
	}
	write("complete.mp4", &report.Report{Version: report.Version, Outcome: lustre.Complete, Output: "/data/out.mp4", Target: "/data/in.mp4",
		JobDir: "/data/out.mp4.job", FrameStart: 0, FrameEnd: 150, Chunks: 10, Attempts: attempts, Seconds: 720.25, LastSeconds: 120.04,
		Finished: goldenTime, OutputBytes: 123_456, OutputBlocksSHA256: strings.Repeat("ab", 32), OutputHashBlock: lustre.HashBlockBytes})
	write("failed.mp4", &report.Report{Version: report.Version, Outcome: lustre.Failed, ExitStatus: 4, Output: "/data/failed.mp4",
		Target: "/data/in.mp4", JobDir: kept, FrameEnd: 150, Chunks: 10, Attempts: attempts[:1], Seconds: 600, LastSeconds: 600,
		Error: "rank 1: face_swapper: ONNX Runtime: CUDA out of memory: lower execution_thread_count", Finished: goldenTime})
	v2 := filepath.Join(dir, "v2.mp4")
	v2JSON := `{"version": 2, "outcome": "complete", "output": "/data/v2.mp4", "target": "/data/in.mp4", "frame_end": 10, "chunks": 1,
  "attempts": [], "seconds": 3.5, "attempt_seconds": 3.5, "finished": "2026-11-02T09:30:00Z", "output_bytes": 99, "output_sha256": "` + strings.Repeat("cd", 32) + `"}`
	if err := os.WriteFile(report.Path(v2), []byte(v2JSON), 0o644); err != nil {
		t.Fatal(err)
	}
	reports["v2.mp4"] = v2
	for _, name := range []string{"complete.mp4", "failed.mp4", "v2.mp4"} {
		t.Run(name, func(t *testing.T) {
			golden := "status-report-" + strings.TrimSuffix(name, ".mp4")
			var out bytes.Buffer
			if err := reportStatus(reports[name], &out); err != nil {
				t.Fatal(err)
			}
			testenv.Golden(t, golden, out.Bytes(), testenv.Literal(dir, "<TMP>"))
			r := clitest.Run(t, "status", reports[name])
			if r.Code != 0 || r.Stderr != "" {
				t.Fatalf("status: exit %d, stderr:\n%s", r.Code, r.Stderr)
			}
			testenv.Golden(t, golden, []byte(r.Stdout), testenv.Literal(dir, "<TMP>"))
		})
	}
}
