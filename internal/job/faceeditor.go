package job

import (
	"slices"
	"strings"
)

// FaceEditor is FaceFusion's face_editor keys (processors/modules/face_editor: register_args
// and choices.py): the model and fourteen sliders, each -1..1 in steps of 0.05, default 0.
type FaceEditor struct {
	FaceEditorModel                   string  `toml:"face_editor_model"`
	FaceEditorEyebrowDirection        float64 `toml:"face_editor_eyebrow_direction"`
	FaceEditorEyeGazeHorizontal       float64 `toml:"face_editor_eye_gaze_horizontal"`
	FaceEditorEyeGazeVertical         float64 `toml:"face_editor_eye_gaze_vertical"`
	FaceEditorEyeOpenRatio            float64 `toml:"face_editor_eye_open_ratio"`
	FaceEditorLipOpenRatio            float64 `toml:"face_editor_lip_open_ratio"`
	FaceEditorMouthGrim               float64 `toml:"face_editor_mouth_grim"`
	FaceEditorMouthPout               float64 `toml:"face_editor_mouth_pout"`
	FaceEditorMouthPurse              float64 `toml:"face_editor_mouth_purse"`
	FaceEditorMouthSmile              float64 `toml:"face_editor_mouth_smile"`
	FaceEditorMouthPositionHorizontal float64 `toml:"face_editor_mouth_position_horizontal"`
	FaceEditorMouthPositionVertical   float64 `toml:"face_editor_mouth_position_vertical"`
	FaceEditorHeadPitch               float64 `toml:"face_editor_head_pitch"`
	FaceEditorHeadYaw                 float64 `toml:"face_editor_head_yaw"`
	FaceEditorHeadRoll                float64 `toml:"face_editor_head_roll"`
}

// ProcessorFaceEditor is FaceFusion's face_editor.
const ProcessorFaceEditor = "face_editor"

// FaceEditors are face_editor_model's choices: the catalog's LivePortrait sets, as the
// expression restorer's.
var FaceEditors = ExpressionRestorers

// EditsFaces reports whether the face editor runs.
func (c *Config) EditsFaces() bool { return slices.Contains(c.Processors, ProcessorFaceEditor) }

// faceEditorSliders are the sliders: the name after face_editor_, the field, and the help.
var faceEditorSliders = []struct {
	name, help string
	field      func(*Config) *float64
}{
	{"eyebrow_direction", "the eyebrows' direction", func(c *Config) *float64 { return &c.FaceEditorEyebrowDirection }},
	{"eye_gaze_horizontal", "the eyes' horizontal gaze", func(c *Config) *float64 { return &c.FaceEditorEyeGazeHorizontal }},
	{"eye_gaze_vertical", "the eyes' vertical gaze", func(c *Config) *float64 { return &c.FaceEditorEyeGazeVertical }},
	{"eye_open_ratio", "how far the eyes open (above 0) or close (below 0), by the eye retargeter", func(c *Config) *float64 { return &c.FaceEditorEyeOpenRatio }},
	{"lip_open_ratio", "how far the lips open (above 0) or close (below 0), by the lip retargeter", func(c *Config) *float64 { return &c.FaceEditorLipOpenRatio }},
	{"mouth_grim", "the mouth's grim", func(c *Config) *float64 { return &c.FaceEditorMouthGrim }},
	{"mouth_pout", "the mouth's pout", func(c *Config) *float64 { return &c.FaceEditorMouthPout }},
	{"mouth_purse", "the mouth's purse", func(c *Config) *float64 { return &c.FaceEditorMouthPurse }},
	{"mouth_smile", "the mouth's smile", func(c *Config) *float64 { return &c.FaceEditorMouthSmile }},
	{"mouth_position_horizontal", "the mouth's horizontal position", func(c *Config) *float64 { return &c.FaceEditorMouthPositionHorizontal }},
	{"mouth_position_vertical", "the mouth's vertical position", func(c *Config) *float64 { return &c.FaceEditorMouthPositionVertical }},
	{"head_pitch", "the head's pitch, up to 20 degrees either way", func(c *Config) *float64 { return &c.FaceEditorHeadPitch }},
	{"head_yaw", "the head's yaw, up to 60 degrees either way", func(c *Config) *float64 { return &c.FaceEditorHeadYaw }},
	{"head_roll", "the head's roll, up to 15 degrees either way", func(c *Config) *float64 { return &c.FaceEditorHeadRoll }},
}

// validateFaceEditor adds the face_editor_model complaint to bad; the sliders are floatRanges'.
func (c *Config) validateFaceEditor(bad func(string, ...any)) {
	if msg := oneOf("face_editor_model", c.FaceEditorModel, FaceEditors); msg != "" {
		bad("%s", msg)
	}
}

func init() {
	options = append(options, option{long: "face-editor-model", arg: "NAME",
		help: strings.Join(FaceEditors, ", ") + " (default live_portrait; processor face_editor, which pastes through the box mask at face_mask_blur alone, as FaceFusion's: face_mask_types' occlusion, area and region and face_mask_padding do not apply to it)",
		set:  str(func(c *Config) *string { return &c.FaceEditorModel })})
	for _, s := range faceEditorSliders {
		key := "face_editor_" + s.name
		floatRanges = append(floatRanges, floatRange{key, -1, 1, 0.05, func(c *Config) float64 { return *s.field(c) }})
		flag := strings.ReplaceAll(key, "_", "-")
		options = append(options, option{long: flag, arg: floatArg(key), help: s.help + " (default 0)",
			set: float(flag, s.field)})
	}
}
