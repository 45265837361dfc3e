package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/audio"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/landmark"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/progress"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/spec"
	"github.com/facefusion-hpc/facefusion/internal/swap"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// ProgressFunc makes the counter for a run of total frames; the returned func closes it.
type ProgressFunc func(total int) (progress.Counter, func())

// Models are what a process loads once: the runtime, the landmarker and the prepared source.
type Models struct {
	cfg    job.Config
	log    *logging.Logger // the job's: model warnings, once per process (logOnce)
	lm     *landmark.Predictor
	source *swap.Source
	// FaceFusion's models: the source identity and the reference face (rank 0 finds them).
	sourceEmbedding *face.Embedding
	reference       *face.Embedding
	// sourceClass is the largest source face's class, what face_selector_gender and _race
	// auto stand for (nil: not needed, or no source face).
	sourceClass *face.Class
	// sourceFrame and sourceFive are the source face of the swappers that take it as a crop
	// (blendswap, uniface): FaceFusion's first source image and its source face's five points.
	sourceFrame *raster.Image
	sourceFive  [5]geom.Pt
	stats       *Stats // every worker's and every EncodeRange's counts and stage times
	// The identity measure (nil when the rank does not measure) and the classic swapper's
	// source face it embeds.
	identity  *identity
	sourceImg *raster.Image
	sourceLm  face.Landmarks68
	// engines are the rank's model sessions: one per model, shared by every worker (and rank
	// 0's analysis before them), closed by Close.
	engines *infer.EngineSet
	// voice is the source audio's features (lip_syncer; lipsync.go), nil without.
	voice *audio.Track
}

// LoadModels initialises ONNX Runtime and loads the landmarker; every missing file is an
// Environment fault naming the file and what to do. The models' warnings go to log.
func LoadModels(cfg job.Config, log *logging.Logger) (*Models, error) {
	if !cfg.RunsModels() {
		return &Models{cfg: cfg, log: log, stats: new(Stats)}, nil // frames pass through: no model, no runtime
	}
	for _, f := range EmbeddedModelFiles(cfg) {
		if st, err := infer.ModelStat(f.Path); err != nil || st.Size() == 0 {
			return nil, fault.AsEnvironment(&ModelFileError{fmt.Errorf("model file %s is missing (models folder from %s): run `make fetch` (or `make install`), or point models_dir (--models-dir) or $%s at the folder holding it", f.Path, cfg.ModelsLocation().From, job.ModelsEnv)})
		}
	}
	if err := InitRuntime(cfg); err != nil {
		return nil, err
	}
	// FaceFusion's model files: present, checksums (when given) and signatures right, before
	// any frame is read. A sha256 other than FaceFusion's published one only warns: sites
	// convert and re-export models.
	specs, err := catalog.Specs(ModelNames(cfg)...)
	if err != nil {
		return nil, fault.AsUsage(err)
	}
	reports, err := infer.ListModels(cfg.ModelPath(""), specs, cfg.ModelSHA256)
	if err != nil {
		return nil, fault.AsUsage(err)
	}
	for _, r := range reports {
		switch r.State {
		case infer.ModelMissing:
			get := "run `facefusion force-download` with the job's flags, put FaceFusion's file there"
			if pkg := catalog.Must(r.Name).Package; pkg != "" { // not FaceFusion's: make fetch brings it
				get = fmt.Sprintf("run `make fetch` (%s)", pkg)
			}
			return nil, fault.AsEnvironment(&ModelFileError{fmt.Errorf("model %s: file %s is missing (models folder from %s): %s, or point models_dir (--models-dir) or $%s at the folder holding it", r.Name, r.Path, cfg.ModelsLocation().From, get, job.ModelsEnv)})
		case infer.ModelRefused:
			m := catalog.Must(r.Name)
			if m.Package != "" {
				return nil, fault.AsEnvironment(&ModelFileError{fmt.Errorf("%s: `rm %s && make fetch` fetches it again (%s)", r.Detail, r.Path, m.Package)})
			}
			if m.Base != "" { // FaceFusion's; force-download keeps a file with other bytes unless --force
				return nil, fault.AsEnvironment(&ModelFileError{fmt.Errorf("%s (`facefusion force-download --force` with the job's flags puts FaceFusion's in its place)", r.Detail)})
			}
			return nil, fault.AsEnvironment(&ModelFileError{fmt.Errorf("%s", r.Detail)})
		}
	}
	for _, r := range reports {
		if w := r.Warning(); w != "" {
			logOnce(log, cfg.UsesGPU(), "%s", w)
		}
	}
	m := &Models{cfg: cfg, log: log, stats: new(Stats), engines: infer.NewEngineSet(infer.EngineConfig{Workers: 1})}
	if name, why, warn := identityRecognizer(cfg, log); name != "" {
		m.identity = &identity{name: name}
	} else if warn {
		logOnce(log, cfg.UsesGPU(), "%s", why)
	} else if cfg.Swaps() {
		log.Debugf("identity measure: none (%s)", why)
	}
	if cfg.FaceLandmarkerModel != "dlib_68" || !cfg.FindsFaces() {
		return m, nil
	}
	if m.lm, err = loadPredictor(cfg.ModelPath(job.DlibFile)); err != nil {
		return nil, fault.AsEnvironment(err)
	}
	return m, nil
}

// ModelFileError is LoadModels' refusal of a model file this node lacks or finds damaged (not
// of the runtime or a session): another node may have it right.
type ModelFileError struct{ Err error }

func (e *ModelFileError) Error() string { return e.Err.Error() }
func (e *ModelFileError) Unwrap() error { return e.Err }

// predictors are the landmark models loaded in this process, by file (path, size and
// modification time): batch-run's targets share one (its load is most of a job's start-up).
// A predictor is read-only once loaded.
var predictors struct {
	sync.Mutex
	by map[string]*landmark.Predictor
}

func loadPredictor(path string) (*landmark.Predictor, error) {
	st, err := infer.ModelStat(path) // the bytes this process holds (infer.Preload), else the file's
	if err != nil {
		return landmark.Load(path) // its error names the file and what to do
	}
	key := fmt.Sprintf("%s|%d|%d", path, st.Size(), st.ModTime().UnixNano())
	predictors.Lock()
	defer predictors.Unlock()
	if p, ok := predictors.by[key]; ok {
		return p, nil
	}
	r, err := infer.ModelReader(path)
	if err != nil {
		return landmark.Load(path) // its error names the file and what to do
	}
	defer r.Close()
	p, err := landmark.Read(path, r)
	if err != nil {
		return nil, err
	}
	if predictors.by == nil {
		predictors.by = map[string]*landmark.Predictor{}
	}
	predictors.by[key] = p
	return p, nil
}

// InitRuntime loads the ONNX Runtime library once per process (ResolveProviders needs it to resolve the
// providers of a job that runs a model) and says where its GPU providers' plugin libraries are
// (registered when a provider is first asked for); a missing or broken library is an
// Environment fault.
func InitRuntime(cfg job.Config) error {
	pl := cfg.ProviderLocation()
	infer.SetProviderLibrary(pl.Path, pl.From)
	rt := cfg.RuntimeLocation()
	if _, err := os.Stat(rt.Path); err != nil {
		return fault.AsEnvironment(fmt.Errorf("ONNX Runtime library %s is missing: run `make fetch` (or `make install`), or set onnxruntime_library (--onnxruntime-library) or $%s", rt, job.RuntimeEnv))
	}
	if err := infer.Init(cfg.RuntimeLibrary()); err != nil {
		return fault.AsEnvironment(err)
	}
	return nil
}

// UseSource prepares the swapper's source from an analysed source image (on every rank, from
// what rank 0 broadcast).
func (m *Models) UseSource(img *raster.Image, lm *face.Landmarks68) error {
	src, err := swap.NewSource(img, lm)
	if err != nil {
		return fault.AsInput(fmt.Errorf("source: %w", err))
	}
	m.source, m.sourceImg, m.sourceLm = src, img, *lm
	return nil
}

func loadSource(p string) (*raster.Image, error) {
	img, err := raster.Load(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fault.AsInput(fmt.Errorf("source %s: no such file: check the path given to -s", p))
		}
		return nil, fault.AsInput(fmt.Errorf("source %w: give a PNG or JPEG photo", err))
	}
	return img, nil
}

func noFace(p string, cfg job.Config) error {
	return fault.AsInput(fmt.Errorf("source %s: no face found (detector score ≥ %g): use a photo with a clear, frontal face, or lower --face-detector-score", p, cfg.FaceDetectorScore))
}

// Stats are the counts and stage times of the workers m made and of the ranges they encoded.
func (m *Models) Stats() *Stats { return m.stats }

// NewWorker returns a frame worker with its own detector and swapper buffers.
func (m *Models) NewWorker() (Worker, error) {
	if !m.cfg.RunsModels() {
		return passWorker{st: m.stats}, nil
	}
	return m.newModelWorker()
}

// Close closes the rank's model sessions once no worker runs; a nil Models or one without
// models closes nothing.
func (m *Models) Close() error {
	if m == nil || m.engines == nil {
		return nil
	}
	return fault.AsInternal(m.engines.Close())
}

// CloseWorkers releases the workers' buffers (their sessions are the Models').
func CloseWorkers(ws []Worker) {
	for _, w := range ws {
		if w, ok := w.(*modelWorker); ok {
			w.Close()
		}
	}
}

// LimitRuns bounds the runs in flight of each batch-1 model at n (the rank's CPUs): the buffers
// and ONNX Runtime's working memory they take then follow the CPUs, not the workers.
func (m *Models) LimitRuns(n int) {
	if m.engines != nil {
		m.engines.SetRuns(n)
	}
}

// Workers makes n workers, sharing the rank's sessions: each model's engine keeps a batch buffer
// per worker where its runs are batch 1.
func (m *Models) Workers(n int) ([]Worker, error) {
	if m.engines != nil {
		if err := m.engines.SetWorkers(n); err != nil {
			return nil, fault.AsEnvironment(err)
		}
	}
	ws := make([]Worker, 0, n)
	for i := 0; i < n; i++ {
		w, err := m.NewWorker()
		if err != nil {
			CloseWorkers(ws)
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, nil
}

// inputSource marks decode failures as bad input: a target that probes but does not decode
// is truncated or corrupt.
type inputSource struct {
	ctx context.Context
	dec FrameSource
}

func (s inputSource) Next(buf []byte) error {
	err := s.dec.Next(buf)
	if err != nil && err != io.EOF && s.ctx.Err() == nil {
		return fault.AsInput(fmt.Errorf("%w; the file is truncated or corrupt: check that it plays", err))
	}
	return err
}

// Frames is one decode of a rank's consecutive output frames [start, end) of a FrameMap, cut
// into segments by EncodeSegments: a rank's chunks are contiguous, and one ffmpeg for all of
// them saves a process start and a seek (up to a GOP decoded and thrown away) for every chunk.
// With a time window of K frames (smoothing), the decode starts before and ends after: K halo frames each
// side, clipped to the job's output frames (the video's, for the face tracker), analysed only
// (see Window).
type Frames struct {
	r             *video.Resampler
	start, end    int
	before, after int // halo frames decoded before start and after end
}

// OpenFrames starts the decode of the output frames [start, end) of s's map from the target of
// info, at the size the frames are processed at, and of the halo frames around them that the
// job's time window needs.
func OpenFrames(ctx context.Context, s *spec.Spec, info *video.Info, start, end int) (*Frames, error) {
	pw, ph := s.ProcessSize()
	k, m := s.Window.Halo(), s.Map
	out0, out1 := m.Output()
	lo, hi, dm := out0, out1, m
	if s.Window.Tracks && !m.Resampled() {
		// FaceFusion's tracker reads a frame's neighbours from the whole video, past the trim
		// range: output frame i is target frame i there, so the decode may reach the video's ends.
		dm.Start, dm.End = 0, info.Frames
		lo, hi = dm.Output()
	}
	from, to := max(min(start, start-k), lo), min(max(end, end+k), hi)
	if start < out0 || end > out1 {
		from, to = start, end // OpenResampler names the range that is outside
	}
	r, err := video.OpenResampler(ctx, info, dm, from, to, pw, ph)
	if err != nil {
		return nil, fault.AsInput(err)
	}
	return &Frames{r: r, start: start, end: end, before: start - from, after: to - end}, nil
}

// Next is the frame the decode reads next (a halo frame before the run's first at the start),
// and End the end of the run's frames: a chunk that does not start at Next+Before cannot be read
// from f.
func (f *Frames) Next() int { return f.r.Frame() }
func (f *Frames) End() int  { return f.end }

// Close stops ffmpeg, whether or not every frame was read.
func (f *Frames) Close() error { return f.r.Close() }

// upTo reads f's frames (halo frames included) up to, not including, frame end, then says
// io.EOF; at the end of the decode, the decoder's own end (io.EOF once ffmpeg exited cleanly, or
// its late error).
type upTo struct {
	f   *Frames
	end int
}

func (u upTo) Next(buf []byte) error {
	if u.f.r.Frame() == u.end && u.end < u.f.end+u.f.after {
		return io.EOF
	}
	return u.f.r.Next(buf)
}

// RunImage processes an image target into an image output beside which nothing is left. It
// returns the log line of FaceReport; with fail_if_no_face an image without a face is an
// error, and nothing is written.
func (m *Models) RunImage(ctx context.Context, cfg job.Config) (string, error) {
	start := time.Now()
	img, err := raster.Load(cfg.TargetPath)
	m.stats.since(StageDecode, start)
	if err != nil {
		return "", fault.AsInput(fmt.Errorf("target %w: give a readable PNG or JPEG, or a video", err))
	}
	// A scale that leaves nothing, or more than ffmpeg takes, is refused before the work.
	im, err := spec.ResolveImage(cfg, img.W, img.H)
	if err != nil {
		return "", err
	}
	w, err := m.NewWorker()
	if err != nil {
		return "", err
	}
	defer CloseWorkers([]Worker{w})
	if ctx.Err() != nil { // stopped: the swap is not begun, or not written
		return "", context.Cause(ctx)
	}
	return m.runFFImage(ctx, cfg, im, img, w)
}
