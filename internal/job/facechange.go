package job

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/safefs"

	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
)

// FaceChange are the keys of FaceFusion's age_modifier and deep_swapper processors
// (processors/modules/age_modifier, deep_swapper: register_args and choices.py), by FaceFusion's
// names, with its defaults and ranges.
type FaceChange struct {
	AgeModifierModel     string `toml:"age_modifier_model"`
	AgeModifierDirection int    `toml:"age_modifier_direction"` // −100..100: younger to older
	DeepSwapperModel     string `toml:"deep_swapper_model"`     // scope/name, or custom/NAME for a file in models_dir/custom
	DeepSwapperMorph     int    `toml:"deep_swapper_morph"`     // 0..100: how much of the trained face
}

// The face-changing processors' names.
const (
	ProcessorAge      = "age_modifier"
	ProcessorDeepSwap = "deep_swapper"
)

// DeepSwappers are deep_swapper_model's built-in choices: FaceFusion's deep_swapper_models; a
// file NAME.EXT a site puts in models_dir/custom is the choice custom/NAME besides
// (CustomDeepSwappers).
var DeepSwappers = catalog.Selectors(catalog.DeepSwapper)

// DeepSwaps reports whether the deep swapper runs.
func (c *Config) DeepSwaps() bool { return slices.Contains(c.Processors, ProcessorDeepSwap) }

// CustomDeepSwappers are the custom/NAME choices of deep_swapper_model the models folder holds:
// each file of models_dir/custom not hidden and not __*, by its name without the extension (as
// FaceFusion lists .assets/models/custom), with its file name. Sorted; of two files with one
// name (x.dfm, x.onnx) the later by name is the model, as FaceFusion's model set keeps it.
func (c *Config) CustomDeepSwappers() (names, files []string) {
	entries, err := os.ReadDir(c.ModelPath(catalog.DeepSwapperCustomDir))
	if err != nil {
		return nil, nil
	}
	for _, e := range entries {
		n := e.Name()
		base := strings.TrimSuffix(n, filepath.Ext(n))
		if e.IsDir() || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "__") || base == "" {
			continue
		}
		name := catalog.DeepSwapperCustomDir + "/" + base
		if len(names) > 0 && names[len(names)-1] == name {
			files[len(files)-1] = n
			continue
		}
		names, files = append(names, name), append(files, n)
	}
	return names, files
}

// DeepSwapperEntry is the catalog entry of deep_swapper_model: a built-in one, or a custom one
// found in models_dir/custom.
func (c *Config) DeepSwapperEntry() (*catalog.Model, error) {
	if m, err := catalog.Select(catalog.DeepSwapper, c.DeepSwapperModel); err == nil {
		return m, nil
	}
	names, files := c.CustomDeepSwappers()
	if i := slices.Index(names, c.DeepSwapperModel); i >= 0 {
		return catalog.DeepSwapperCustom(names[i], files[i])
	}
	custom := "none there"
	if len(names) > 0 {
		custom = strings.Join(names, ", ")
	}
	return nil, fmt.Errorf("deep_swapper_model (--deep-swapper-model): %s is not one of FaceFusion's %d models (e.g. %s) nor a file of %s (%s)",
		safefs.Excerpt(c.DeepSwapperModel), len(DeepSwappers), DefaultDeepSwapper, c.ModelPath(catalog.DeepSwapperCustomDir), custom)
}

// DefaultDeepSwapper is FaceFusion's default deep_swapper_model.
const DefaultDeepSwapper = "iperov/elon_musk_224"

// AgeModifiers are age_modifier_model's choices: FaceFusion's age_modifier_models.
var AgeModifiers = catalog.Selectors(catalog.AgeModifier)

// ModifiesAge reports whether the age modifier runs.
func (c *Config) ModifiesAge() bool { return slices.Contains(c.Processors, ProcessorAge) }

// NeedsClasses reports whether the faces' classes (fairface) are needed: a selector filter, or
// fran, which reads each face's age range.
func (c *Config) NeedsClasses() bool {
	return c.SelectsByClass() || (c.ModifiesAge() && c.AgeModifierModel == "fran")
}

// validateFaceChange adds the complaints about the age_modifier and deep_swapper keys; a
// deep_swapper_model that is neither FaceFusion's nor a file of models_dir/custom is a combo
// complaint, since models_dir may come from a later layer.
func (c *Config) validateFaceChange(bad, combo func(string, ...any)) {
	if msg := oneOf("age_modifier_model", c.AgeModifierModel, AgeModifiers); msg != "" {
		bad("%s", msg)
	}
	if c.AgeModifierDirection < -100 || c.AgeModifierDirection > 100 {
		bad("age_modifier_direction (--age-modifier-direction): %d is outside -100..100", c.AgeModifierDirection)
	}
	if c.DeepSwapperMorph < 0 || c.DeepSwapperMorph > 100 {
		bad("deep_swapper_morph (--deep-swapper-morph): %d is outside 0..100", c.DeepSwapperMorph)
	}
	if _, err := c.DeepSwapperEntry(); err != nil && c.DeepSwaps() {
		combo("%v", err)
	}
	if c.ModifiesAge() && c.FaceDetectorModel == "blazeface" {
		why := "age_modifier warps by FaceFusion's five points"
		if c.NeedsClasses() {
			why += " and fran reads the faces' classes (fairface)"
		}
		combo("processors: %s: choose a detector with --face-detector-model (%s)", why, strings.Join(Detectors[1:], ", "))
	}
	if c.DeepSwaps() && c.FaceDetectorModel == "blazeface" {
		combo("processors: deep_swapper warps by FaceFusion's five points: choose a detector with --face-detector-model (%s)", strings.Join(Detectors[1:], ", "))
	}
}

var faceChangeOptions = []option{
	{long: "age-modifier-model", arg: "NAME", help: strings.Join(AgeModifiers, ", ") + " (default fran; processor age_modifier)",
		set: str(func(c *Config) *string { return &c.AgeModifierModel })},
	{long: "deep-swapper-model", arg: "SCOPE/NAME", help: "one of FaceFusion's " + strconv.Itoa(len(DeepSwappers)) + " DeepFaceLive models, as scope/name (default " + DefaultDeepSwapper + "), or custom/NAME for a file NAME.dfm in models_dir/custom (processor deep_swapper)",
		set: str(func(c *Config) *string { return &c.DeepSwapperModel })},
	{long: "deep-swapper-morph", arg: "0..100", help: "how much of the trained face replaces the target's, where the model takes a morph (default 100)",
		set: integer("deep-swapper-morph", func(c *Config) *int { return &c.DeepSwapperMorph })},
	{long: "age-modifier-direction", arg: "-100..100", help: "how much younger (below 0) or older (above 0) the faces become (default 0)",
		set: integer("age-modifier-direction", func(c *Config) *int { return &c.AgeModifierDirection })},
}

func init() { options = append(options, faceChangeOptions...) }
