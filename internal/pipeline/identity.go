package pipeline

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// RecognizerName is the face recognizer of the job's reference mode and identity measure: the
// embedded default's fr_feature when the job runs none of FaceFusion's detectors, landmarkers,
// swappers or enhancers (it then needs no FaceFusion model at all), else FaceFusion's
// arcface_w600k_r50, as FaceFusion's own reference mode.
func RecognizerName(cfg job.Config) string {
	if cfg.FaceDetectorModel != "blazeface" || cfg.FaceLandmarkerModel != "dlib_68" ||
		cfg.Swaps() && cfg.FaceSwapperModel != "classic" || cfg.Enhances() || cfg.RestoresExpression() || cfg.EditsFaces() {
		return facemodel.ArcFace.Name
	}
	return facemodel.FRFeature.Name
}

// MeasureRecognizer is the recognizer cfg's identity measure would run ("" when it is off or
// the job swaps no face), whether or not its file is there.
func MeasureRecognizer(cfg job.Config) string {
	if cfg.IdentityMeasure == "off" || !cfg.Swaps() {
		return ""
	}
	return RecognizerName(cfg)
}

// identityRecognizer is the recognizer the identity measure of cfg runs, or "" with the reason
// it does not: off, no swap, or (auto) the recognizer's file is missing or refused. The measure
// is optional: where the job does not need the recognizer itself (reference mode, FaceFusion's
// swappers), its file is checked here as the job checks its own models (infer.ListModels:
// present, loadable, the right signature, a sha256 other than the published one warned about),
// and a file that fails turns the measure off with warn set: one warning line naming the file,
// what is wrong and the fix. A missing file is not a warning (a models folder without it is a
// normal install): the reason goes to the debug log. Call it after InitRuntime, so that the
// signature is checked too.
func identityRecognizer(cfg job.Config, log *logging.Logger) (name, why string, warn bool) {
	switch name = MeasureRecognizer(cfg); {
	case cfg.IdentityMeasure == "off":
		return "", "identity_measure is off", false
	case name == "":
		return "", "no face_swapper", false
	}
	if slices.Contains(ModelNames(cfg), name) {
		return name, "", false // the job's own model, checked with them
	}
	specs, err := catalog.Specs(name)
	if err != nil {
		return "", err.Error(), true
	}
	r, err := infer.ListModels(cfg.ModelPath(""), specs, cfg.ModelSHA256)
	if err != nil {
		return "", err.Error(), true
	}
	switch r[0].State {
	case infer.ModelMissing:
		return "", fmt.Sprintf("%s is not in the models folder (%s)", specs[0].File, cfg.ModelPath("")), false
	case infer.ModelRefused:
		return "", fmt.Sprintf("identity measure off: %s: %s, or --identity-measure off (identity_measure = \"off\") silences this", r[0].Detail, recognizerFix(name, r[0].Path)), true
	}
	if w := r[0].Warning(); w != "" {
		logOnce(log, cfg.UsesGPU(), "%s", w)
	}
	return name, "", false
}

// recognizerFix is how to replace a recognizer's file at path: fr_feature from its package
// (`make fetch`), arcface from FaceFusion (force-download fetches it for reference mode).
func recognizerFix(name, path string) string {
	if pkg := catalog.Must(name).Package; pkg != "" {
		return fmt.Sprintf("`rm %s && make fetch` fetches it again (%s)", path, pkg)
	}
	return fmt.Sprintf("`rm %s && facefusion force-download --face-selector-mode reference` with the job's other flags fetches FaceFusion's", path)
}

// identity is a rank's identity measure: its recognizer, the source face's embedding in that
// recognizer's space (made once, by the first worker that needs it), the stride, and the sums.
type identity struct {
	name   string
	once   sync.Once
	source face.Embedding
	err    error
	mu     sync.Mutex
	every  int // job.IdentityStride of the output's frames; 0 until a Stream says (an image)
	sums   lustre.IdentitySums
}

// sourceEmbedding is the source identity in the measure's recognizer: FaceFusion's (the mean
// of the source images' largest faces) where the job has it from arcface, else the embedding of
// the classic swapper's source face, with the recognizer's own points from its 68 landmarks.
func (m *Models) identitySource(rec *adapters.Recognizer) (*face.Embedding, error) {
	id := m.identity
	id.once.Do(func() {
		if m.sourceEmbedding != nil && rec.Name() == facemodel.ArcFace.Name {
			id.source = *m.sourceEmbedding
			return
		}
		if m.sourceImg == nil {
			id.err = fmt.Errorf("identity measure: no source face analysed")
			return
		}
		f := face.Face{Landmarks: m.sourceLm}
		f.Five = f.Landmarks.Five()
		var out [1]face.Embedding
		id.err = rec.Embed([]adapters.FaceRef{{Frame: m.sourceImg, Five: rec.Points(&f)}}, out[:])
		id.source = out[0]
	})
	return &id.source, id.err
}

// IdentitySums are the rank's identity measure so far (nil when it does not measure); read
// them when no frame is in flight.
func (m *Models) IdentitySums() *lustre.IdentitySums {
	if m == nil || m.identity == nil {
		return nil
	}
	m.identity.mu.Lock()
	defer m.identity.mu.Unlock()
	s := m.identity.sums
	s.Recognizer, s.Every = m.identity.name, max(1, m.identity.every)
	return &s
}

// identityMeter measures one worker's swapped faces: pick notes the selected faces of a
// measured frame and embeds them before any processor changes the frame; after re-finds each
// one's landmarks in the processed frame, in the face's box (the swap may move its features),
// embeds it, and adds the three similarities to the rank's sums.
type identityMeter struct {
	m      *Models
	id     *identity
	rec    *adapters.Recognizer
	an     *analyser
	first  int   // the output index (from the output's first frame) of the worker's Stream's first frame
	every  int   // the stride (job.IdentityStride); an image's one frame: 1
	index  []int // the Stream index of each frame of the batch (none: an image, frame 0)
	picked []pickedFace
	frames []lustre.IdentitySums // the sums of each frame of the batch (identityIn)
	refs   []adapters.FaceRef
	embs   []face.Embedding
	st     *Stats
}

type pickedFace struct {
	at     int // its frame's place in the batch
	frame  *raster.Image
	face   face.Face
	before face.Embedding
}

// newIdentityMeter is the worker's meter, nil when the rank does not measure.
func (m *Models) newIdentityMeter(an *analyser) (*identityMeter, error) {
	if m.identity == nil {
		return nil, nil
	}
	rec := an.rec // reference mode's, when it is the same model
	if rec == nil || rec.Name() != m.identity.name {
		var err error
		if rec, err = adapters.OpenRecognizer(m.identity.name, m.sessionConfig(m.identity.name)); err != nil {
			return nil, err
		}
	}
	return &identityMeter{m: m, id: m.identity, rec: rec, an: an, every: 1, st: m.stats}, nil
}

func (im *identityMeter) close() {
	if im != nil && im.rec != im.an.rec {
		im.rec.Close()
	}
}

// setFirstFrame says which output frame the worker's next Stream starts at.
func (im *identityMeter) setFirstFrame(first int) {
	if im != nil {
		im.first = first
	}
}

// IdentityEveryEnv names a test-only hook: FACEFUSION_TEST_IDENTITY_EVERY=N measures every Nth
// output frame instead of job.IdentityStride's sample, so that an end-to-end test's short clip
// is measured on every rank (the sample alone takes only its frame 0).
const IdentityEveryEnv = "FACEFUSION_TEST_IDENTITY_EVERY"

// identityStride is job.IdentityStride of an output of n frames, or the test hook's stride.
func identityStride(n int) int {
	if every, err := strconv.Atoi(os.Getenv(IdentityEveryEnv)); err == nil && every > 0 {
		return every
	}
	return job.IdentityStride(n)
}

// outputSized is a worker that is told the output's frame count before its Stream (the
// identity measure's stride is decided from it alone, so every rank measures the same frames).
type outputSized interface {
	setOutputFrames(n int)
}

// setOutputFrames says the output has n frames: the stride of the frames the meter takes.
func (im *identityMeter) setOutputFrames(n int) {
	if im == nil {
		return
	}
	im.every = identityStride(n)
	im.id.mu.Lock()
	im.id.every = im.every
	im.id.mu.Unlock()
}

// setIndices says the Stream index of each frame of the batch about to be processed.
func (im *identityMeter) setIndices(idx []int) {
	if im != nil {
		im.index = append(im.index[:0], idx...)
	}
}

// begin starts a batch of n frames: each frame's sums are zero, in the measure's recognizer.
func (im *identityMeter) begin(n int) {
	if im == nil {
		return
	}
	im.frames = im.frames[:0]
	for range n {
		im.frames = append(im.frames, lustre.IdentitySums{Recognizer: im.id.name, Every: im.every})
	}
}

// measured reports whether frame i of the batch is one the measure takes.
func (im *identityMeter) measured(i int) bool {
	at := 0
	if i < len(im.index) {
		at = im.first + im.index[i]
	}
	return at%im.every == 0
}

// pick notes faces[sel] of frame i of the batch (img, not yet processed) when the frame is
// measured, and embeds them as they are: the target faces before the swap.
func (im *identityMeter) pick(i int, img *raster.Image, faces []face.Face, sel []int) error {
	if im == nil || len(sel) == 0 || !im.measured(i) {
		return nil
	}
	start := time.Now()
	defer im.st.since(StageIdentity, start)
	n := len(im.picked)
	im.refs = im.refs[:0]
	for _, j := range sel {
		im.picked = append(im.picked, pickedFace{at: i, frame: img, face: faces[j]})
		im.refs = append(im.refs, adapters.FaceRef{Frame: img, Five: im.rec.Points(&faces[j])})
	}
	im.embs = slices.Grow(im.embs[:0], len(sel))[:len(sel)]
	if err := im.rec.Embed(im.refs, im.embs); err != nil {
		return err
	}
	for k := range sel {
		im.picked[n+k].before = im.embs[k]
	}
	return nil
}

// follow moves the faces pick noted onto the frames that replaced theirs (frame_enhancer
// before the swapper: the swapped faces are in the upscaled frame), scaled as the processors
// scaled them.
func (im *identityMeter) follow(frames []*raster.Image) {
	if im == nil {
		return
	}
	for k := range im.picked {
		p := &im.picked[k]
		now := frames[p.at]
		if now == p.frame {
			continue
		}
		if now.W != p.frame.W || now.H != p.frame.H {
			scaleFace(&p.face, float64(now.W)/float64(p.frame.W), float64(now.H)/float64(p.frame.H))
		}
		p.frame = now
	}
}

// after measures the faces pick noted, now that the processors have run on their frames.
func (im *identityMeter) after() error {
	if im == nil || len(im.picked) == 0 {
		return nil
	}
	start := time.Now()
	defer im.st.since(StageIdentity, start)
	defer func() { im.picked = im.picked[:0] }()
	src, err := im.m.identitySource(im.rec)
	if err != nil {
		return err
	}
	im.refs = im.refs[:0]
	for k := range im.picked {
		p := &im.picked[k]
		f := face.Face{Detection: p.face.Detection, DetectorFive: p.face.DetectorFive}
		if err := im.an.relandmark(p.frame, &f); err != nil {
			return err
		}
		im.refs = append(im.refs, adapters.FaceRef{Frame: p.frame, Five: im.rec.Points(&f)})
	}
	im.embs = slices.Grow(im.embs[:0], len(im.picked))[:len(im.picked)]
	if err := im.rec.Embed(im.refs, im.embs); err != nil {
		return err
	}
	var s lustre.IdentitySums
	for k := range im.picked {
		p := &im.picked[k]
		f := lustre.IdentitySums{Faces: 1,
			After:    lustre.IdentityFixed(facemodel.Cosine(&im.embs[k], src)),
			Before:   lustre.IdentityFixed(facemodel.Cosine(&p.before, src)),
			ToTarget: lustre.IdentityFixed(facemodel.Cosine(&im.embs[k], &p.before))}
		s.Add(f)
		im.frames[p.at].Add(f)
	}
	im.id.mu.Lock()
	im.id.sums.Add(s)
	im.id.mu.Unlock()
	return nil
}

// relandmark finds f's landmarks (and the five points the models warp by) in img from its
// detection alone, as analyse does for a face the detector found there.
func (a *analyser) relandmark(img *raster.Image, f *face.Face) error {
	if a.lm != nil {
		return a.lm.Landmark(img, f, a.cfg.FaceLandmarkerScore)
	}
	a.dlib.landmarks(img, f)
	f.LandmarkScore = 1
	f.Five = f.Landmarks.Five()
	return nil
}

// identityIn is frame i's sums of the last batch (identityMarker); zero when it measures none.
func (w *modelWorker) identityIn(i int) lustre.IdentitySums {
	if w.id == nil {
		return lustre.IdentitySums{}
	}
	return w.id.frames[i]
}

// The worker's frame positions go to its processors and its meter (frameIndexed).
func (w *modelWorker) setFirstFrame(first int) { w.first = first; w.id.setFirstFrame(first) }
func (w *modelWorker) setOutputFrames(n int)   { w.id.setOutputFrames(n) }
func (w *modelWorker) setIndices(idx []int) {
	w.index = append(w.index[:0], idx...)
	w.id.setIndices(idx)
}
