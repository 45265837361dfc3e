package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// goldenClock is the fixed "now" of the golden reports: every time in them is known.
var goldenClock = time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)

// goldenManifest is a 2-rank video job on its second attempt: the first was stopped by Slurm
// and checkpointed, three of its four chunks done (two measured for the identity).
func goldenManifest() *lustre.Manifest {
	sum := func(after, before, to float64, faces int) lustre.IdentitySums {
		return lustre.IdentitySums{Recognizer: "arcface_w600k_r50", Every: 5, Faces: faces,
			After: lustre.IdentityFixed(after * float64(faces)), Before: lustre.IdentityFixed(before * float64(faces)),
			ToTarget: lustre.IdentityFixed(to * float64(faces))}
	}
	return &lustre.Manifest{Version: 1, Target: "/data/in.mp4", FrameStart: 10, FrameEnd: 130, ChunkFrames: 32, NumChunks: 4, Encoder: "libx264",
		Fingerprint: map[string]string{"chunk_frames": "32", "face_swapper_model": "inswapper_128", "target file contents": "1048576:9f86d081"},
		Attempts: []lustre.Attempt{
			{Started: goldenClock.Add(-10 * time.Minute), Ranks: 2, SlurmJob: "4711", Planned: 4, Outcome: lustre.Checkpointed,
				Stop: "SIGTERM (Slurm's time limit): rerun the same command to resume", Updated: goldenClock.Add(-8 * time.Minute)},
			{Started: goldenClock.Add(-90 * time.Second), Ranks: 2, RestartCount: 1, SlurmJob: "4711", Planned: 2, Outcome: lustre.Running,
				Updated: goldenClock.Add(-5 * time.Second)},
		},
		Done: []lustre.Chunk{
			{Chunk: 0, Start: 10, End: 42, Frames: 32, Size: 4096, SHA256: strings.Repeat("a", 64), Rank: 0, Attempt: 1, Faces: 32, Identity: sum(0.71, 0.12, 0.44, 7)},
			{Chunk: 1, Start: 42, End: 74, Frames: 32, Size: 4000, SHA256: strings.Repeat("b", 64), Rank: 1, Attempt: 1, Faces: 30, Identity: sum(0.69, 0.1, 0.47, 6)},
			{Chunk: 2, Start: 74, End: 106, Frames: 32, Size: 3900, SHA256: strings.Repeat("c", 64), Rank: 0, Attempt: 2, Faces: 31},
		}}
}

// goldenRank is rank r's share of the second attempt as the driver records it: every stage
// (the pipeline's and the driver's, as driver.ReportStages names them), a
// GPU sampled (rank 0) or none (rank 1), its CPUs and its part of the model broadcast.
func goldenRank(r int) Rank {
	stages := map[string]float64{}
	for i, s := range []string{"decode", "detect", "landmarks", "swap", "enhance", "frame_enhance", "identity", "encode",
		"checkpoint", "join", "hash", "plan", "load", "setup"} {
		stages[s] = float64(i+1) * 0.25 * float64(r+1)
	}
	p := Rank{Rank: r, Host: []string{"node01", "node02"}[r], Frames: []int{24, 24}[r], Chunks: []int{1, 1}[r],
		FacesFound: 26 + r, FacesSwapped: 25 + r, FacesEnhanced: 0, Seconds: 80.5, FramesPerSecond: 24 / 80.5, StageSeconds: stages,
		CPU:            &rank.CPUBudget{CPUs: 8, Source: rank.FromSlurm, Requested: 0, Workers: 8, FFmpegThreads: 0},
		ModelBroadcast: &ModelBroadcast{Files: 4, Bytes: 729_691_624, Seconds: 0.6}}
	if r == 0 {
		p.GPU = &rank.GPUStats{Available: true, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-00000000-1111-2222-3333-444444444444",
			MemoryTotalBytes: 85_520_809_984, Samples: 80, UtilizationMean: 0.625, UtilizationMax: 0.98, MemoryUsedMaxBytes: 3_221_225_472,
			PowerMeanWatts: 310.5, PowerMaxWatts: 402, TemperatureMaxC: 61}
		p.ModelBroadcast.ReadSeconds = 1.25
	} else {
		p.GPU = &rank.GPUStats{Reason: "CPU execution: execution_providers names no GPU provider"}
	}
	return p
}

// goldenComplete is the report of the job's second, finished attempt, filled in as the driver
// fills it: Slurm's ids, the hosts, every rank's share, their totals, the output's hash.
func goldenComplete() *Report {
	m := goldenManifest()
	r := newAt(m, "/data/out.mp4", "/data/out.mp4.job", lustre.Complete, goldenClock)
	r.Sources = []string{"/data/face.jpg"}
	r.Slurm = &SlurmIDs{JobID: "4711", RestartCount: 1}
	r.Ranks, r.Hosts = 2, []string{"node01", "node02"}
	r.PerRank = []Rank{goldenRank(0), goldenRank(1)}
	t := Rank{Rank: -1, Frames: 48, FacesFound: 53, FacesSwapped: 51, Seconds: r.LastSeconds, FramesPerSecond: 48 / r.LastSeconds,
		StageSeconds: map[string]float64{}}
	for _, p := range r.PerRank {
		for s, v := range p.StageSeconds {
			t.StageSeconds[s] += v
		}
	}
	r.Totals = &t
	sums, partial := m.DoneIdentity()
	r.Identity = Means(*sums)
	r.Identity.Partial = partial
	r.OutputBytes, r.OutputBlocksSHA256, r.OutputHashBlock = 12_000, strings.Repeat("e3", 32), lustre.HashBlockBytes
	return r
}

// TestGoldenReport: the run report's bytes as WriteTo writes them (field names, order, nesting,
// number formats), for a finished 2-rank job after a checkpoint and for a run refused before
// it had a job folder. Nothing is masked: the clock is fixed, the input is all constants. The
// file read back passes Decode's checks and writes the same bytes again.
func TestGoldenReport(t *testing.T) {
	failed := &Report{Version: Version, Outcome: lustre.Failed, ExitStatus: 3, Output: "/data/out.mp4", Target: "/data/in.mp4",
		Error:   "run: target /data/in.mp4: ffprobe found no video stream: give a video or an image to -t",
		Sources: []string{"/data/face.jpg"}, Finished: goldenClock, Seconds: 0.42, LastSeconds: 0.42, Ranks: 1}
	for _, c := range []struct {
		name string
		r    *Report
	}{{"report-complete", goldenComplete()}, {"report-failed", failed}} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.mp4.report.json")
			if err := c.r.WriteTo(path); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			testenv.Golden(t, c.name, data)
			back, err := Decode(data, path)
			if err != nil {
				t.Fatalf("the golden report does not read back: %v", err)
			}
			again, _ := json.MarshalIndent(back, "", "  ")
			if !bytes.Equal(append(again, '\n'), data) {
				t.Errorf("the report read back writes other bytes:\n%s", again)
			}
		})
	}
}
