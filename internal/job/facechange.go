package job

import (
	"slices"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
)

// FaceChange are the keys of FaceFusion's age_modifier and deep_swapper processors
// (processors/modules/age_modifier, deep_swapper: register_args and choices.py), by FaceFusion's
// names, with its defaults and ranges.
type FaceChange struct {
	AgeModifierModel     string `toml:"age_modifier_model"`
	AgeModifierDirection int    `toml:"age_modifier_direction"` // −100..100: younger to older
}

// The face-changing processors' names.
const (
	ProcessorAge = "age_modifier"
)

// AgeModifiers are age_modifier_model's choices: FaceFusion's age_modifier_models.
var AgeModifiers = catalog.Selectors(catalog.AgeModifier)

// ModifiesAge reports whether the age modifier runs.
func (c *Config) ModifiesAge() bool { return slices.Contains(c.Processors, ProcessorAge) }

// NeedsClasses reports whether the faces' classes (fairface) are needed: a selector filter, or
// fran, which reads each face's age range.
func (c *Config) NeedsClasses() bool {
	return c.SelectsByClass() || (c.ModifiesAge() && c.AgeModifierModel == "fran")
}

// validateFaceChange adds the complaints about the age_modifier and deep_swapper keys.
func (c *Config) validateFaceChange(bad, combo func(string, ...any)) {
	if msg := oneOf("age_modifier_model", c.AgeModifierModel, AgeModifiers); msg != "" {
		bad("%s", msg)
	}
	if c.AgeModifierDirection < -100 || c.AgeModifierDirection > 100 {
		bad("age_modifier_direction (--age-modifier-direction): %d is outside -100..100", c.AgeModifierDirection)
	}
	if c.ModifiesAge() && c.FaceDetectorModel == "blazeface" {
		combo("processors: age_modifier reads FaceFusion's face classes (fairface) on FaceFusion's faces: choose a detector with --face-detector-model (%s)", strings.Join(Detectors[1:], ", "))
	}
}

var faceChangeOptions = []option{
	{long: "age-modifier-model", arg: "NAME", help: strings.Join(AgeModifiers, ", ") + " (default fran; processor age_modifier)",
		set: str(func(c *Config) *string { return &c.AgeModifierModel })},
	{long: "age-modifier-direction", arg: "-100..100", help: "how much younger (below 0) or older (above 0) the faces become (default 0)",
		set: integer("age-modifier-direction", func(c *Config) *int { return &c.AgeModifierDirection })},
}

func init() { options = append(options, faceChangeOptions...) }
