package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	_ "github.com/facefusion-hpc/facefusion/internal/processors/agemodifier"        // registers age_modifier
	_ "github.com/facefusion-hpc/facefusion/internal/processors/backgroundremover"  // registers background_remover
	_ "github.com/facefusion-hpc/facefusion/internal/processors/deepswapper"        // registers deep_swapper
	_ "github.com/facefusion-hpc/facefusion/internal/processors/expressionrestorer" // registers expression_restorer
	"github.com/facefusion-hpc/facefusion/internal/processors/facedebugger"
	_ "github.com/facefusion-hpc/facefusion/internal/processors/faceeditor"   // registers face_editor
	_ "github.com/facefusion-hpc/facefusion/internal/processors/faceenhancer" // registers face_enhancer
	"github.com/facefusion-hpc/facefusion/internal/processors/faceswapper"
	_ "github.com/facefusion-hpc/facefusion/internal/processors/framecolorizer" // registers frame_colorizer
	_ "github.com/facefusion-hpc/facefusion/internal/processors/frameenhancer"  // registers frame_enhancer
	_ "github.com/facefusion-hpc/facefusion/internal/processors/lipsyncer"      // registers lip_syncer
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/swap"
	"github.com/facefusion-hpc/facefusion/internal/temporal"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// sessionConfig is how every FaceFusion model of this job opens: models_dir, the runtime,
// the providers and the batch size.
func sessionConfig(cfg job.Config, name string) infer.SessionConfig {
	dir := cfg.ModelPath("")
	return infer.SessionConfig{
		ModelsDir: dir,
		Execution: infer.Execution{
			Providers: cfg.ExecutionProviders, DeviceID: cfg.Device, Threads: 1,
			TensorRTFP16: cfg.TensorRTFP16, TensorRTCacheDir: cfg.TensorRTCacheDir,
		},
		MaxBatch: batchSize(cfg),
		SHA256:   cfg.ModelSHA256[name],
	}
}

// batchSize is execution_batch_size, or 8 when a GPU provider is asked for and 1 on CPU,
// where batching buys nothing but latency.
func batchSize(cfg job.Config) int {
	if cfg.ExecutionBatchSize > 0 {
		return cfg.ExecutionBatchSize
	}
	if cfg.UsesGPU() {
		return 8
	}
	return 1
}

var (
	logMu  sync.Mutex
	logged = map[string]bool{}
)

// sessionLog is where a model session's lines go, each once per process: warnings, except that
// unpinned buffers cost a job without a GPU provider nothing, so there that line is detail.
func sessionLog(cfg job.Config, log *logging.Logger) func(format string, args ...any) {
	gpu := cfg.UsesGPU()
	return func(format string, args ...any) { logOnce(log, gpu, format, args...) }
}

// logOnce keeps per-session log lines (provider fallback, unpinned buffers) to one per process.
func logOnce(log *logging.Logger, gpu bool, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	key := msg // the same fallback for every model is one line
	if i := strings.Index(msg, "execution providers:"); i >= 0 {
		key = msg[i:]
	}
	logMu.Lock()
	defer logMu.Unlock()
	if !logged[key] {
		logged[key] = true
		if !gpu && strings.HasPrefix(msg, infer.UnpinnedNote) {
			log.Debugf("%s", msg)
		} else {
			log.Warnf("%s", msg)
		}
	}
}

func maskOptions(cfg job.Config) adapters.MaskOptions {
	m := adapters.DefaultMaskOptions()
	if len(cfg.FaceMaskTypes) > 0 {
		m.Types = cfg.FaceMaskTypes
	}
	m.Blur = cfg.FaceMaskBlur
	m.Padding = cfg.MaskPadding()
	m.Occluder = cfg.FaceOccluderModel
	m.Parser = cfg.FaceParserModel
	m.Areas = cfg.MaskAreaIndexes()
	m.Regions = cfg.MaskRegionClasses()
	return m
}

// ModelNames lists the FaceFusion models the job needs (catalog names): checked before any
// frame, and what `facefusion models` lists.
func ModelNames(cfg job.Config) []string {
	var names []string
	pick := func(k catalog.Kind, sel string) {
		if m, err := catalog.Select(k, sel); err == nil {
			names = append(names, m.Name)
		}
	}
	if cfg.EnhancesFrames() {
		pick(catalog.FrameEnhancer, cfg.FrameEnhancerModel)
	}
	// The whole-frame processors' models; a job of them alone finds no faces.
	if cfg.Colorizes() {
		pick(catalog.Colorizer, cfg.FrameColorizerModel)
	}
	if cfg.RemovesBackground() {
		pick(catalog.BackgroundRemover, cfg.BackgroundRemoverModel)
	}
	if !cfg.FindsFaces() {
		return names
	}
	if cfg.FaceDetectorModel == "many" {
		for _, sel := range facemodel.ManyDetectors {
			pick(catalog.Detector, sel)
		}
	}
	pick(catalog.Detector, cfg.FaceDetectorModel)
	if lms, ok := facemodel.LandmarkerModels(cfg.FaceLandmarkerModel); ok {
		names = append(append(names, lms...), facemodel.Fan68From5.Name) // fan_68_5 gives the angle
	}
	if cfg.NeedsClasses() {
		names = append(names, facemodel.FairFace.Name)
	}
	if cfg.Swaps() && cfg.FaceSwapperModel != "classic" {
		names = append(names, facemodel.ArcFace.Name)
	} else if cfg.FaceSelectorMode == "reference" {
		names = append(names, RecognizerName(cfg)) // fr_feature for the embedded default
	}
	if cfg.Swaps() && cfg.FaceSwapperModel != "classic" {
		pick(catalog.Swapper, cfg.FaceSwapperModel)
		if sw, err := catalog.Select(catalog.Swapper, cfg.FaceSwapperModel); err == nil && sw.Converter != "" {
			names = append(names, sw.Converter)
		}
	}
	if cfg.ModifiesAge() {
		pick(catalog.AgeModifier, cfg.AgeModifierModel)
	}
	if cfg.DeepSwaps() {
		pick(catalog.DeepSwapper, cfg.DeepSwapperModel) // a custom model is the site's: nothing to fetch
	}
	if cfg.Enhances() {
		pick(catalog.Enhancer, cfg.FaceEnhancerModel)
	}
	if cfg.RestoresExpression() {
		for _, part := range []string{"feature_extractor", "motion_extractor", "generator"} {
			if m, err := catalog.Part(cfg.ExpressionRestorerModel, part); err == nil {
				names = append(names, m.Name)
			}
		}
	}
	if cfg.EditsFaces() {
		for _, part := range []string{"feature_extractor", "motion_extractor", "eye_retargeter", "lip_retargeter", "stitcher", "generator"} {
			if m, err := catalog.Part(cfg.FaceEditorModel, part); err == nil && !slices.Contains(names, m.Name) {
				names = append(names, m.Name)
			}
		}
	}
	// The enhancer, the expression restorer, the age modifier and the lip syncer mask by
	// occlusion too; the swappers and face_debugger's face-mask by region as well.
	if (cfg.Swaps() || cfg.DeepSwaps() || cfg.Enhances() || cfg.RestoresExpression() || cfg.ModifiesAge() || cfg.LipSyncs() || debugMasker(cfg)) && slices.Contains(cfg.FaceMaskTypes, "occlusion") {
		if ms, err := adapters.Occluders(cfg.FaceOccluderModel); err == nil {
			for _, m := range ms {
				names = append(names, m.Name)
			}
		}
	}
	if (cfg.Swaps() || cfg.DeepSwaps() || debugMasker(cfg)) && slices.Contains(cfg.FaceMaskTypes, "region") {
		if m, err := adapters.ParserModel(cfg.FaceParserModel); err == nil {
			names = append(names, m.Name)
		}
	}
	names = append(names, lipSyncModels(cfg)...) // lipsync.go
	return names
}

// ModelFiles are the paths of every model file the job loads, none when frames pass through:
// the embedded default's BlazeFace and dlib files and FaceFusion's (ModelNames). LoadModels
// checks them and the resume fingerprint hashes them: one list.
func ModelFiles(cfg job.Config) ([]string, error) {
	if !cfg.RunsModels() {
		return nil, nil
	}
	var files []string
	for _, f := range EmbeddedModelFiles(cfg) {
		files = append(files, f.Path)
	}
	for _, name := range ModelNames(cfg) {
		m, err := catalog.Lookup(name)
		if err != nil {
			return nil, err
		}
		files = append(files, filepath.Join(cfg.ModelPath(""), m.File))
	}
	if m, err := cfg.DeepSwapperEntry(); cfg.DeepSwaps() && err == nil && strings.HasPrefix(m.Name, catalog.DeepSwapperCustomDir+"/") {
		files = append(files, filepath.Join(cfg.ModelPath(""), m.File)) // a site's: fingerprinted and broadcast too
	}
	return files, nil
}

// ReadFiles are the files a rank reads to load cfg's models: ModelFiles, the identity
// measure's recognizer where the job measures with one it does not run itself, and beside each
// .onnx its MODEL.hash (FaceFusion's CRC32, read where it exists: Optional). The driver's model
// broadcast sends these.
func ReadFiles(cfg job.Config) ([]ReadFile, error) {
	files, err := ModelFiles(cfg)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	if name := MeasureRecognizer(cfg); name != "" && !slices.Contains(ModelNames(cfg), name) {
		m, err := catalog.Lookup(name)
		if err != nil {
			return nil, err
		}
		files = append(files, filepath.Join(cfg.ModelPath(""), m.File))
	}
	var out []ReadFile
	for _, f := range files {
		out = append(out, ReadFile{Path: f})
		if ext := filepath.Ext(f); ext == ".onnx" || ext == ".dfm" { // a deep_swapper model is a .dfm
			out = append(out, ReadFile{Path: infer.HashPath(f), Optional: true})
		}
	}
	return out, nil
}

// ReadFile is one of ReadFiles: a path, and whether the job reads it only where it exists.
type ReadFile struct {
	Path     string
	Optional bool
}

// EmbeddedModelFiles are the embedded default's model files the job loads (`make fetch` brings
// them; FaceFusion publishes no hash of them).
func EmbeddedModelFiles(cfg job.Config) []EmbeddedFile {
	var files []EmbeddedFile
	if !cfg.FindsFaces() {
		return nil // the detector and landmarker run only for the face processors
	}
	if cfg.FaceDetectorModel == "blazeface" {
		files = append(files, EmbeddedFile{"blazeface", cfg.ModelPath(job.BlazeFaceFile)})
	}
	if cfg.FaceLandmarkerModel == "dlib_68" {
		files = append(files, EmbeddedFile{"dlib_68", cfg.ModelPath(job.DlibFile)})
	}
	return files
}

// EmbeddedFile is one of the embedded default's model files: the model's name in the job's keys
// and the file's path.
type EmbeddedFile struct{ Name, Path string }

// analyser finds faces with the configured detector and landmarker and, when asked,
// their embeddings. One per goroutine.
type analyser struct {
	cfg   job.Config
	det   Detector
	dlib  *Analyzer                // dlib's landmarks (reuses its two-pass box fit)
	lm    *adapters.FaceLandmarker // FaceFusion's landmarker, or nil for dlib's
	rec   *adapters.Recognizer
	cls   *adapters.Classifier // fairface, where a face selector filter reads the class
	faces []face.Face
	refs  []adapters.FaceRef
	embs  []face.Embedding
	st    *Stats // nil for rank 0's analysis of the source and the reference: no frame of the target
}

func (m *Models) newAnalyser(withEmbeddings bool) (*analyser, error) {
	cfg := m.cfg
	a := &analyser{cfg: cfg}
	var err error
	if cfg.FaceDetectorModel == "blazeface" {
		a.det, err = adapters.NewBlazeFace(cfg.ModelPath(job.BlazeFaceFile), m.sessionConfig(""))
	} else {
		size, _ := cfg.DetectorSize()
		opts := adapters.FrameOptions{Margin: cfg.DetectorMargin(), Angles: cfg.FaceDetectorAngles}
		a.det, err = adapters.OpenFaceDetector(cfg.FaceDetectorModel, size, opts, m.sessionConfig)
	}
	if err != nil {
		return nil, fault.AsEnvironment(err)
	}
	if _, ok := facemodel.LandmarkerModels(cfg.FaceLandmarkerModel); ok {
		if a.lm, err = adapters.NewFaceLandmarker(cfg.FaceLandmarkerModel, m.sessionConfig); err != nil {
			a.close()
			return nil, fault.AsEnvironment(err)
		}
	} else {
		a.dlib = NewAnalyzer(a.det, m.lm, cfg.FaceDetectorScore)
	}
	if cfg.NeedsClasses() {
		if a.cls, err = adapters.NewClassifier(m.sessionConfig(facemodel.FairFace.Name)); err != nil {
			a.close()
			return nil, fault.AsEnvironment(err)
		}
	}
	if withEmbeddings {
		name := RecognizerName(cfg)
		if a.rec, err = adapters.OpenRecognizer(name, m.sessionConfig(name)); err != nil {
			a.close()
			return nil, fault.AsEnvironment(err)
		}
	}
	return a, nil
}

func (a *analyser) close() {
	if a.det != nil {
		a.det.Close()
	}
	if a.lm != nil {
		a.lm.Close()
	}
	if a.rec != nil {
		a.rec.Close()
	}
	if a.cls != nil {
		a.cls.Close()
	}
}

// analyse returns the faces of img (reused by the next call), with embeddings when the
// analyser has a recognizer.
func (a *analyser) analyse(img *raster.Image) ([]face.Face, error) {
	a.faces = a.faces[:0]
	start := time.Now()
	dets, err := a.det.Detect(img, a.cfg.FaceDetectorScore)
	a.st.since(StageDetect, start)
	if err != nil {
		return nil, err
	}
	a.st.add(facesFound, len(dets))
	start = time.Now()
	for _, d := range dets {
		f := face.Face{Detection: d, DetectorFive: d.Five}
		if a.lm != nil {
			if err := a.lm.Landmark(img, &f, a.cfg.FaceLandmarkerScore); err != nil {
				return nil, err
			}
		} else {
			a.dlib.landmarks(img, &f)
			f.LandmarkScore = 1
			f.Five = f.Landmarks.Five()
		}
		a.faces = append(a.faces, f)
	}
	a.st.since(StageLandmarks, start)
	if a.cls != nil {
		start = time.Now() // FaceFusion classifies in create_faces: part of finding faces
		for i := range a.faces {
			c, err := a.cls.Classify(adapters.FaceRef{Frame: img, Five: a.faces[i].Five})
			if err != nil {
				return nil, err
			}
			a.faces[i].Class = c
		}
		a.st.since(StageDetect, start)
	}
	if a.rec != nil && len(a.faces) > 0 {
		start = time.Now() // the recognizer is part of finding faces: the detect stage
		a.refs = a.refs[:0]
		for i := range a.faces {
			a.refs = append(a.refs, adapters.FaceRef{Frame: img, Five: a.rec.Points(&a.faces[i])})
		}
		a.embs = slices.Grow(a.embs[:0], len(a.faces))[:len(a.faces)]
		if err := a.rec.Embed(a.refs, a.embs); err != nil {
			return nil, err
		}
		for i := range a.faces {
			a.faces[i].Embedding = a.embs[i]
		}
		a.st.since(StageDetect, start)
	}
	return a.faces, nil
}

// selector is the job's face selector; source is the class auto stands for (nil: none).
func selector(cfg job.Config, source *face.Class) facemodel.Selector {
	return facemodel.Selector{
		Mode: facemodel.SelectorMode(cfg.FaceSelectorMode), Order: facemodel.SelectorOrder(cfg.FaceSelectorOrder),
		ReferencePosition: cfg.ReferenceFacePosition, ReferenceDistance: cfg.ReferenceFaceDistance,
		Gender: cfg.FaceSelectorGender, Race: cfg.FaceSelectorRace,
		AgeStart: cfg.FaceSelectorAgeStart, AgeEnd: cfg.FaceSelectorAgeEnd, Source: source,
	}
}

// modelWorker runs FaceFusion's pipeline on batches of consecutive frames: analyse and
// select per frame, then every selected face of the batch goes through each processor in
// one batched model call.
type modelWorker struct {
	cfg   job.Config
	an    *analyser
	sel   facemodel.Selector
	ref   *face.Embedding
	procs *processors.Chain // the job's processors, in its order
	idx   []int
	batch processors.Batch // Apply's frames and selected faces, handed to each processor
	// originals are the batch's frames as decoded, kept for the processors that read them
	// (Batch.Originals), reused batch after batch
	originals []*raster.Image
	// the output index of the worker's Stream's first frame and each batch frame's Stream
	// index (frameIndexed): the batch's Indices
	first int
	index []int
	// frameFaces are ProcessBatch's faces of each frame
	frameFaces [][]face.Face
	// ProcessBatch's face tracker over one frame, and its faces (face_tracker_score)
	tracker temporal.Tracker
	tracked []face.Face
	faced   int    // frames in which a face was selected for the processors (framesWithFaces)
	hits    []bool // hits[i]: a face was selected in frame i of the last batch (facedIn)
	st      *Stats
	id      *identityMeter // nil: no identity measure
	// the batch's frame sizes before a step, and its faces scaled onto the frames a step
	// upscaled (followFrames)
	sizes [][2]int
	moved []face.Face
	outs  []*raster.Image // setOutputs', for the next Apply only
	tone  swap.ToneMeter  // the faces' tones, for the classic swap's window (Analyse, ownTones)
}

func (m *Models) newModelWorker() (*modelWorker, error) { return m.openWorker(true) }

// Open opens the engines of every model the job's workers run (and reads what their adapters
// read from the model files) before the source identity is known: a rank other than 0 does it
// while rank 0 plans, and the workers it makes later share them (Models.Workers). It makes one
// worker without a source and closes it; the sessions stay in the rank's engine set.
func (m *Models) Open() error {
	if !m.cfg.RunsModels() {
		return nil
	}
	w, err := m.openWorker(false)
	if err != nil {
		return err
	}
	w.Close()
	return nil
}

// openWorker makes a worker; withSource false leaves its swapper without the source (Open).
func (m *Models) openWorker(withSource bool) (*modelWorker, error) {
	cfg := m.cfg
	w := &modelWorker{cfg: cfg, sel: selector(cfg, m.sourceClass), ref: m.reference, st: m.stats, tracker: temporal.Tracker{Score: cfg.FaceTrackerScore}}
	if cfg.RemovesBackground() && !video.IsImagePath(cfg.TargetPath) {
		logOnce(m.log, cfg.UsesGPU(), "background_remover: its mask (FaceFusion's alpha) is dropped: this program's video segments hold no alpha; the fill colour is applied")
	}
	if cfg.Tracks() && cfg.FaceLandmarkSmoothing > 0 {
		logOnce(m.log, cfg.UsesGPU(), "face_tracker_score %g: FaceFusion's face tracker gives the faces; face_landmark_smoothing (facefusion-hpc's own) is not applied", cfg.FaceTrackerScore)
	}
	var err error
	if cfg.FindsFaces() { // whole-frame processors alone find no faces
		if w.an, err = m.newAnalyser(cfg.FaceSelectorMode == "reference" || faceswapper.Balances(cfg)); err != nil {
			return nil, err
		}
		w.an.st = m.stats
		if w.id, err = m.newIdentityMeter(w.an); err != nil {
			w.Close()
			return nil, fault.AsEnvironment(err)
		}
	}
	if w.procs, err = processors.Open(m.processorContext(withSource), cfg.Processors); err != nil {
		w.Close()
		return nil, fault.AsEnvironment(err)
	}
	return w, nil
}

// processorContext is what the job's processors open with: the source rank 0 found (none
// without withSource), the rank's sessions and the worker's stats.
func (m *Models) processorContext(withSource bool) *processors.Context {
	return &processors.Context{
		Config:  m.cfg,
		Session: m.sessionConfig,
		Mask:    maskOptions(m.cfg),
		Source: processors.Source{
			WithSource: withSource, Embedding: m.sourceEmbedding,
			Frame: m.sourceFrame, Five: m.sourceFive, Classic: m.source,
		},
		Voice: m.voiceFrames(),
		Stats: processorStats{m.stats},
	}
}

// processorStats counts the processors' work in the stages of Stats.
type processorStats struct{ st *Stats }

// processorStages are the stage of Stats each processor stage's time goes to, and the count
// its faces go to (noFaces: frame_enhancer's frames, counted by the encode).
var processorStages = map[processors.Stage]struct {
	stage Stage
	faces faceCount
}{
	processors.StageSwap:         {StageSwap, facesSwapped},
	processors.StageEnhance:      {StageEnhance, facesEnhanced},
	processors.StageFrameEnhance: {StageFrameEnhance, noFaces},
	processors.StageAge:          {StageAge, facesAgeModified},
	processors.StageDeepSwap:     {StageDeepSwap, facesDeepSwapped},
	processors.StageExpression:   {StageExpression, facesExpressionRestored},
	processors.StageFaceEditor:   {StageFaceEditor, facesEdited},
	processors.StageLipSync:      {StageLipSync, facesLipSynced},
}

func (p processorStats) Done(stage processors.Stage, start time.Time, faces int) {
	ps, ok := processorStages[stage]
	if !ok {
		return
	}
	p.st.since(ps.stage, start)
	if ps.faces != noFaces {
		p.st.add(ps.faces, faces)
	}
}

// Close releases the worker's sessions.
func (w *modelWorker) Close() {
	w.id.close()
	if w.an != nil {
		w.an.close()
	}
	if w.procs != nil {
		w.procs.Close()
	}
}

// debugMasker reports whether face_debugger's face-mask needs mask models.
func debugMasker(cfg job.Config) bool { return facedebugger.MasksWithModels(cfg) }

func (w *modelWorker) framesWithFaces() int { return w.faced }

// alpha is frame k of the last batch's alpha as the processors left it, nil for opaque.
func (w *modelWorker) alpha(k int) *raster.Alpha {
	if k < len(w.batch.Alphas) {
		return w.batch.Alphas[k]
	}
	return nil
}
func (w *modelWorker) facedIn(i int) bool { return w.hits[i] }
func (w *modelWorker) stats() *Stats      { return w.st }

// BatchSize is how many consecutive frames the worker takes at once: one where the frames are
// upscaled (frame_enhancer), whose tiles fill a batch of the model from one frame while every
// frame in flight holds an upscaled buffer (a 4K frame at ×4 is 398 MB).
func (w *modelWorker) BatchSize() int {
	if w.cfg.FrameScale() > 1 {
		return 1
	}
	return batchSize(w.cfg)
}

func (w *modelWorker) Process(img *raster.Image) error { return w.ProcessBatch([]*raster.Image{img}) }

// ProcessBatch processes consecutive frames in place: each frame's own faces, unsmoothed.
func (w *modelWorker) ProcessBatch(frames []*raster.Image) error {
	for len(w.frameFaces) < len(frames) {
		w.frameFaces = append(w.frameFaces, nil)
	}
	for k, img := range frames {
		if err := w.analyseFrame(k, img); err != nil {
			return err
		}
	}
	return w.Apply(frames, w.frameFaces[:len(frames)])
}

// ProcessOnto finds the faces in target and processes temp with them, in place: FaceFusion's
// image workflow, which detects on the target as read and pastes onto its ffmpeg copy, the
// faces scaled to the copy's size as its processors' scale_face does.
func (w *modelWorker) ProcessOnto(target, temp *raster.Image) error {
	if len(w.frameFaces) == 0 {
		w.frameFaces = append(w.frameFaces, nil)
	}
	if err := w.analyseFrame(0, target); err != nil {
		return err
	}
	if temp.W != target.W || temp.H != target.H {
		sx, sy := float64(temp.W)/float64(target.W), float64(temp.H)/float64(target.H)
		for i := range w.frameFaces[0] {
			scaleFace(&w.frameFaces[0][i], sx, sy)
		}
	}
	return w.Apply([]*raster.Image{temp}, w.frameFaces[:1])
}

// scaleFace is FaceFusion's face_creator.scale_face: the box and every set of points times
// (sx, sy).
func scaleFace(f *face.Face, sx, sy float64) {
	f.Box = geom.Rect{X0: f.Box.X0 * sx, Y0: f.Box.Y0 * sy, X1: f.Box.X1 * sx, Y1: f.Box.Y1 * sy}
	scale := func(ps []geom.Pt) {
		for i := range ps {
			ps[i] = geom.Pt{X: ps[i].X * sx, Y: ps[i].Y * sy}
		}
	}
	scale(f.Five[:])
	scale(f.DetectorFive[:])
	scale(f.Keypoints[:])
	scale(f.Landmarks[:])
	scale(f.Landmarks68From5[:])
}

// analyseFrame sets w.frameFaces[k] to img's faces.
func (w *modelWorker) analyseFrame(k int, img *raster.Image) error {
	var err error // the analyser's slice is reused by the next frame: a copy of each
	if w.frameFaces[k], err = w.analyseFaces(img, w.frameFaces[k][:0]); err != nil {
		return err
	}
	if w.cfg.Tracks() { // an image, FaceFusion's one target frame: tracked over itself
		own := w.frameFaces[k]
		w.tracked = w.tracker.Track(w.tracked[:0], 0, 0, 0, func(int) []face.Face { return own })
		w.frameFaces[k] = append(own[:0], w.tracked...)
	}
	return nil
}

// analyseFaces appends img's faces (detection and landmarks; and embeddings in reference mode)
// to dst: the analysis half of ProcessBatch. A job whose processors find no face
// (frame_enhancer alone) has none.
func (w *modelWorker) analyseFaces(img *raster.Image, dst []face.Face) ([]face.Face, error) {
	if w.an == nil {
		return dst, nil // no face processor: no face is looked for
	}
	faces, err := w.an.analyse(img)
	if err != nil {
		return dst, err
	}
	return append(dst, faces...), nil
}

// Analyse is analyseFaces for the window stage of StreamWindow, with what the window gathers
// measured on each face.
func (w *modelWorker) Analyse(img *raster.Image, dst []face.Face) ([]face.Face, error) {
	n := len(dst)
	dst, err := w.analyseFaces(img, dst)
	if err != nil {
		return dst, err
	}
	// The window smooths each face's tone with its landmarks into the steady tone the classic
	// swap reads (face.Face.SteadyTone): the face tracker and a window of 0 make none.
	if w.cfg.ClassicWindow() {
		for i := n; i < len(dst); i++ {
			dst[i].Tone = w.tone.Measure(img, dst[i].Box)
		}
	}
	return dst, nil
}

// FindCovers has the processors that look at faces (the classic swap) note what covers each of
// faces, smoothed, in img as the target gave it, for the window's vote (StreamWindow).
func (w *modelWorker) FindCovers(img *raster.Image, faces []face.Face) {
	for _, p := range w.procs.Steps() {
		if a, ok := p.(processors.FaceAnalyser); ok {
			for i := range faces {
				a.AnalyseFace(img, &faces[i])
			}
		}
	}
}

// ownTones measures, where the window gave a face its steady tone, the face's own tone on its
// (smoothed) box in the frame as the target gave it: the steady tone was measured on such
// frames, and the classic swap compares the two. Measured later, on the frame as the processors
// before it (or the swap of a face crossing it) left it, their change would count as the
// frame's and be undone on the face.
func (w *modelWorker) ownTones() {
	for _, f := range w.batch.Faces {
		if f.Face.SteadyTone.Weight > 0 {
			f.Face.Tone = w.tone.Measure(f.Frame, f.Face.Box)
		}
	}
}

// Apply selects faces[i] of frames[i] and runs the processors on them, in place: the
// processing half of ProcessBatch.
func (w *modelWorker) Apply(frames []*raster.Image, faces [][]face.Face) error {
	if err := w.selectFaces(frames, faces); err != nil {
		return err
	}
	w.ownTones()
	w.keepOriginals()
	// The identity measure reads the faces once the last processor that changes them has run,
	// before face_debugger draws on them (its dots are not the face).
	measureAt := w.procs.Measured()
	for i, p := range w.procs.Steps() {
		if i == measureAt {
			w.id.follow(w.batch.Frames)
			if err := w.id.after(); err != nil {
				return err
			}
		}
		w.noteSizes()
		if err := processors.Run(p, &w.batch); err != nil {
			return err
		}
		w.followFrames()
	}
	w.id.follow(w.batch.Frames)
	return w.id.after()
}

// FrameScale is how many times larger than the frames it is given the worker's processors make
// them (frame_enhancer's scale; 1 without it).
func (w *modelWorker) FrameScale() int { return w.cfg.FrameScale() }

// setOutputs gives the next Apply buffers of FrameScale times the frames' size to upscale them
// into (processors.Batch.Out).
func (w *modelWorker) setOutputs(outs []*raster.Image) { w.outs = outs }

// Frame is frame k of the batch Apply processed last, as its processors left it: frames[k], or
// the larger image a processor of whole frames (frame_enhancer) put in its place.
func (w *modelWorker) Frame(k int) *raster.Image { return w.batch.Frames[k] }

// followFrames scales the batch's faces onto the frames the step just run replaced with frames
// of another size (frame_enhancer's upscale; w.sizes are the sizes before it), as each of
// FaceFusion's face processors scales the target's faces onto the temp frame it is given
// (scale_face): a face processor after frame_enhancer works on the upscaled frame. The faces
// are copied: the analysis' own stay as they were found.
func (w *modelWorker) followFrames() {
	b := &w.batch
	changed := false
	for k, f := range b.Frames {
		changed = changed || f.W != w.sizes[k][0] || f.H != w.sizes[k][1]
	}
	if !changed {
		return
	}
	if len(w.moved) < len(b.Faces) {
		w.moved = make([]face.Face, len(b.Faces))
	}
	for i := range b.Faces {
		f := &b.Faces[i]
		now, was := b.Frames[f.At], w.sizes[f.At]
		f.Frame = now
		if now.W == was[0] && now.H == was[1] {
			continue
		}
		w.moved[i] = *f.Face
		scaleFace(&w.moved[i], float64(now.W)/float64(was[0]), float64(now.H)/float64(was[1]))
		f.Face = &w.moved[i]
	}
}

// noteSizes keeps the batch's frame sizes before a step, for followFrames.
func (w *modelWorker) noteSizes() {
	w.sizes = w.sizes[:0]
	for _, f := range w.batch.Frames {
		w.sizes = append(w.sizes, [2]int{f.W, f.H})
	}
}

// keepOriginals copies each frame of the batch with a selected face into w.originals, before
// any processor runs, when a step reads Batch.Originals (expression_restorer); a frame with no
// face gets nil.
func (w *modelWorker) keepOriginals() {
	b := &w.batch
	b.Originals = b.Originals[:0]
	if !w.procs.ReadsOriginals() {
		return
	}
	for k, img := range b.Frames {
		if !w.hits[k] {
			b.Originals = append(b.Originals, nil)
			continue
		}
		if k >= len(w.originals) {
			w.originals = append(w.originals, nil)
		}
		o := w.originals[k]
		if o == nil || o.W != img.W || o.H != img.H {
			o = raster.New(img.W, img.H)
			w.originals[k] = o
		}
		for y := range img.H {
			copy(o.Pix[y*o.Stride:][:3*img.W], img.Pix[y*img.Stride:][:3*img.W])
		}
		b.Originals = append(b.Originals, o)
	}
}

// selectFaces makes w.batch: frames and the faces the selector picks of faces[k] in frames[k];
// the identity measure notes its faces before any processor runs.
func (w *modelWorker) selectFaces(frames []*raster.Image, faces [][]face.Face) error {
	b := &w.batch
	b.Frames, b.Indices, b.Faces, w.hits = frames, b.Indices[:0], b.Faces[:0], w.hits[:0]
	b.Alphas = b.Alphas[:0]
	b.Out, w.outs = w.outs, nil
	w.id.begin(len(frames))
	for k, img := range frames {
		faces := faces[k]
		w.idx = w.sel.Select(w.idx[:0], faces, w.ref)
		if err := w.id.pick(k, img, faces, w.idx); err != nil {
			return err
		}
		if len(w.idx) > 0 {
			w.faced++
		}
		w.hits = append(w.hits, len(w.idx) > 0)
		at := 0
		if k < len(w.index) {
			at = w.first + w.index[k]
		}
		b.Indices = append(b.Indices, at)
		for _, i := range w.idx {
			b.Faces = append(b.Faces, processors.Face{Frame: img, At: k, Face: &faces[i]})
		}
	}
	return nil
}

// Analyse is rank 0's analysis, made once with one analyser (one set of sessions): the
// source faces (the classic swapper's largest source face; FaceFusion's source identity, the
// average of each source image's largest face's embedding) and, in reference mode, the
// reference face from frame reference_frame_number of the target (info is nil for an image
// target). The classic swapper wants a face in every source image; FaceFusion's models want
// one in at least one (a faceless source image is skipped, as FaceFusion does). The results
// stay in m; the classic swapper's source image and landmarks are also returned, for the other
// ranks (nil when unused).
func (m *Models) Analyse(ctx context.Context, info *video.Info) (*raster.Image, face.Landmarks68, error) {
	cfg := m.cfg
	var none face.Landmarks68
	classic := cfg.Swaps() && cfg.FaceSwapperModel == "classic"
	identity := cfg.Swaps() && !classic
	reference := cfg.FindsFaces() && cfg.FaceSelectorMode == "reference"
	// auto filters by the largest source face's gender or race, read from every source image.
	auto := cfg.SelectsBySource()
	if !classic && !identity && !reference && !auto {
		return nil, none, nil
	}
	a, err := m.newAnalyser(identity || reference)
	if err != nil {
		return nil, none, err
	}
	defer a.close()
	var best *raster.Image
	var bestFace face.Face
	var per [][]face.Face
	var firstSource *raster.Image
	for _, p := range cfg.SourceImages() {
		if !cfg.ReadsSources() {
			break
		}
		img, err := loadSource(p)
		if err != nil {
			return nil, none, err
		}
		faces, err := a.analyse(img)
		if err != nil {
			return nil, none, fault.AsInternal(fmt.Errorf("source %s: %w", p, err))
		}
		if firstSource == nil {
			firstSource = img
		}
		if len(faces) == 0 {
			if !classic {
				// FaceFusion's extract_source_face skips a faceless source image; only a job
				// whose sources all lack a face is refused (SourceIdentity, below).
				continue
			}
			return nil, none, noFace(p, cfg)
		}
		facemodel.SortFaces(faces, facemodel.LargeSmall)
		if best == nil || faces[0].Box.Area() > bestFace.Box.Area() {
			best, bestFace = img, faces[0]
		}
		if auto {
			c := bestFace.Class
			m.sourceClass = &c
		}
		if m.sourceFrame == nil && identity {
			// FaceFusion's source face keeps the first face's landmarks, and the crop
			// swappers cut at them from the first source image, even a faceless one.
			m.sourceFrame, m.sourceFive = firstSource, faces[0].Five
		}
		per = append(per, slices.Clone(faces))
	}
	if identity {
		e, ok := facemodel.SourceIdentity(per)
		if !ok {
			return nil, none, fault.AsInput(fmt.Errorf("source: no face found in any of %s (detector score ≥ %g): use a photo with a clear, frontal face, or lower --face-detector-score", strings.Join(cfg.SourceImages(), ", "), cfg.FaceDetectorScore))
		}
		m.sourceEmbedding = &e
	}
	if reference {
		if m.reference, err = m.analyseReference(ctx, a, info); err != nil {
			return nil, none, err
		}
	}
	if !classic {
		return nil, none, nil
	}
	if err := m.UseSource(best, &bestFace.Landmarks); err != nil {
		return nil, none, err
	}
	return best, bestFace.Landmarks, nil
}

// analyseReference finds the reference face: FaceFusion's face at reference_face_position,
// in face_selector_order, of frame reference_frame_number.
func (m *Models) analyseReference(ctx context.Context, a *analyser, info *video.Info) (*face.Embedding, error) {
	cfg := m.cfg
	var frame *raster.Image
	where := cfg.TargetPath
	if info == nil {
		img, err := raster.Load(cfg.TargetPath)
		if err != nil {
			return nil, fault.AsInput(fmt.Errorf("target %w", err))
		}
		frame = img
	} else {
		n := cfg.ReferenceFrameNumber
		if n < 0 || n >= info.Frames {
			return nil, fault.AsUsage(fmt.Errorf("reference_frame_number %d is outside the target's %d frames", n, info.Frames))
		}
		dec, err := video.OpenDecoder(ctx, info, n, n+1)
		if err != nil {
			return nil, fault.AsInput(err)
		}
		defer dec.Close()
		frame = raster.New(info.Width, info.Height)
		if err := dec.Next(frame.Bytes()); err != nil {
			return nil, fault.AsInput(fmt.Errorf("target %s, reference frame %d: %w", cfg.TargetPath, n, err))
		}
		where = fmt.Sprintf("frame %d of %s", n, cfg.TargetPath)
	}
	faces, err := a.analyse(frame)
	if err != nil {
		return nil, fault.AsInternal(fmt.Errorf("reference %s: %w", where, err))
	}
	ref, ok := selector(cfg, m.sourceClass).Reference(faces)
	if !ok {
		return nil, fault.AsInput(fmt.Errorf("reference %s: no face found: choose another --reference-frame-number or lower --face-detector-score", where))
	}
	e := ref.Embedding
	return &e, nil
}

// SourceClass is the largest source face's class rank 0 found for the selector's auto (nil
// when unused); SetSourceClass installs it on another rank.
func (m *Models) SourceClass() *face.Class { return m.sourceClass }

// SetSourceClass installs rank 0's SourceClass.
func (m *Models) SetSourceClass(c *face.Class) { m.sourceClass = c }

// SourceFrame is the source image and face rank 0 found for a swapper that takes the source
// face as a crop (blendswap, uniface); nil otherwise.
func (m *Models) SourceFrame() (*raster.Image, [5]geom.Pt) {
	if sw, err := facemodel.LookupSwapper(m.cfg.FaceSwapperModel); err != nil || sw.TakesEmbedding() {
		return nil, [5]geom.Pt{}
	}
	return m.sourceFrame, m.sourceFive
}

// SetSourceFrame installs the source image and face rank 0 found (SourceFrame).
func (m *Models) SetSourceFrame(img *raster.Image, five [5]geom.Pt) {
	m.sourceFrame, m.sourceFive = img, five
}

// SetEmbeddings installs what rank 0 analysed (source identity, reference face).
func (m *Models) SetEmbeddings(source, reference *face.Embedding) {
	m.sourceEmbedding, m.reference = source, reference
}

// Embeddings are the source identity and reference face rank 0 found (nil when unused).
func (m *Models) Embeddings() (source, reference *face.Embedding) {
	return m.sourceEmbedding, m.reference
}

// sessionConfig is how model name opens in this process: on the rank's engine set, one session
// per model shared by every worker (nil before LoadModels: sessions of the caller's own).
func (m *Models) sessionConfig(name string) infer.SessionConfig {
	c := sessionConfig(m.cfg, name)
	c.Engines = m.engines
	c.Logf = sessionLog(m.cfg, m.log)
	return c
}
