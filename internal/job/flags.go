package job

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// option is one command-line flag; its long name is the TOML key with '-' for '_'.
type option struct {
	long, short string
	arg         string // "" for a boolean switch
	multi       bool   // takes one or more values (FaceFusion's nargs='+')
	mode        int    // anyMode; runOnly: run's per-target paths; batchOnly: batch-run's own
	help        string // one line of the usage text
	doc         string // the options page's text (Markdown) where it says more than help; "": help
	set         func(c *Config, vals []string) error
}

// keyOnly are the TOML keys that have no flag (a table does not fit one), with the options
// page's text; every other key is a flag's (TestDocsOptions).
var keyOnly = map[string]string{
	"model_sha256": "`{ inswapper_128 = \"…\" }`: checked when the model opens (another sum refuses the file); a sum other than FaceFusion's published one only warns, and pinning it here silences that",
}

func str(dst func(*Config) *string) func(*Config, []string) error {
	return func(c *Config, v []string) error { *dst(c) = v[0]; return nil }
}

func integer(name string, dst func(*Config) *int) func(*Config, []string) error {
	return func(c *Config, v []string) error {
		n, err := strconv.Atoi(v[0])
		if err != nil {
			return fmt.Errorf("--%s: %s is not a whole number", name, safefs.Excerpt(v[0]))
		}
		*dst(c) = n
		return nil
	}
}

var options = []option{
	{long: "config", arg: "FILE", help: "TOML job file with the same keys as these flags (snake_case); flags win over it"},
	{long: "config-path", arg: "FILE", help: "FaceFusion's facefusion.ini to read (default: facefusion.ini in the working folder, when there is one); the job file and flags win over it",
		doc: "FaceFusion's defaults file (see below); default: `facefusion.ini` in the working folder, when there is one; the job file and flags win over it"},
	{long: "source-paths", short: "s", mode: runOnly, arg: "FILE...", multi: true, help: "source image(s) whose face is swapped in; with several, the largest face is used by the classic swapper",
		doc: "source image(s); every one must hold a face; the classic swapper uses the largest",
		set: func(c *Config, v []string) error { c.SourcePaths = v; return nil }},
	{long: "target-path", short: "t", mode: runOnly, arg: "FILE", help: "target video (any container ffmpeg reads) or image (png, jpg)",
		set: str(func(c *Config) *string { return &c.TargetPath })},
	{long: "output-path", short: "o", mode: runOnly, arg: "FILE", help: "output file; its extension chooses the container (video) or format (image)",
		doc: "output; its extension picks the container (video) or format (image)",
		set: str(func(c *Config) *string { return &c.OutputPath })},
	{long: "force", help: "overwrite an existing output (without it an existing output is an error)",
		set: func(c *Config, _ []string) error { c.Force = true; return nil }},
	{long: "processors", arg: "NAME...", multi: true, help: "face_swapper (default), face_enhancer, face_debugger, frame_enhancer, frame_colorizer, background_remover, age_modifier, deep_swapper, lip_syncer, expression_restorer, face_editor, in the order given; none: frames pass through untouched",
		doc: "`face_swapper`, `face_enhancer`, `face_debugger`, `frame_enhancer`, `frame_colorizer`, `background_remover`, `age_modifier`, `deep_swapper`, `lip_syncer` (the mouth follows the first audio file among the sources), `expression_restorer`, `face_editor`, run in the order given; `none` passes frames through untouched",
		set: func(c *Config, v []string) error { c.Processors = v; return nil }},
	{long: "face-selector-mode", arg: "MODE", help: "one: the first face after ordering (default); many: every face; reference: faces like the reference face",
		doc: "`one`: the first face in `face_selector_order` (by default the largest); `many`: every face; `reference`: faces like the reference face (see the `reference_*` keys)",
		set: str(func(c *Config) *string { return &c.FaceSelectorMode })},
	{long: "face-detector-score", arg: floatArg("face_detector_score"), help: "minimum detector score of a face (default 0.5)",
		set: float("face-detector-score", func(c *Config) *float64 { return &c.FaceDetectorScore })},
	{long: "face-detector-model", arg: "NAME", help: "face detector: blazeface (embedded default), many (retinaface, scrfd and yolo_face together), retinaface, scrfd, yolo_face, yunet",
		set: str(func(c *Config) *string { return &c.FaceDetectorModel })},
	{long: "face-landmarker-model", arg: "NAME", help: "68-point landmarker: dlib_68 (embedded default), 2dfan4, peppa_wutz, many (both, the better kept)",
		set: str(func(c *Config) *string { return &c.FaceLandmarkerModel })},
	{long: "trim-frame-start", arg: "N", help: "first target frame to process (inclusive)",
		doc: "first target frame to process: the half-open range is `[start, end)`; -1: the target's first",
		set: integer("trim-frame-start", func(c *Config) *int { return &c.TrimFrameStart })},
	{long: "trim-frame-end", arg: "N", help: "frame to stop before (exclusive)",
		doc: "frame to stop before (exclusive); -1: after the target's last",
		set: integer("trim-frame-end", func(c *Config) *int { return &c.TrimFrameEnd })},
	{long: "output-video-encoder", arg: "NAME", help: "libx264 (default), libx265, ffv1 (lossless), or another ffmpeg encoder",
		doc: "`libx264`, `libx265`, `ffv1` (lossless), or any ffmpeg encoder (FaceFusion's `libx264rgb`, `rawvideo`, `libvpx-vp9`, the nvenc/amf/qsv/videotoolbox ones where this ffmpeg has them: an encoder it lacks is refused before the first frame); as FaceFusion, `.webm` is written with `libvpx-vp9`, `.m4v`/`.mpeg`/`.mxf`/`.wmv` with `libx264`, `rawvideo` into `.mkv`/`.mp4` and `libvpx-vp9` into `.mov` with `libx264`, said once",
		set: str(func(c *Config) *string { return &c.OutputVideoEncoder })},
	{long: "hardware-codecs", arg: "MODE", help: "NVDEC/NVENC video codecs: auto (default: where the job runs on a GPU and the node's ffmpeg and driver have them; libx264 becomes h264_nvenc, libx265 hevc_nvenc), on (required), off",
		doc: "NVDEC decode and NVENC encode (`libx264` becomes `h264_nvenc`, `libx265` `hevc_nvenc`): `auto` where the job runs on a GPU and a one-frame trial on the node works, else the CPU's with one log line; `on`: required; `off`: never; a resumed job keeps the encoder its job folder was begun with",
		set: str(func(c *Config) *string { return &c.HardwareCodecs })},
	{long: "model-broadcast", arg: "MODE", help: "rank 0 reads each model file once and broadcasts its bytes over MPI: auto (default: where the ranks span more than one host), on, off (every rank reads the files)",
		doc: "rank 0 reads each model file once and broadcasts its bytes over MPI; the other ranks touch no model file: `auto` where the ranks span more than one host, `on` with more than one rank, `off`: every rank reads the files (see \"Model files: one read a job\" in [cluster.md](cluster.md))",
		set: str(func(c *Config) *string { return &c.ModelBroadcast })},
	{long: "output-video-quality", arg: "0..100", help: "quality, mapped to CRF as FaceFusion does (default 80)",
		doc: "0–100, mapped to CRF as FaceFusion does (`crf = round(51 − 0.51·q)` for x264/x265)",
		set: integer("output-video-quality", func(c *Config) *int { return &c.OutputVideoQuality })},
	{long: "output-video-preset", arg: "NAME", help: "encoder preset, e.g. ultrafast … veryslow (default veryfast)",
		doc: "the encoder's preset, e.g. `ultrafast` … `veryslow`",
		set: str(func(c *Config) *string { return &c.OutputVideoPreset })},
	{long: "output-video-fps", arg: "FPS", help: "output frame rate, 1..60 (default: the target's); frames are dropped or repeated as ffmpeg's fps filter does, before they are split between ranks",
		doc: "1–60; 0: the target's rate. The frames FaceFusion's `trim=start_frame=S:end_frame=E,fps=F` extraction gives: the output lasts as long as the trimmed range (round(E × F / rate) − round(S × F / rate) frames), dropped or repeated as ffmpeg's `fps` filter picks them on the whole video's clock (trim stays in the target's frame numbers). A variable-frame-rate target is refused with this flag before the first frame (without it, the output keeps the target's own frame times). The frames are resampled before they are split, so chunks and `facefusion plan` count the output's frames, and any rank count gives the same output",
		set: float("output-video-fps", func(c *Config) *float64 { return &c.OutputVideoFPS })},
	{long: "output-video-scale", arg: floatArg("output_video_scale"), help: "output size as a factor of the target's (default 1); each side truncated and rounded to even as FaceFusion does",
		doc: "0.25–8 in steps of 0.25: each side × S, truncated, then rounded to even as FaceFusion does (1 keeps the target's size, odd included). Frames are swapped at the smaller of the two sizes: ffmpeg scales down while decoding, or scales the finished frames up while encoding (bicubic, as FaceFusion's `-s`)",
		set: float("output-video-scale", func(c *Config) *float64 { return &c.OutputVideoScale })},
	{long: "output-audio-encoder", arg: "NAME", help: audioEncoderHelp,
		doc: "empty: the target's audio is copied as it is, bit-exact; else re-encode it with FaceFusion's `flac`, `aac`, `libmp3lame`, `libopus`, `libvorbis`, `pcm_s16le` or `pcm_s32le`; an audio file among the sources replaces the target's audio and is always encoded (`aac`, `libopus` in .webm, unless an encoder is named); see \"Audio and image outputs\" in [running.md](running.md)",
		set: str(func(c *Config) *string { return &c.OutputAudioEncoder })},
	{long: "output-audio-quality", arg: "0..100", help: "quality of re-encoded audio, mapped per encoder as FaceFusion does (default 80); a value other than the default re-encodes even without an encoder, with aac (libopus in .webm)",
		doc: "0–100, mapped per encoder as FaceFusion does (aac `-q:a` 0.1–2, libmp3lame `-q:a` 9–0, libopus 64–256 kbit/s, libvorbis `-q:a` −1–10; flac and pcm are lossless); a value other than 80, even alone, re-encodes (with `aac`, `libopus` in .webm, unless an encoder is named)",
		set: integer("output-audio-quality", func(c *Config) *int { return &c.OutputAudioQuality })},
	{long: "output-audio-volume", arg: "0..100", help: "audio volume in percent of the target's (default 100); another value re-encodes the audio, with aac (libopus in .webm) unless an encoder is given; 0 writes no audio, as FaceFusion",
		doc: "0–100 % of the target's loudness (ffmpeg's `volume` filter); a value other than 100 re-encodes, as above; 0 writes no audio stream at all (neither the target's nor a source audio), as FaceFusion skips the audio then",
		set: integer("output-audio-volume", func(c *Config) *int { return &c.OutputAudioVolume })},
	{long: "output-image-quality", arg: "0..100", help: "JPEG quality of an image output, mapped to ffmpeg's -q:v as FaceFusion does (default 80); PNG is lossless",
		doc: "0–100: JPEG's `-q:v round(31 − 0.31·q)`, as FaceFusion; PNG is lossless",
		set: integer("output-image-quality", func(c *Config) *int { return &c.OutputImageQuality })},
	{long: "output-image-scale", arg: floatArg("output_image_scale"), help: "image output size as a factor of the target's (default 1: the target's size)",
		doc: "0.25–8 in steps of 0.25: the image output's size, as `--output-video-scale` rounds it (1: the target's size)",
		set: float("output-image-scale", func(c *Config) *float64 { return &c.OutputImageScale })},
	{long: "execution-thread-count", arg: "N", help: "worker threads (default: one per CPU of the rank; capped at 4 per CPU)",
		doc: "worker threads of a rank; 0: one per CPU of the rank (its affinity, `SLURM_CPUS_PER_TASK` or share of the node); above 4 per CPU of the rank it is capped there, in one log line (see \"A rank's CPUs\" in [cluster.md](cluster.md))",
		set: integer("execution-thread-count", func(c *Config) *int { return &c.ExecutionThreadCount })},
	{long: "workflow-mode", arg: "MODE", help: "FaceFusion's: auto (default), image-to-image or image-to-video; a mode that is not the target's is refused, as FaceFusion refuses it",
		set: str(func(c *Config) *string { return &c.WorkflowMode })},
	{long: "chunk-frames", arg: "N", help: "frames per chunk: the unit of work, of output (one segment file) and of checkpoint (default 96)",
		set: integer("chunk-frames", func(c *Config) *int { return &c.ChunkFrames })},
	{long: "job-dir", arg: "DIR", help: "folder for the segments on the shared file system (default: OUTPUT.job beside the output)",
		doc: "where the segments go; on a cluster, a folder on the shared file system; empty: `OUTPUT.job` beside the output",
		set: str(func(c *Config) *string { return &c.JobDir })},
	{long: "checkpoint-interval", arg: "SECONDS", help: "how often rank 0 merges the ranks' finished chunks into the manifest (default 30; 0: only when the attempt ends or stops)",
		doc: "seconds between rank 0's merges of the ranks' journals into the manifest; 0: only when an attempt ends or stops",
		set: integer("checkpoint-interval", func(c *Config) *int { return &c.CheckpointInterval })},
	{long: "max-restarts", arg: "N", help: "requeues of a stopped batch job, counted by SLURM_RESTART_COUNT: below N, a stop that made progress exits 75 and the batch script requeues it; at N it exits 76 (default 10)",
		doc: "requeues by the batch script, counted by `SLURM_RESTART_COUNT`: a warning stop with progress below N exits 75 (requeued), at N exits 76; 0: never requeued",
		set: integer("max-restarts", func(c *Config) *int { return &c.MaxRestarts })},
	{long: "stop-margin", arg: "SECONDS", help: "in a Slurm job with a time limit, stop and checkpoint this long before the limit, in case Slurm's USR1 warning comes late or not at all (default 90)",
		doc: "in a Slurm job with a time limit, stop and checkpoint this long before it (the time left is read at start), in case Slurm's USR1 warning comes late or not at all; 0: no clock of its own; at most 86400",
		set: integer("stop-margin", func(c *Config) *int { return &c.StopMargin })},
	{long: "fresh", help: "start the job over: delete the job folder's segments and manifest instead of resuming",
		doc: "discard the job folder's finished chunks and start over instead of resuming",
		set: func(c *Config, _ []string) error { c.Fresh = true; return nil }},
	{long: "keep-segments", help: "keep the job folder (segments and manifest) after the output is written",
		set: func(c *Config, _ []string) error { c.KeepSegments = true; return nil }},
	{long: "fail-if-no-face", help: "when no frame had a face that a face processor worked on (swapped, enhanced, aged, lip-synced or drawn by face_debugger): fail (exit 3) without writing the output, instead of a warning",
		set: func(c *Config, _ []string) error { c.FailIfNoFace = true; return nil }},
	{long: "log-level", arg: "LEVEL", help: "error (a successful run prints nothing on stderr), warn, info (default), debug",
		doc: "FaceFusion's `error` (only errors: a successful run prints nothing on stderr, its output path still goes to stdout), `warn` (and warnings: no face found, yuv444p, no `lfs`, a repaired job folder), `info` (and what the job does: progress, checkpoints, the join, its time), `debug` (and detail: the version, log level and temp folder of each rank, and each chunk with its frames, faces and time); every rank; a line's form: \"The log\" in [observability.md](observability.md)",
		set: str(func(c *Config) *string { return &c.LogLevel })},
	{long: "temp-path", arg: "DIR", help: "node-local folder for temp files that need not be on the shared file system (default: $TMPDIR, else /tmp)",
		doc: "node-local scratch for temp files that need not be on the shared file system (the output check before the first frame, the join's segment list, the frames other ranks send of a shared chunk: up to `chunk_frames` − 1 frames; rank 0's resample of a lip_syncer voice past 87 s, in a `facefusion-resample-*` folder of 32 bytes for each of some 1.17 × its samples a channel at 48 kHz, 13 GB for two hours, compared with the free room before the voice extractor runs and removed when done or stopped, left only by a SIGKILL); must exist and be writable, checked before the first frame; empty: `$TMPDIR`, else `/tmp`. The job folder and the join's temp file beside the output stay where they are",
		set: str(func(c *Config) *string { return &c.TempPath })},
	{long: "report-path", arg: "FILE", help: "the run report (JSON), written on success, failure or stop (default: OUTPUT.report.json beside the output)",
		doc: "the run report, written on success, failure or stop; empty: `OUTPUT.report.json` beside the output; see \"Run report, metrics and GPU telemetry\" in [observability.md](observability.md)",
		set: str(func(c *Config) *string { return &c.ReportPath })},
	{long: "identity-measure", arg: "auto|off", help: "auto (default): the run report gives the swapped faces' identity similarity to the source, by a face recognizer (fr_feature for the embedded default, else arcface_w600k_r50), on a sample of the output's frames spread over it (one in " + strconv.Itoa(IdentityMinEvery) + " or fewer, at most " + strconv.Itoa(IdentitySample) + "); off: not measured",
		doc: "`auto`: the run report's `identity`, the swapped faces' similarity to the source by a face recognizer (fr_feature for the embedded default, else arcface_w600k_r50), on a small sample of the output's frames spread over it (at most " + strconv.Itoa(IdentitySample) + ", one in " + strconv.Itoa(IdentityMinEvery) + " or fewer), where its file is there (a refused file: one warning, the job runs); `off`: not measured (see \"Identity measure\" in [models.md](models.md))",
		set: str(func(c *Config) *string { return &c.IdentityMeasure })},
	{long: "metrics-path", arg: "FILE.prom", help: "a Prometheus textfile for node_exporter, rewritten every few seconds while the job runs and at its end (default: none)",
		doc: "a Prometheus textfile for node_exporter, rewritten every 5 s while the job runs and at its end; empty: none",
		set: str(func(c *Config) *string { return &c.MetricsPath })},
	{long: "models-dir", arg: "DIR", help: "folder holding the model files (default: $FACEFUSION_MODELS_DIR, else beside the program: PREFIX/share/facefusion/models when installed, the checkout's .cache/models)",
		doc: "folder holding the model files; empty: `$FACEFUSION_MODELS_DIR`, else beside the program (below)",
		set: str(func(c *Config) *string { return &c.ModelsDir })},
	{long: "onnxruntime-library", arg: "FILE", help: "ONNX Runtime shared library (default: $ONNXRUNTIME_LIBRARY, else the fetched 1.30.0 CPU build beside the program: PREFIX/lib/facefusion/libonnxruntime.so.1 when installed, the checkout's .cache/ort)",
		doc: "ONNX Runtime shared library, e.g. a site's GPU build; empty: `$ONNXRUNTIME_LIBRARY`, else the fetched 1.30.0 CPU build beside the program (below)",
		set: str(func(c *Config) *string { return &c.OnnxruntimeLibrary })},
	{long: "execution-provider-library", arg: "PATH", help: "ONNX Runtime's CUDA or TensorRT provider as a plugin library, or a folder holding libonnxruntime_providers_{cuda,tensorrt}.so (default: $" + ProviderEnv + ", else the runtime's folder when it holds them, else the fetched ones beside the program: PREFIX/lib/facefusion when installed, the checkout's .cache/ort-gpu)",
		doc: "ONNX Runtime's CUDA or TensorRT provider library, registered with the runtime as a plugin execution provider for `cuda` or `tensorrt` (a file whose name says tensorrt is TensorRT's), or a folder holding `libonnxruntime_providers_{cuda,tensorrt}.so`; empty: `$" + ProviderEnv + "`, else the runtime's own folder when it holds them, else the ones `make fetch-gpu` fetched beside the program (below); see \"GPUs\" in [cluster.md](cluster.md)",
		set: str(func(c *Config) *string { return &c.ExecutionProviderLibrary })},
}

func lookup(name string) *option { return lookupIn(name, runOnly) }

// lookupIn finds a flag by its long name, or by its short name among the flags of a command
// (mode runOnly or batchOnly: -s, -t and -o are run's paths and batch-run's patterns).
func lookupIn(name string, mode int) *option {
	for i := range options {
		o := &options[i]
		if name == "--"+o.long || (o.short != "" && name == "-"+o.short && o.mode != otherMode(mode)) {
			return o
		}
	}
	return nil
}

// ErrHelp is returned by Parse when --help was asked for.
var ErrHelp = fmt.Errorf("help requested")

// Parse resolves a run's configuration: the embedded default, then FaceFusion's facefusion.ini
// (--config-path), then --config FILE, then the flags. Values are validated; the error names
// the flag or key.
func Parse(args []string) (Config, error) { return parse(args, true, runOnly) }

// ParseLoose is Parse for commands that need no source, target or output (models).
func ParseLoose(args []string) (Config, error) { return parse(args, false, runOnly) }

// ParseBatch is Parse for batch-run: its patterns instead of run's paths, which each target of
// the batch gets from them.
func ParseBatch(args []string) (Config, error) { return parse(args, false, batchOnly) }

func parse(args []string, paths bool, mode int) (Config, error) {
	type given struct {
		o    *option
		vals []string
	}
	var flags []given
	var configFile, iniFile string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-h" || a == "--help" {
			return Config{}, ErrHelp
		}
		name, inline, hasInline := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "-") || !hasInline {
			name, inline = a, ""
		}
		o := lookupIn(name, mode)
		if o != nil && o.mode == otherMode(mode) {
			if mode == batchOnly {
				return Config{}, fmt.Errorf("%s is run's flag: batch-run takes --source-pattern, --target-pattern and --output-pattern (-s, -t, -o)", a)
			}
			return Config{}, fmt.Errorf("%s is a flag of facefusion batch-run", a)
		}
		if o == nil {
			if strings.HasPrefix(a, "-") {
				return Config{}, fmt.Errorf("unknown flag %s (see --help)", safefs.Name(a, safefs.ExcerptLen))
			}
			return Config{}, fmt.Errorf("unexpected argument %s (see --help)", safefs.Excerpt(a))
		}
		var vals []string
		switch {
		case o.arg == "":
			if hasInline && strings.HasPrefix(a, "-") {
				return Config{}, fmt.Errorf("--%s takes no value", o.long)
			}
		case hasInline && strings.HasPrefix(a, "-"):
			vals = []string{inline}
		default:
			for i+1 < len(args) && (len(vals) == 0 || o.multi) && (!strings.HasPrefix(args[i+1], "-") || isNumber(args[i+1])) {
				i++
				vals = append(vals, args[i])
			}
			if len(vals) == 0 {
				return Config{}, fmt.Errorf("--%s needs a value (%s)", o.long, o.arg)
			}
		}
		switch o.long {
		case "config":
			configFile = vals[0]
			continue
		case "config-path":
			iniFile = vals[0]
			continue
		}
		flags = append(flags, given{o, vals})
	}
	c := Default()
	if err := LoadINI(iniFile, &c); err != nil {
		return Config{}, err
	}
	if configFile != "" {
		if err := LoadFile(configFile, &c); err != nil {
			return Config{}, err
		}
	}
	for _, g := range flags {
		if err := g.o.set(&c, g.vals); err != nil {
			return Config{}, err
		}
	}
	if err := c.validate(paths); err != nil {
		return Config{}, err
	}
	var errs []string
	c.validateBatch(mode == batchOnly, func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) })
	if len(errs) > 0 {
		return Config{}, errors.New(strings.Join(errs, "; "))
	}
	return c, nil
}

func isNumber(s string) bool { _, err := parseFloat("", s); return err == nil }

// Usage writes the flag reference.
func Usage(w io.Writer) {
	for _, o := range options {
		name := "    --" + o.long
		if o.short != "" {
			name = "-" + o.short + ", --" + o.long
		}
		if o.arg != "" {
			name += " " + o.arg
		}
		fmt.Fprintf(w, "  %-40s %s\n", name, o.help)
	}
}
