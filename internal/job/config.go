// Package job is the typed job description: every setting of a run, decoded strictly from TOML
// (the embedded default, then the user's file) and overridden by flags of the same names,
// resolved and validated in one place.
package job

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/facefusion-hpc/facefusion/configs"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// Config is one job. The TOML keys are FaceFusion's argument names in snake_case. Every field
// is in the resume fingerprint unless tagged `fingerprint:"operational"` (see Settings): tag a
// new key only if it cannot change a pixel of the output.
type Config struct {
	// The paths are operational: the driver fingerprints the target's and sources' contents.
	SourcePaths []string `toml:"source_paths" fingerprint:"operational"`
	TargetPath  string   `toml:"target_path" fingerprint:"operational"`
	OutputPath  string   `toml:"output_path" fingerprint:"operational"`
	Force       bool     `toml:"force" fingerprint:"operational"`

	Processors          []string `toml:"processors"`
	FaceSelectorMode    string   `toml:"face_selector_mode"`
	FaceDetectorScore   float64  `toml:"face_detector_score"`
	FaceDetectorModel   string   `toml:"face_detector_model"`
	FaceLandmarkerModel string   `toml:"face_landmarker_model"`
	TrimFrameStart      int      `toml:"trim_frame_start"`
	TrimFrameEnd        int      `toml:"trim_frame_end"`

	OutputVideoEncoder string `toml:"output_video_encoder"`
	OutputVideoQuality int    `toml:"output_video_quality"`
	OutputVideoPreset  string `toml:"output_video_preset"`
	// The output's frame rate (0: the target's) and its size as a factor of the target's.
	OutputVideoFPS   float64 `toml:"output_video_fps"`
	OutputVideoScale float64 `toml:"output_video_scale"`
	// Whether a rank decodes with NVDEC and encodes with NVENC (HardwareCodecModes). Operational:
	// the encoder it leads to is fingerprinted as the one chosen (spec.Spec.Settled), not the mode.
	HardwareCodecs string `toml:"hardware_codecs" fingerprint:"operational"`
	// The output's audio: output_audio_encoder "" copies the target's audio as it is; a name,
	// or a quality or volume other than the default, re-encodes it (see ReencodesAudio).
	// Operational: the segments are video alone, and rank 0 muxes the audio at the join with
	// the settings of the attempt that joins, so a resume may change them.
	OutputAudioEncoder string `toml:"output_audio_encoder" fingerprint:"operational"`
	OutputAudioQuality int    `toml:"output_audio_quality" fingerprint:"operational"`
	OutputAudioVolume  int    `toml:"output_audio_volume" fingerprint:"operational"`
	// An image output's JPEG quality, and its size as a factor of the target's. Operational:
	// an image target has no job folder to resume, and a video target ignores them.
	OutputImageQuality int     `toml:"output_image_quality" fingerprint:"operational"`
	OutputImageScale   float64 `toml:"output_image_scale" fingerprint:"operational"`

	ExecutionThreadCount int `toml:"execution_thread_count" fingerprint:"operational"`

	// FaceFusion's workflow_mode: auto, or the target's kind stated (CheckWorkflowMode). It
	// chooses nothing the target does not: operational.
	WorkflowMode string `toml:"workflow_mode" fingerprint:"operational"`
	// ignored are FaceFusion's options of the job that change nothing here (ignoredOptions),
	// by key, with the value given: said once at the start.
	ignored map[string]string `fingerprint:"operational"`

	ChunkFrames int    `toml:"chunk_frames"`
	JobDir      string `toml:"job_dir" fingerprint:"operational"`

	CheckpointInterval int  `toml:"checkpoint_interval" fingerprint:"operational"`
	Fresh              bool `toml:"fresh" fingerprint:"operational"`
	KeepSegments       bool `toml:"keep_segments" fingerprint:"operational"`
	// What a job in which no frame had a face swapped or enhanced does: warn and write the
	// output (false), or fail before the output is written. Either way the frames are the same.
	FailIfNoFace bool `toml:"fail_if_no_face" fingerprint:"operational"`

	// How a stopped attempt ends (requeued or not) and when it stops on its own clock: neither
	// changes a frame of the output.
	MaxRestarts int `toml:"max_restarts" fingerprint:"operational"`
	StopMargin  int `toml:"stop_margin" fingerprint:"operational"`

	// How much the log says (FaceFusion's --log-level), and where temp files that need not be
	// on the shared file system go (FaceFusion's --temp-path; "": the system's): neither
	// changes a frame.
	LogLevel string `toml:"log_level" fingerprint:"operational"`
	TempPath string `toml:"temp_path" fingerprint:"operational"`

	// Where the run report and the Prometheus textfile go ("": OUTPUT.report.json beside the
	// output; no metrics file): records of the run, not of its frames.
	ReportPath  string `toml:"report_path" fingerprint:"operational"`
	MetricsPath string `toml:"metrics_path" fingerprint:"operational"`
	// Whether the run report measures how much the swapped faces look like the source (auto:
	// where a recognizer is at hand; off: never): it reads frames, never changes one.
	IdentityMeasure string `toml:"identity_measure" fingerprint:"operational"`
	// Whether rank 0 reads the model files once and broadcasts their bytes to the other ranks
	// (ModelBroadcastModes): every rank runs the same bytes either way.
	ModelBroadcast string `toml:"model_broadcast" fingerprint:"operational"`

	Models
	FrameEnhancer // frame_enhancer's keys (frameenhancer.go)
	// The whole-frame processors' keys (frameprocessors.go).
	FrameColorizer
	BackgroundRemover
	// age_modifier's and deep_swapper's keys.
	FaceChange
	LipSync // lipsync.go
	// The expression restorer's keys.
	ExpressionRestorer
	// The face editor's keys.
	FaceEditor
	// facefusion batch-run's keys (run refuses them).
	Batch `fingerprint:"operational"`
	// Device is this rank's GPU for cuda/tensorrt, resolved at start-up (not a key).
	Device int `toml:"-" fingerprint:"operational"`

	// Operational: the driver fingerprints the model files and the library by content.
	ModelsDir          string `toml:"models_dir" fingerprint:"operational"`
	OnnxruntimeLibrary string `toml:"onnxruntime_library" fingerprint:"operational"`
	// The GPU providers' plugin libraries: where a job's pixels come from is fingerprinted as
	// the providers it resolves to (cuda or cpu), not as these files.
	ExecutionProviderLibrary string `toml:"execution_provider_library" fingerprint:"operational"`
}

// Default decodes the embedded default job.
func Default() Config {
	var c Config
	if err := decode(configs.Default, "embedded default.toml", &c); err != nil {
		panic(err) // the embedded file is part of the program
	}
	return c
}

// LoadFile overlays the TOML file at path on c. An unknown key is an error naming it.
func LoadFile(path string, c *Config) error {
	// A FIFO or device is refused before it is read: opening a FIFO would wait for a writer.
	data, err := safefs.ReadFile(path, safefs.ConfigLimit, "config")
	var kind *safefs.KindError
	var limit *safefs.LimitError
	switch {
	case errors.As(err, &kind) || errors.As(err, &limit):
		return fmt.Errorf("%w; give a TOML job file (configs/default.toml shows one)", err)
	case err != nil:
		return fmt.Errorf("config %s: %w", path, err)
	}
	return decode(data, path, c)
}

// wrongType is the TOML decoder's error for a value of the wrong type: its line, key, the
// value's type and the key's.
var wrongType = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]+)"\): incompatible types: TOML value has type (\w+); destination has type (\w+)$`)

// typeName is a Go kind the decoder names, as a job file's user reads it.
func typeName(kind string) string {
	switch kind {
	case "slice":
		return "a list"
	case "int", "int64", "float", "float64":
		return "a number"
	case "bool":
		return "true or false"
	}
	return "a " + kind
}

func decode(data []byte, name string, c *Config) error {
	if line, err := checkShape(data); err != nil {
		return fmt.Errorf("config %s: line %d: %w, more than a job file holds (configs/default.toml shows one)", name, line, err)
	}
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(c)
	if m := wrongType.FindStringSubmatch(fmt.Sprint(err)); m != nil {
		return fmt.Errorf("config %s: line %s: %s is a %s there, the key takes %s (configs/default.toml says which values)", name, m[1], safefs.Name(m[2], safefs.ExcerptLen), m[3], typeName(m[4]))
	}
	if err != nil {
		return fmt.Errorf("config %s: %s", name, tomlError(err))
	}
	if und := md.Undecoded(); len(und) > 0 {
		var keys []string
		var raw map[string]any // the file as values, for FaceFusion's ignored options
		for _, k := range und {
			if o := ignoredOptionOf(k.String()); o != nil && len(k) == 1 {
				if raw == nil {
					if _, err := toml.Decode(string(data), &raw); err != nil {
						return fmt.Errorf("config %s: %s", name, tomlError(err))
					}
				}
				if err := c.setIgnoredTOML(*o, raw[k[0]]); err != nil {
					return fmt.Errorf("config %s: %w", name, err)
				}
				continue
			}
			keys = append(keys, k.String())
		}
		if len(keys) == 0 {
			return nil
		}
		sort.Strings(keys)
		var list complaints
		for _, k := range keys {
			list.add(safefs.Name(k, safefs.ExcerptLen))
		}
		return fmt.Errorf("config %s: unknown key %s (see configs/default.toml for the valid keys)", name, strings.ReplaceAll(list.err().Error(), "; ", ", "))
	}
	return nil
}

// tomlError is the TOML decoder's error for a message: the decoder may quote a whole key or
// value (or, with its position, the whole line), so its line and key are kept and the rest is
// cut to an excerpt.
func tomlError(err error) string {
	var pe toml.ParseError
	if !errors.As(err, &pe) || pe.Message == "" {
		return safefs.Clip(err.Error())
	}
	if pe.LastKey == "" {
		return fmt.Sprintf("toml: line %d: %s", pe.Position.Line, safefs.Clip(pe.Message))
	}
	return fmt.Sprintf("toml: line %d (last key %s): %s", pe.Position.Line, safefs.Name(pe.LastKey, safefs.ExcerptLen), safefs.Clip(pe.Message))
}

// Processors the pipeline knows.
const (
	ProcessorSwap = "face_swapper"
	ProcessorNone = "none"
)

// ProcessorChoices are the processors a job may name, in the order the docs list them: the one
// list that the check, the option's help and the conformance coverage derive from.
func ProcessorChoices() []string {
	return []string{ProcessorSwap, ProcessorEnhance, ProcessorDebug, ProcessorFrameEnhance, ProcessorColorize, ProcessorRemoveBackground,
		ProcessorAge, ProcessorDeepSwap, ProcessorLipSync, ProcessorExpression, ProcessorFaceEditor}
}

// Validate checks every value and says which key is wrong and what it may be.
func (c *Config) Validate() error { return c.validate(true) }

// validate is Validate; paths false leaves out run's source, target and output.
func (c *Config) validate(paths bool) error { return c.check(paths, true) }

// validateKeys checks each key's value on its own: the checks of a key against another
// (face_detector_margin against the detector, the age filter's two ends) wait for the final
// configuration, since a later layer (the job file, a flag) may set the other key.
func (c *Config) validateKeys() error { return c.check(false, false) }

// check runs validate's checks: paths adds run's paths, combos the checks of one key against
// another.
func (c *Config) check(paths, combos bool) error {
	// Each setting may have its complaint (every float NaN: each is named); a list's values
	// beyond that are counted.
	errs := complaints{max: 32}
	bad := func(format string, a ...any) { errs.add(fmt.Sprintf(format, a...)) }
	combo := func(string, ...any) {}
	if combos {
		combo = bad
	}
	if len(c.SourceImages()) == 0 && c.Swaps() && paths {
		bad("source_paths: give at least one source image (-s FILE)")
	}
	if c.TargetPath == "" && paths {
		bad("target_path: give the target video or image (-t FILE)")
	}
	if c.OutputPath == "" && paths {
		bad("output_path: give the output file (-o FILE)")
	}
	if len(c.Processors) == 0 {
		bad("processors: give face_swapper or none")
	}
	for _, p := range c.Processors {
		if !slices.Contains(ProcessorChoices(), p) && p != ProcessorNone {
			bad("processors: %s is not known (%s, none)", safefs.Excerpt(p), strings.Join(ProcessorChoices(), ", "))
			break // the first of a list of bad names, for one line
		}
	}
	finiteFloats(reflect.ValueOf(c).Elem(), "", bad)
	c.validateFloatRanges(bad)
	c.validateModels(bad, combo)
	c.validateFrameProcessors(bad)
	c.validateFrameEnhancer(bad)
	c.validateFaceChange(bad, combo)
	c.validateLipSync(bad, combo, paths)
	c.validateExpression(bad)
	c.validateFaceEditor(bad)
	if c.TrimFrameStart < -1 || c.TrimFrameEnd < -1 {
		bad("trim_frame_start/trim_frame_end: frame numbers are ≥ 0 (-1: not set)")
	}
	if c.TrimFrameStart >= 0 && c.TrimFrameEnd >= 0 && c.TrimFrameEnd <= c.TrimFrameStart {
		combo("trim_frame_end (%d) must be after trim_frame_start (%d)", c.TrimFrameEnd, c.TrimFrameStart)
	}
	if c.OutputVideoQuality < 0 || c.OutputVideoQuality > 100 {
		bad("output_video_quality: %d is outside 0..100", c.OutputVideoQuality)
	}
	c.validateOutputVideo(bad)
	c.validateGeneral(bad, combo)
	c.validateOutputMedia(bad)
	if c.OutputVideoEncoder == "" {
		bad("output_video_encoder: empty (libx264, libx265, ffv1)")
	}
	if msg := oneOf("hardware_codecs", c.HardwareCodecs, HardwareCodecModes); msg != "" {
		bad("%s", msg)
	}
	if c.ChunkFrames < 1 {
		bad("chunk_frames: %d: a chunk holds at least one frame (default 96)", c.ChunkFrames)
	}
	if c.CheckpointInterval < 0 {
		bad("checkpoint_interval: %d is negative (seconds; 0: only when an attempt ends or stops)", c.CheckpointInterval)
	}
	if c.MaxRestarts < 0 {
		bad("max_restarts: %d is negative (0: a stopped job is never requeued by the batch script; default 10)", c.MaxRestarts)
	}
	if c.StopMargin < 0 || c.StopMargin > maxStopMargin {
		bad("stop_margin: %d is outside 0..%d (seconds before a Slurm job's time limit at which it stops itself; default 90)", c.StopMargin, maxStopMargin)
	}
	if c.ExecutionThreadCount < 0 {
		bad("execution_thread_count: %d is negative (0: one per core)", c.ExecutionThreadCount)
	}
	if _, err := logging.ParseLevel(c.LogLevel); err != nil {
		bad("log_level (--log-level): %v", err)
	}
	if msg := oneOf("identity_measure", c.IdentityMeasure, IdentityMeasures); msg != "" {
		bad("%s", msg)
	}
	if msg := oneOf("model_broadcast", c.ModelBroadcast, ModelBroadcastModes); msg != "" {
		bad("%s", msg)
	}
	return errs.err()
}

// HardwareCodecModes are hardware_codecs' values: auto uses NVDEC and NVENC where the job runs on
// a GPU and a one-frame trial on the node works, the CPU's codecs otherwise (one log line says
// why); on requires them (a job that cannot have them is refused before the first frame); off
// never uses them.
var HardwareCodecModes = []string{"auto", "on", "off"}

// ModelBroadcastModes are model_broadcast's values: auto broadcasts where the job's ranks span
// more than one host (on one host the page cache already shares one read), on wherever there is
// more than one rank, off never (every rank reads each model file itself).
var ModelBroadcastModes = []string{"auto", "on", "off"}

// maxStopMargin bounds stop_margin at a day: more is a mistake, and far more overflows a
// time.Duration.
const maxStopMargin = 86400

// Swaps reports whether the face swapper runs (otherwise frames pass through untouched).
func (c *Config) Swaps() bool {
	for _, p := range c.Processors {
		if p == ProcessorSwap {
			return true
		}
	}
	return false
}

// Model file names of the embedded default.
const (
	BlazeFaceFile = "blazeface_front_128.onnx"
	DlibFile      = "shape_predictor_68_face_landmarks.dat"
)
