package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/swap"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// The benchmarks run on the demo clip (make demo / make test create it): 1280×720, 25 fps,
// 150 frames, one face of 200–270 px.

func demoClip(b *testing.B) (job.Config, *video.Info) {
	b.Helper()
	clip := filepath.Join(testenv.Cache(b), "demo", "target.mp4")
	cfg := job.Default()
	cfg.ModelsDir = filepath.Join(testenv.Cache(b), "models")
	cfg.OnnxruntimeLibrary = testenv.ORTLibrary(b)
	cfg.SourcePaths = []string{testenv.Sample(b, "grace_hopper.png")}
	cfg.TargetPath = clip
	info, err := video.Probe(context.Background(), clip)
	if err != nil {
		b.Fatalf("%v (run `make demo` to create the demo clip)", err)
	}
	return cfg, info
}

func loadModels(b *testing.B, cfg job.Config) *Models {
	b.Helper()
	m, err := LoadModels(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := m.Analyse(context.Background(), nil); err != nil { // nil: no reference frame to decode
		b.Fatal(err)
	}
	return m
}

// frames decodes the first n frames of the clip.
func frames(b *testing.B, info *video.Info, n int) []*raster.Image {
	b.Helper()
	dec, err := video.OpenDecoder(context.Background(), info, 0, n)
	if err != nil {
		b.Fatal(err)
	}
	defer dec.Close()
	out := make([]*raster.Image, n)
	for i := range out {
		out[i] = raster.New(info.Width, info.Height)
		if err := dec.Next(out[i].Bytes()); err != nil {
			b.Fatal(err)
		}
	}
	return out
}

// BenchmarkStage: the cost of each stage on one worker, per frame (detect) or per face.
func BenchmarkStage(b *testing.B) {
	cfg, info := demoClip(b)
	m := loadModels(b, cfg)
	fs := frames(b, info, 20)
	a, err := m.newAnalyser(false)
	if err != nil {
		b.Fatal(err)
	}
	defer a.close()
	an := a.dlib
	b.Run("detect-per-frame", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := an.det.Detect(fs[i%len(fs)], cfg.FaceDetectorScore); err != nil {
				b.Fatal(err)
			}
		}
	})
	faces := make([]face.Face, len(fs))
	for i, f := range fs {
		got, err := an.Faces(f)
		if err != nil || len(got) == 0 {
			b.Fatalf("frame %d: no face", i)
		}
		faces[i] = got[0]
	}
	b.Run("landmarks-per-face", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			f := faces[i%len(faces)]
			an.landmarks(fs[i%len(fs)], &f)
		}
	})
	b.Run("swap-per-face", func(b *testing.B) {
		sw := swap.NewSwapper(m.source, swap.DefaultOptions())
		work := raster.New(info.Width, info.Height)
		for i := 0; i < b.N; i++ {
			copy(work.Pix, fs[i%len(fs)].Pix)
			sw.Apply(work, &faces[i%len(faces)].Landmarks)
		}
	})
	// The identity measure of one swapped face (the recognizer before and after the swap, the
	// landmarker again after it): a run pays it on every job.IdentityStride-th frame.
	b.Run("identity-per-measured-face", func(b *testing.B) {
		im, err := m.newIdentityMeter(a)
		if err != nil || im == nil {
			b.Fatalf("no identity meter (%v): is fr_feature.onnx fetched?", err)
		}
		defer im.close()
		sel := []int{0}
		for i := 0; i < b.N; i++ {
			f := faces[i%len(faces)]
			if err := im.pick(0, fs[i%len(fs)], []face.Face{f}, sel); err != nil {
				b.Fatal(err)
			}
			if err := im.after(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkProcessing: detect + landmarks + swap alone (no codec), all cores, frames/s.
func BenchmarkProcessing(b *testing.B) {
	cfg, info := demoClip(b)
	cfg.IdentityMeasure = "off" // Process without frame positions would measure every frame
	m := loadModels(b, cfg)
	fs := frames(b, info, 24)
	ws, err := m.Workers(benchCPUs(cfg).Workers)
	if err != nil {
		b.Fatal(err)
	}
	defer CloseWorkers(ws)
	work := make([]*raster.Image, len(ws))
	for i := range work {
		work[i] = raster.New(info.Width, info.Height)
	}
	b.ResetTimer()
	var wg sync.WaitGroup
	per := (b.N + len(ws) - 1) / len(ws)
	for k, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				copy(work[k].Pix, fs[(k+i*len(ws))%len(fs)].Pix)
				if err := w.Process(work[k]); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(per*len(ws))/b.Elapsed().Seconds(), "frames/s")
}

// BenchmarkCodecFloor: decode + encode of the whole clip with no processing: the floor the
// pipeline can approach.
func BenchmarkCodecFloor(b *testing.B) {
	cfg, info := demoClip(b)
	cfg.Processors = []string{job.ProcessorNone}
	benchEncode(b, cfg, info, []Worker{passWorker{}})
}

// BenchmarkEndToEnd: the whole clip, decode → swap → encode, frames/s.
func BenchmarkEndToEnd(b *testing.B) {
	cfg, info := demoClip(b)
	m := loadModels(b, cfg)
	ws, err := m.Workers(benchCPUs(cfg).Workers)
	if err != nil {
		b.Fatal(err)
	}
	defer CloseWorkers(ws)
	benchEncode(b, cfg, info, ws)
}

func benchEncode(b *testing.B, cfg job.Config, info *video.Info, ws []Worker) {
	out := filepath.Join(b.TempDir(), "out.mkv")
	sp := specOf(b, cfg, info)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		src, err := OpenFrames(context.Background(), sp, info, 0, info.Frames)
		if err != nil {
			b.Fatal(err)
		}
		err = EncodeSegments(context.Background(), context.Background(), sp, src, []Segment{{Start: 0, End: info.Frames, Path: out}}, ws, nil, func(int, int, int, *lustre.IdentitySums) error { return nil })
		src.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*info.Frames)/b.Elapsed().Seconds(), "frames/s")
}

// benchCPUs is the CPU budget a one-rank run decides, with its ffmpeg threads set as the
// driver sets them.
func benchCPUs(cfg job.Config) rank.CPUBudget {
	b := rank.DecideCPUs(rank.ReadCPUFacts(cfg.ExecutionThreadCount, 1, os.Getenv))
	video.SetThreads(b.FFmpegThreads)
	return b
}

// BenchmarkIdentity: the default pipeline over a whole clip, and the run report's identity
// measure of it (fr_feature's cosine similarity, a sample of frames: job.IdentityStride): after (the
// output face to the source), before (the target face to the source), to_target (the output
// face to the target face); frames/s with the measure, and without it (demo-off) for its cost.
// The clips: the demo clip with grace_hopper.png as the source, and close-ups of either sample
// (testenv.CloseUpClip) with the other as the source.
func BenchmarkIdentity(b *testing.B) {
	demo := filepath.Join(testenv.Cache(b), "demo", "target.mp4")
	for _, c := range []struct {
		name, source, target string
		off                  bool
	}{
		{"demo", "grace_hopper.png", demo, false},
		{"demo-off", "grace_hopper.png", demo, true},
		{"closeup-astronaut", "grace_hopper.png", "", false},
		{"closeup-grace", "astronaut.png", "", false},
	} {
		b.Run(c.name, func(b *testing.B) {
			cfg, _ := demoClip(b)
			cfg.SourcePaths = []string{testenv.Sample(b, c.source)}
			cfg.TargetPath = c.target
			if c.target == "" {
				other := map[string]string{"grace_hopper.png": "astronaut.png", "astronaut.png": "grace_hopper.png"}[c.source]
				cfg.TargetPath = testenv.CloseUpClip(b, other)
			}
			if c.off {
				cfg.IdentityMeasure = "off"
			}
			info, err := video.Probe(context.Background(), cfg.TargetPath)
			if err != nil {
				b.Fatal(err)
			}
			m := loadModels(b, cfg)
			ws, err := m.Workers(benchCPUs(cfg).Workers)
			if err != nil {
				b.Fatal(err)
			}
			defer CloseWorkers(ws)
			benchEncode(b, cfg, info, ws)
			if c.off {
				return
			}
			id := report.Means(*m.IdentitySums())
			if id == nil {
				b.Fatal("no face measured")
			}
			b.ReportMetric(id.After, "after")
			b.ReportMetric(id.Before, "before")
			b.ReportMetric(id.ToTarget, "to_target")
			b.ReportMetric(float64(id.Faces)/float64(b.N), "faces")
		})
	}
}
