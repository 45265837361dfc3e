package job

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// Models are the keys of FaceFusion's own models (issue 5): which detector, landmarker,
// swapper and enhancer run, their settings, the face selector, masks, and where the models
// execute. The names and defaults are FaceFusion's, except that the embedded default stays
// the model-free pipeline (blazeface, dlib_68, classic).
type Models struct {
	FaceDetectorSize      string   `toml:"face_detector_size"`
	FaceDetectorMargin    []int    `toml:"face_detector_margin"` // percent of the frame's side padded on (top right bottom left; 1–4 values as CSS)
	FaceDetectorAngles    []int    `toml:"face_detector_angles"` // the frame is also searched turned by each (0, 90, 180, 270)
	FaceLandmarkerScore   float64  `toml:"face_landmarker_score"`
	FaceLandmarkSmoothing int      `toml:"face_landmark_smoothing"` // frames each side of the landmarks' time window (internal/temporal); 0: off
	FaceSwapperModel      string   `toml:"face_swapper_model"`
	FaceSwapperPixelBoost string   `toml:"face_swapper_pixel_boost"`
	FaceSwapperWeight     float64  `toml:"face_swapper_weight"`
	FaceEnhancerModel     string   `toml:"face_enhancer_model"`
	FaceEnhancerBlend     int      `toml:"face_enhancer_blend"`
	FaceEnhancerWeight    float64  `toml:"face_enhancer_weight"`
	FaceOccluderModel     string   `toml:"face_occluder_model"`
	FaceParserModel       string   `toml:"face_parser_model"`
	FaceMaskTypes         []string `toml:"face_mask_types"`
	FaceMaskAreas         []string `toml:"face_mask_areas"`
	FaceMaskRegions       []string `toml:"face_mask_regions"`
	FaceMaskBlur          float64  `toml:"face_mask_blur"`
	FaceMaskPadding       []int    `toml:"face_mask_padding"`
	FaceSelectorOrder     string   `toml:"face_selector_order"`
	FaceSelectorGender    string   `toml:"face_selector_gender"`    // "" (none), auto, female, male
	FaceSelectorRace      string   `toml:"face_selector_race"`      // "" (none), auto, white, black, latino, asian, indian, arabic
	FaceSelectorAgeStart  int      `toml:"face_selector_age_start"` // with face_selector_age_end: faces whose age range meets [start, end); 0 and 0: none
	FaceSelectorAgeEnd    int      `toml:"face_selector_age_end"`
	ReferenceFacePosition int      `toml:"reference_face_position"`
	ReferenceFaceDistance float64  `toml:"reference_face_distance"`
	ReferenceFrameNumber  int      `toml:"reference_frame_number"`
	// FaceFusion's face tracker: a frame's faces are followed over target_frame_amount frames
	// each side by box overlap above face_tracker_score, and a frame a face misses is refilled
	// (internal/temporal.Tracker); 0: off, each frame's own faces.
	FaceTrackerScore  float64  `toml:"face_tracker_score"`
	TargetFrameAmount int      `toml:"target_frame_amount"`
	FaceDebuggerItems []string `toml:"face_debugger_items"`

	ExecutionProviders []string          `toml:"execution_providers"`
	ExecutionDeviceIDs []int             `toml:"execution_device_ids" fingerprint:"operational"`
	ExecutionBatchSize int               `toml:"execution_batch_size" fingerprint:"operational"` // batch n gives batch 1's pixels (TestEngineMatchesBatchOne)
	TensorRTFP16       bool              `toml:"tensorrt_fp16"`
	TensorRTCacheDir   string            `toml:"tensorrt_cache_dir" fingerprint:"operational"`
	ModelSHA256        map[string]string `toml:"model_sha256" fingerprint:"operational"` // checked on its own; the files' contents are fingerprinted
}

// MaxLandmarkSmoothing bounds face_landmark_smoothing: every rank holds that many decoded frames
// more in memory, and decodes and analyses twice that many it does not write.
const MaxLandmarkSmoothing = 25

// The processors, detectors, landmarkers, swappers and enhancers a job may name.
const (
	ProcessorEnhance = "face_enhancer"
	ProcessorDebug   = "face_debugger"
)

// The embedded default's models are this project's own; FaceFusion's come from the catalog.
var (
	Detectors   = append([]string{"blazeface", "many"}, catalog.Selectors(catalog.Detector)...) // many: FaceFusion's retinaface, scrfd and yolo_face together
	Landmarkers = append(append([]string{"dlib_68"}, catalog.Selectors(catalog.Landmarker)...), facemodel.LandmarkerMany)
	Swappers    = append([]string{"classic"}, catalog.Selectors(catalog.Swapper)...)
	Enhancers   = catalog.Selectors(catalog.Enhancer)
	// FaceFusion's face masker choices (facefusion/choices.py, types.py).
	MaskTypes = []string{"box", "occlusion", "area", "region"}
	Occluders = append([]string{"many"}, catalog.Selectors(catalog.Occluder)...)
	Parsers   = catalog.Selectors(catalog.Parser)
	MaskAreas = func() (o []string) {
		for _, a := range align.MaskAreas {
			o = append(o, a.Name)
		}
		return o
	}()
	MaskRegions    = align.RegionNames
	SelectorModes  = []string{"one", "many", "reference"}
	SelectorOrders = func() (o []string) { // facemodel sorts by them: one list
		for _, x := range facemodel.SelectorOrders {
			o = append(o, string(x))
		}
		return o
	}()
	Providers = []string{"tensorrt", "cuda", "cpu"}
	// IdentityMeasures are identity_measure's values.
	IdentityMeasures = []string{"auto", "off"}
)

// oneOf is the complaint about key's value v when it is not one of allowed, naming the key and
// its flag (the key with dashes, unless key already names one); "" when it is.
func oneOf(key, v string, allowed []string) string {
	if slices.Contains(allowed, v) {
		return ""
	}
	if !strings.Contains(key, "(--") {
		key += " (--" + strings.ReplaceAll(key, "_", "-") + ")"
	}
	return fmt.Sprintf("%s: %s is not one of %s", key, safefs.Excerpt(v), strings.Join(allowed, ", "))
}

// validateModels adds the model keys' complaints to bad, those of one key against another to
// combo.
func (c *Config) validateModels(bad, combo func(string, ...any)) {
	c.validateModelNames(bad)
	if size, err := c.DetectorSize(); err != nil {
		bad("face_detector_size (--face-detector-size): %v", err)
	} else if size != 0 {
		// FaceFusion offers each detector a few sizes; BlazeFace's files fix theirs (ignored there).
		if sizes := DetectorSizes(c.FaceDetectorModel); sizes != nil && !slices.Contains(sizes, size) {
			combo("face_detector_size (--face-detector-size): %s does not take %dx%d: use one of %s", c.FaceDetectorModel, size, size, sizeList(sizes))
		}
	}
	c.validateDetector(bad, combo)
	c.validateSelector(bad, combo)
	if boost, err := c.PixelBoost(); err != nil {
		bad("face_swapper_pixel_boost: %v", err)
	} else if m, err := catalog.Select(catalog.Swapper, c.FaceSwapperModel); err == nil && boost != 0 {
		// FaceFusion's choices per model (face_swapper/choices.py); two of them are not whole
		// multiples of the model's size, which FaceFusion's tiling cannot split.
		if !slices.Contains(m.Sizes, boost) {
			combo("face_swapper_pixel_boost (--face-swapper-pixel-boost): %s does not take %dx%d: use one of %s", m.Name, boost, boost, sizeList(m.Sizes))
		} else if boost%m.Size != 0 {
			combo("face_swapper_pixel_boost (--face-swapper-pixel-boost): %dx%d is among FaceFusion's choices for %s, but it is not a whole multiple of the model's %d px and FaceFusion fails on it (implode_pixel_boost cannot tile it): use one of %s", boost, boost, m.Name, m.Size, sizeList(wholeMultiples(m.Sizes, m.Size)))
		}
	}
	checkSpace(bad, "face_mask_padding", c.FaceMaskPadding)
	if c.FaceEnhancerBlend < 0 || c.FaceEnhancerBlend > 100 {
		bad("face_enhancer_blend: %d is outside 0..100", c.FaceEnhancerBlend)
	}
	if c.FaceLandmarkSmoothing < 0 || c.FaceLandmarkSmoothing > MaxLandmarkSmoothing {
		bad("face_landmark_smoothing (--face-landmark-smoothing): %d is outside 0..%d frames each side (0: off)", c.FaceLandmarkSmoothing, MaxLandmarkSmoothing)
	}
	if c.TargetFrameAmount < 0 || c.TargetFrameAmount > 10 {
		bad("target_frame_amount (--target-frame-amount): %d is outside 0..10 frames each side", c.TargetFrameAmount)
	}
	c.validateModelSHA256(bad)
	if c.ExecutionBatchSize < 0 {
		bad("execution_batch_size (--execution-batch-size): %d is negative (0: automatic)", c.ExecutionBatchSize)
	} else if c.ExecutionBatchSize > MaxBatchSize {
		bad("execution_batch_size (--execution-batch-size): %d is more than %d: every model keeps buffers for whole batches (gfpgan 3 MB an item each way), and a run never holds more faces than the rank's workers bring in a few ms", c.ExecutionBatchSize, MaxBatchSize)
	}
	c.validateDebuggerItems(bad, combo)
}

// validateModelNames adds a complaint to bad for each model, mask and provider key whose
// value is not one of FaceFusion's choices.
func (c *Config) validateModelNames(bad func(string, ...any)) {
	for _, msg := range []string{
		oneOf("face_selector_mode", c.FaceSelectorMode, SelectorModes),
		oneOf("face_selector_order", c.FaceSelectorOrder, SelectorOrders),
		oneOf("face_detector_model", c.FaceDetectorModel, Detectors),
		oneOf("face_landmarker_model", c.FaceLandmarkerModel, Landmarkers),
		oneOf("face_swapper_model", c.FaceSwapperModel, Swappers),
		oneOf("face_enhancer_model", c.FaceEnhancerModel, Enhancers),
		oneOf("face_occluder_model", c.FaceOccluderModel, Occluders),
		oneOf("face_parser_model", c.FaceParserModel, Parsers),
	} {
		if msg != "" {
			bad("%s", msg)
		}
	}
	for _, l := range []struct {
		key     string
		v, from []string
	}{
		{"face_mask_types", c.FaceMaskTypes, MaskTypes},
		{"face_mask_areas", c.FaceMaskAreas, MaskAreas},
		{"face_mask_regions", c.FaceMaskRegions, MaskRegions},
	} {
		if len(l.v) == 0 {
			bad("%s (--%s): give at least one of %s", l.key, strings.ReplaceAll(l.key, "_", "-"), strings.Join(l.from, ", "))
		}
		for _, t := range l.v {
			if msg := oneOf(l.key, t, l.from); msg != "" {
				bad("%s", msg)
				break
			}
		}
	}
	for _, p := range c.ExecutionProviders {
		if msg := oneOf("execution_providers", p, Providers); msg != "" {
			bad("%s", msg)
		}
	}
}

// validateModelSHA256 adds to bad the first model_sha256 key that names no model and the
// first value that is not a sha256.
func (c *Config) validateModelSHA256(bad func(string, ...any)) {
	// A table or list of many bad values gets its first named (in key order: the same every
	// run), not each: the error stays one line.
	unknown, notSum := false, false
	for _, name := range slices.Sorted(maps.Keys(c.ModelSHA256)) {
		sum := c.ModelSHA256[name]
		if _, err := catalog.Lookup(name); err != nil {
			if !unknown {
				bad("model_sha256: key %s names no model: use FaceFusion's model names (%s)", safefs.Excerpt(name), strings.Join(modelNames(), ", "))
			}
			unknown = true
		} else if len(sum) != 64 || strings.Trim(strings.ToLower(sum), "0123456789abcdef") != "" {
			if !notSum {
				bad("model_sha256: %s = %s is not a sha256 (64 hex digits)", name, safefs.Excerpt(sum))
			}
			notSum = true
		}
	}
}

// validateDebuggerItems adds to bad the first face_debugger_items name FaceFusion does not
// have, and to combo why the items cannot be drawn with the job's models.
func (c *Config) validateDebuggerItems(bad, combo func(string, ...any)) {
	// A name FaceFusion does not have is refused always; one it has but this program cannot
	// draw, or none at all, only when face_debugger runs.
	for _, name := range c.FaceDebuggerItems {
		if _, ok := facemodel.LookupDebuggerItem(name); !ok {
			bad("%s", oneOf("face_debugger_items (--face-debugger-items)", name, facemodel.DebuggerItemNames(false)))
			break
		}
	}
	if c.Debugs() && !slices.ContainsFunc(c.FaceDebuggerItems, func(n string) bool { _, ok := facemodel.LookupDebuggerItem(n); return !ok }) {
		if err := facemodel.CheckDebuggerItems(c.FaceDebuggerItems, c.FaceDetectorModel != "blazeface" && c.FaceLandmarkerModel != "dlib_68"); err != nil {
			combo("face_debugger_items (--face-debugger-items): %v", err)
		}
	}
}

// The identity measure takes a small sample of the output's frames: every IdentityStride-th
// frame (its index counted from the output's first frame a multiple of the stride), positions
// fixed by the output's frame count alone, so that any rank count, chunk size and resume
// measure the same faces. At most IdentitySample frames are measured, and never more than one
// in IdentityMinEvery: each measured face costs two recognizer runs and a landmarker run (more
// than a whole frame's processing on the CPU), so a short job measures a few frames.
const (
	IdentitySample   = 32
	IdentityMinEvery = 600
)

// IdentityStride is the identity measure's stride over an output of frames frames.
func IdentityStride(frames int) int {
	return max(IdentityMinEvery, (frames+IdentitySample-1)/IdentitySample)
}

// MaxBatchSize bounds execution_batch_size.
const MaxBatchSize = 128

// UsesGPU reports whether a GPU execution provider is asked for.
func (c *Config) UsesGPU() bool {
	return slices.Contains(c.ExecutionProviders, "cuda") || slices.Contains(c.ExecutionProviders, "tensorrt")
}

// DeviceFor is the GPU a rank with node-local rank local uses: execution_device_ids[local mod
// n] when given, else bound (the rank's binding from CUDA_VISIBLE_DEVICES, see rank.Identify).
func (c *Config) DeviceFor(local, bound int) int {
	if n := len(c.ExecutionDeviceIDs); n > 0 {
		return c.ExecutionDeviceIDs[local%n]
	}
	return max(bound, 0)
}

// squareSize parses FaceFusion's "640x640" (or "640"); "" gives 0 (the model's default).
func squareSize(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	w, h, found := strings.Cut(s, "x")
	n, err := strconv.Atoi(w)
	if err == nil && found {
		var m int
		if m, err = strconv.Atoi(h); err == nil && m != n {
			err = fmt.Errorf("only square sizes are supported")
		}
	}
	if err != nil || n <= 0 {
		why := "not positive"
		if err != nil {
			why = err.Error()
		}
		return 0, fmt.Errorf("%s is not a size like 640x640 (%s)", safefs.Excerpt(s), why)
	}
	return n, nil
}

// wholeMultiples are the sizes that are whole multiples of size.
func wholeMultiples(sizes []int, size int) (out []int) {
	for _, n := range sizes {
		if n%size == 0 {
			out = append(out, n)
		}
	}
	return out
}

// modelNames are the catalog's model names, the keys of model_sha256.
func modelNames() []string {
	var out []string
	for _, m := range catalog.All() {
		out = append(out, m.Name)
	}
	return out
}

// sizeList writes sizes as FaceFusion's option values: 160x160, 320x320, ….
func sizeList(sizes []int) string {
	out := make([]string, len(sizes))
	for i, n := range sizes {
		out[i] = fmt.Sprintf("%dx%d", n, n)
	}
	return strings.Join(out, ", ")
}

// DetectorSize is face_detector_size in pixels (0: the model's default).
func (c *Config) DetectorSize() (int, error) { return squareSize(c.FaceDetectorSize) }

// PixelBoost is face_swapper_pixel_boost in pixels (0: the model's own size).
func (c *Config) PixelBoost() (int, error) { return squareSize(c.FaceSwapperPixelBoost) }

// Enhances reports whether the face enhancer runs.
func (c *Config) Enhances() bool { return slices.Contains(c.Processors, ProcessorEnhance) }

// Debugs reports whether the face debugger runs.
func (c *Config) Debugs() bool { return slices.Contains(c.Processors, ProcessorDebug) }

// FindsFaces reports whether any processor works on faces: otherwise frames pass through
// untouched, and no model or runtime is loaded.
func (c *Config) FindsFaces() bool {
	return c.Swaps() || c.Enhances() || c.Debugs() || c.ModifiesAge() || c.DeepSwaps() || c.LipSyncs() || c.RestoresExpression() || c.EditsFaces()
}

// RunsModels reports whether any processor runs a model (one that finds faces, or one of whole
// frames): otherwise no model file is read and no runtime loaded.
func (c *Config) RunsModels() bool { return c.FindsFaces() || c.ProcessesFrames() }

// SelectsBySource reports whether the face selector's auto filters faces by the largest
// source face's gender or race: the source images are then read for any processor that finds
// faces, not only the swapper.
func (c *Config) SelectsBySource() bool {
	return c.FindsFaces() && (c.FaceSelectorGender == "auto" || c.FaceSelectorRace == "auto")
}

// ReadsSources reports whether the job reads the source images: their faces change its
// pixels (swapped in, or chosen by the selector's auto), so a resume must hold them too.
func (c *Config) ReadsSources() bool { return c.Swaps() || c.SelectsBySource() }

// Tracks reports whether FaceFusion's face tracker gives each frame's faces (face_tracker_score
// above 0, where faces are found).
func (c *Config) Tracks() bool { return c.FindsFaces() && c.FaceTrackerScore > 0 }

// ClassicWindow says whether the classic swapper runs over face_landmark_smoothing's window:
// it then matches each face to its steady tone and keeps what covers it in most of the window's
// frames (face.Face.SteadyTone, Covers), which the analysis measures in every frame.
func (c *Config) ClassicWindow() bool {
	return c.Swaps() && c.FaceSwapperModel == "classic" && c.FaceLandmarkSmoothing > 0 && !c.Tracks()
}

// MaskPadding is face_mask_padding as top, right, bottom, left percentages.
func (c *Config) MaskPadding() [4]int { return spread4(c.FaceMaskPadding) }

// MaskAreaIndexes are face_mask_areas as indexes of align.MaskAreas.
func (c *Config) MaskAreaIndexes() []int {
	var out []int
	for _, n := range c.FaceMaskAreas {
		if i := slices.Index(MaskAreas, n); i >= 0 {
			out = append(out, i)
		}
	}
	return out
}

// MaskRegionClasses are face_mask_regions as the face parser's class ids.
func (c *Config) MaskRegionClasses() []int {
	var out []int
	for _, n := range c.FaceMaskRegions {
		if k, ok := align.RegionClasses[n]; ok {
			out = append(out, k)
		}
	}
	return out
}

func strs(dst func(*Config) *[]string) func(*Config, []string) error {
	return func(c *Config, v []string) error { *dst(c) = v; return nil }
}

func ints(name string, dst func(*Config) *[]int) func(*Config, []string) error {
	return func(c *Config, v []string) error {
		out := make([]int, 0, len(v))
		for _, s := range v {
			n, err := strconv.Atoi(s)
			if err != nil {
				return fmt.Errorf("--%s: %s is not a whole number", name, safefs.Excerpt(s))
			}
			out = append(out, n)
		}
		*dst(c) = out
		return nil
	}
}

// float is the setter of a flag with a decimal value, read as FaceFusion reads it (parseFloat).
func float(name string, dst func(*Config) *float64) func(*Config, []string) error {
	return func(c *Config, v []string) error {
		f, err := parseFloat(name, v[0])
		if err != nil {
			return err
		}
		*dst(c) = f
		return nil
	}
}

var modelOptions = []option{
	{long: "face-detector-size", arg: "WxH", help: detectorSizeHelp(),
		set: str(func(c *Config) *string { return &c.FaceDetectorSize })},
	{long: "face-detector-margin", arg: "T [R [B [L]]]", multi: true, help: "pad the frame before detection by these percentages of its height (top, bottom) and width (right, left), 0..100 (100: half the side); 1 to 4 values as CSS (default 0 0 0 0)",
		set: ints("face-detector-margin", func(c *Config) *[]int { return &c.FaceDetectorMargin })},
	{long: "face-detector-angles", arg: "DEG...", multi: true, help: "also detect in the frame turned by these angles: 0, 90, 180, 270 (default 0)",
		set: ints("face-detector-angles", func(c *Config) *[]int { return &c.FaceDetectorAngles })},
	{long: "face-landmarker-score", arg: floatArg("face_landmarker_score"), help: "FaceFusion's landmarkers: below this landmark score the detector's five points are used; 0 runs none (default 0.5)",
		set: float("face-landmarker-score", func(c *Config) *float64 { return &c.FaceLandmarkerScore })},
	{long: "face-landmark-smoothing", arg: "N", help: "smooth landmarks over N frames each side of a frame (a local fit that follows motion without lag; a face still over twice N frames, at most 16, is averaged over them; 0: off; default " + strconv.Itoa(Default().FaceLandmarkSmoothing) + ")",
		doc: "landmarks smoothed over N frames each side (0–25; 0: off): a still face is averaged (over 2N, at most 16, where it holds still that long), a moving one fitted without lag; the classic swap also keeps what covers a face in most of up to 3 frames each side; see \"Temporal stability\" in [running.md](running.md)",
		set: integer("face-landmark-smoothing", func(c *Config) *int { return &c.FaceLandmarkSmoothing })},
	{long: "face-swapper-model", arg: "NAME", help: "classic (embedded default, model-free), " + strings.Join(Swappers[1:], ", "),
		set: str(func(c *Config) *string { return &c.FaceSwapperModel })},
	{long: "face-swapper-pixel-boost", arg: "WxH", help: "swap at this crop size in tiles of the model's size, e.g. 256x256 for inswapper_128",
		set: str(func(c *Config) *string { return &c.FaceSwapperPixelBoost })},
	{long: "face-swapper-weight", arg: floatArg("face_swapper_weight"), help: "how much of the source identity replaces the target face's (default 0.5; not for " + strings.Join(unbalancedSwappers(), ", ") + ")",
		set: float("face-swapper-weight", func(c *Config) *float64 { return &c.FaceSwapperWeight })},
	{long: "face-enhancer-model", arg: "NAME", help: strings.Join(Enhancers, ", ") + " (default gfpgan_1.4; processor face_enhancer)",
		set: str(func(c *Config) *string { return &c.FaceEnhancerModel })},
	{long: "face-enhancer-blend", arg: "0..100", help: "how much of the enhanced face replaces the frame's (default 80)",
		set: integer("face-enhancer-blend", func(c *Config) *int { return &c.FaceEnhancerBlend })},
	{long: "face-enhancer-weight", arg: floatArg("face_enhancer_weight"), help: "codeformer's fidelity weight (default 0.5)",
		set: float("face-enhancer-weight", func(c *Config) *float64 { return &c.FaceEnhancerWeight })},
	{long: "face-occluder-model", arg: "NAME", help: strings.Join(Occluders, ", ") + " (default xseg_1; many: the minimum of all three): the occlusion mask's model",
		set: str(func(c *Config) *string { return &c.FaceOccluderModel })},
	{long: "face-parser-model", arg: "NAME", help: strings.Join(Parsers, ", ") + " (default bisenet_resnet_34): the region mask's model",
		set: str(func(c *Config) *string { return &c.FaceParserModel })},
	{long: "face-mask-types", arg: "TYPE...", multi: true, help: strings.Join(MaskTypes, ", ") + " (default box), combined by minimum",
		set: strs(func(c *Config) *[]string { return &c.FaceMaskTypes })},
	{long: "face-mask-areas", arg: "AREA...", multi: true, help: strings.Join(MaskAreas, ", ") + " (default all): the landmark areas whose hull the area mask covers",
		set: strs(func(c *Config) *[]string { return &c.FaceMaskAreas })},
	{long: "face-mask-regions", arg: "REGION...", multi: true, help: strings.Join(MaskRegions, ", ") + " (default all): the face parser's classes the region mask keeps",
		set: strs(func(c *Config) *[]string { return &c.FaceMaskRegions })},
	{long: "face-mask-blur", arg: floatArg("face_mask_blur"), help: "box mask blur (default 0.3)",
		set: float("face-mask-blur", func(c *Config) *float64 { return &c.FaceMaskBlur })},
	{long: "face-mask-padding", arg: "T [R [B [L]]]", multi: true, help: "box mask padding in percent, 1 to 4 values as CSS: top right bottom left (default 0 0 0 0)",
		set: func(c *Config, v []string) error {
			c.FaceMaskPadding = c.FaceMaskPadding[:0]
			for _, s := range v {
				n, err := strconv.Atoi(s)
				if err != nil {
					return fmt.Errorf("--face-mask-padding: %s is not a whole number", safefs.Excerpt(s))
				}
				c.FaceMaskPadding = append(c.FaceMaskPadding, n)
			}
			return nil
		}},
	{long: "face-selector-order", arg: "ORDER", help: "large-small (default), small-large, left-right, right-left, top-bottom, bottom-top, best-worst, worst-best",
		set: str(func(c *Config) *string { return &c.FaceSelectorOrder })},
	{long: "face-selector-gender", arg: "GENDER", help: "keep only faces of this gender: auto (the source face's), female, male (default: all)",
		set: str(func(c *Config) *string { return &c.FaceSelectorGender })},
	{long: "face-selector-race", arg: "RACE", help: "keep only faces of this race: auto (the source face's), " + strings.Join(facemodel.Races, ", ") + " (default: all)",
		set: str(func(c *Config) *string { return &c.FaceSelectorRace })},
	{long: "face-selector-age-start", arg: "0..100", help: "with --face-selector-age-end: keep only faces whose age range meets [start, end) (fairface's ranges: 0-2, 3-9, 10-19, … 70-100)",
		set: integer("face-selector-age-start", func(c *Config) *int { return &c.FaceSelectorAgeStart })},
	{long: "face-selector-age-end", arg: "0..100", help: "the end of the age filter (exclusive); see --face-selector-age-start",
		set: integer("face-selector-age-end", func(c *Config) *int { return &c.FaceSelectorAgeEnd })},
	{long: "reference-face-position", arg: "N", help: "reference mode: the face at this position (after ordering) of the reference frame",
		set: integer("reference-face-position", func(c *Config) *int { return &c.ReferenceFacePosition })},
	{long: "reference-face-distance", arg: floatArg("reference_face_distance"), help: "reference mode: swap faces closer than this to the reference (default 0.3)",
		doc: "reference mode: swap faces closer than this to the reference: (1 − cos)/2 of the recognizer's embeddings, arcface_w600k_r50's, or fr_feature's with the embedded default alone; 0.3 suits both (see \"Identity measure\" in [models.md](models.md))",
		set: float("reference-face-distance", func(c *Config) *float64 { return &c.ReferenceFaceDistance })},
	{long: "reference-frame-number", arg: "N", help: "reference mode: the target frame the reference face is taken from (default 0)",
		set: integer("reference-frame-number", func(c *Config) *int { return &c.ReferenceFrameNumber })},
	{long: "face-tracker-score", arg: floatArg("face_tracker_score"), help: "follow faces over target-frame-amount frames each side by box overlap above this, refilling a frame a face misses (0: off, the default)",
		doc: "FaceFusion's face tracker, 0–0.5: a frame's faces are followed over `--target-frame-amount` frames each side (0–10) by box overlap above this, and a frame a face misses gets it averaged from its neighbours; 0: off; see \"Face tracker\" in [running.md](running.md)",
		set: float("face-tracker-score", func(c *Config) *float64 { return &c.FaceTrackerScore })},
	{long: "target-frame-amount", arg: "0..10", help: "frames each side of a frame the face tracker looks at (default 2)",
		set: integer("target-frame-amount", func(c *Config) *int { return &c.TargetFrameAmount })},
	{long: "face-debugger-items", arg: "ITEM...", multi: true, help: "processor face_debugger draws: " + strings.Join(facemodel.DebuggerItemNames(false), ", ") + " (face-landmark-68/5 not with blazeface or dlib_68; default face-landmark-5/68 face-mask)",
		set: strs(func(c *Config) *[]string { return &c.FaceDebuggerItems })},
	{long: "execution-providers", arg: "NAME...", multi: true, help: "ordered, e.g. tensorrt cuda cpu (default: the first the runtime has, in FaceFusion's order cuda tensorrt cpu); a list ending in cpu falls back to it",
		doc: "ordered, e.g. `tensorrt cuda cpu`; a list ending in `cpu` falls back to it. Default (`[]`): FaceFusion's, the first provider the ONNX Runtime has, in its order cuda, tensorrt, cpu. A rank with a GPU (Slurm's GPU variables, or a GPU the driver shows it) whose models would run on the CPU fails before the first frame unless this is `cpu` alone; see \"GPUs\" in [cluster.md](cluster.md)",
		set: strs(func(c *Config) *[]string { return &c.ExecutionProviders })},
	{long: "execution-device-ids", arg: "N...", multi: true, help: "GPUs for cuda/tensorrt; a rank takes the one at its node-local rank (default: the rank's bound GPU, see probe)",
		set: func(c *Config, v []string) error {
			c.ExecutionDeviceIDs = c.ExecutionDeviceIDs[:0]
			for _, s := range v {
				n, err := strconv.Atoi(s)
				if err != nil || n < 0 {
					return fmt.Errorf("--execution-device-ids: %s is not a device number", safefs.Excerpt(s))
				}
				c.ExecutionDeviceIDs = append(c.ExecutionDeviceIDs, n)
			}
			return nil
		}},
	{long: "execution-batch-size", arg: "N", help: "faces per model run, gathered from every worker of the rank (0: automatic: 8 on a GPU, 1 on CPU; at most 128)",
		set: integer("execution-batch-size", func(c *Config) *int { return &c.ExecutionBatchSize })},
	{long: "tensorrt-fp16", help: "let TensorRT build half-precision engines",
		set: func(c *Config, _ []string) error { c.TensorRTFP16 = true; return nil }},
	{long: "tensorrt-cache-dir", arg: "DIR", help: "where TensorRT keeps built engines (node-local disk)",
		set: str(func(c *Config) *string { return &c.TensorRTCacheDir })},
}

func init() { options = append(options, modelOptions...) }

// DetectorSizes are the sizes face_detector_size may give model: a FaceFusion detector's from
// the catalog, many's those each of its detectors takes (FaceFusion offers many 640x640 alone),
// nil for the embedded blazeface (its file fixes its size) or an unknown name.
func DetectorSizes(model string) []int {
	if model != "many" {
		if m, err := catalog.Select(catalog.Detector, model); err == nil {
			return m.Sizes
		}
		return nil
	}
	var sizes []int
	for i, sel := range facemodel.ManyDetectors {
		s := DetectorSizes(sel)
		if i == 0 {
			sizes = slices.Clone(s)
			continue
		}
		sizes = slices.DeleteFunc(sizes, func(n int) bool { return !slices.Contains(s, n) })
	}
	return sizes
}

// detectorSizeHelp is --face-detector-size's help: each of FaceFusion's detectors with its
// sizes, those taking the same grouped, and the models' default.
func detectorSizeHelp() string {
	var lists, groups []string // groups[i]: the detectors taking lists[i]
	defaults := map[string]bool{}
	for _, d := range Detectors {
		sizes := DetectorSizes(d)
		if sizes == nil {
			continue
		}
		l := sizeList(sizes)
		if i := slices.Index(lists, l); i >= 0 {
			groups[i] += ", " + d
		} else {
			lists, groups = append(lists, l), append(groups, d)
		}
		if m, err := catalog.Select(catalog.Detector, d); err == nil {
			defaults[fmt.Sprintf("%dx%d", m.Size, m.Size)] = true
		}
	}
	parts := make([]string, len(lists))
	for i := range lists {
		g := groups[i]
		if at := strings.LastIndex(g, ", "); at >= 0 {
			g = g[:at] + " and " + g[at+2:]
		}
		parts[i] = g + " " + lists[i]
	}
	return "detector input size: " + strings.Join(parts, "; ") + " (default: " + strings.Join(slices.Sorted(maps.Keys(defaults)), ", ") + ")"
}

// unbalancedSwappers are the swappers face_swapper_weight does not apply to: those that take
// the source face as an image, not as an embedding the weight mixes.
func unbalancedSwappers() []string {
	var out []string
	for _, sel := range Swappers {
		m, err := catalog.Select(catalog.Swapper, sel)
		if err != nil {
			continue // classic
		}
		if sw, err := facemodel.LookupSwapper(m.Name); err == nil && !sw.Balances() {
			out = append(out, sel)
		}
	}
	return out
}

// Choices are FaceFusion's choices for key as this program takes them, without the embedded
// models (blazeface, dlib_68, classic: this program's own) and processors' "none"; nil for a
// key FaceFusion gives no list of choices.
func Choices(key string) []string {
	without := func(list []string, ours string) []string {
		return slices.DeleteFunc(slices.Clone(list), func(s string) bool { return s == ours })
	}
	switch key {
	case "face_detector_model":
		return without(Detectors, "blazeface")
	case "face_detector_angles":
		var out []string
		for _, a := range DetectorAngles {
			out = append(out, strconv.Itoa(a))
		}
		return out
	case "face_landmarker_model":
		return without(Landmarkers, "dlib_68")
	case "face_selector_mode":
		return SelectorModes
	case "face_selector_order":
		return SelectorOrders
	case "face_selector_gender":
		return append([]string{"auto"}, facemodel.Genders...)
	case "face_selector_race":
		return append([]string{"auto"}, facemodel.Races...)
	case "face_occluder_model":
		return Occluders
	case "face_parser_model":
		return Parsers
	case "face_mask_types":
		return MaskTypes
	case "face_mask_areas":
		return MaskAreas
	case "face_mask_regions":
		return MaskRegions
	case "face_swapper_model":
		return without(Swappers, "classic")
	case "face_enhancer_model":
		return Enhancers
	case "face_debugger_items":
		return facemodel.DebuggerItemNames(false)
	case "processors":
		return ProcessorChoices()
	case "frame_enhancer_model":
		return FrameEnhancers
	case "age_modifier_model":
		return AgeModifiers
	case "lip_syncer_model":
		return LipSyncers
	case "voice_extractor_model":
		return VoiceExtractors
	case "expression_restorer_model":
		return ExpressionRestorers
	case "expression_restorer_areas":
		return ExpressionAreas
	case "face_editor_model":
		return FaceEditors
	case "workflow_mode":
		return WorkflowModes
	}
	if o := frameProcessorChoices(key); o != nil {
		return o
	}
	if o := ignoredOptionOf(key); o != nil {
		return o.choices
	}
	return nil
}
