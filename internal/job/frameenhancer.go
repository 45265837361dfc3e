package job

import (
	"slices"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
)

// ---- frame_enhancer (processors/modules/frame_enhancer) ----

// FrameEnhancer are processor frame_enhancer's keys, FaceFusion's names and defaults
// (span_kendata_x4, 80): the model that upscales every frame tile by tile, and how much of the
// upscaled frame replaces the frame resized to its size.
type FrameEnhancer struct {
	FrameEnhancerModel string `toml:"frame_enhancer_model"`
	FrameEnhancerBlend int    `toml:"frame_enhancer_blend"`
}

// ProcessorFrameEnhance is processor frame_enhancer's name.
const ProcessorFrameEnhance = "frame_enhancer"

// FrameEnhancers are frame_enhancer_model's choices: FaceFusion's 19 models.
var FrameEnhancers = catalog.Selectors(catalog.FrameEnhancer)

// EnhancesFrames reports whether processor frame_enhancer runs.
func (c *Config) EnhancesFrames() bool { return slices.Contains(c.Processors, ProcessorFrameEnhance) }

// FrameScale is how many times larger than the frames they are given the processors make them:
// frame_enhancer's model's scale for each time it is named (FaceFusion runs it as often), 1
// without it.
func (c *Config) FrameScale() int {
	m, err := catalog.Select(catalog.FrameEnhancer, c.FrameEnhancerModel)
	if err != nil {
		return 1 // validation refuses it
	}
	s := 1
	for _, p := range c.Processors {
		if p == ProcessorFrameEnhance {
			s *= m.Scale
		}
	}
	return s
}

// ProcessesFrames reports whether a processor of whole frames runs (frame_enhancer,
// frame_colorizer, background_remover): it runs a model whether or not any processor finds
// faces.
func (c *Config) ProcessesFrames() bool {
	return c.EnhancesFrames() || c.Colorizes() || c.RemovesBackground()
}

// validateFrameEnhancer adds frame_enhancer's complaints to bad.
func (c *Config) validateFrameEnhancer(bad func(string, ...any)) {
	if msg := oneOf("frame_enhancer_model", c.FrameEnhancerModel, FrameEnhancers); msg != "" {
		bad("%s", msg)
	}
	if c.FrameEnhancerBlend < 0 || c.FrameEnhancerBlend > 100 {
		bad("frame_enhancer_blend (--frame-enhancer-blend): %d is outside 0..100", c.FrameEnhancerBlend)
	}
}

var frameEnhancerOptions = []option{
	{long: "frame-enhancer-model", arg: "NAME", help: strings.Join(FrameEnhancers, ", ") + " (default span_kendata_x4; processor frame_enhancer)",
		set: str(func(c *Config) *string { return &c.FrameEnhancerModel })},
	{long: "frame-enhancer-blend", arg: "0..100", help: "how much of the upscaled frame replaces the frame resized to its size (default 80)",
		set: integer("frame-enhancer-blend", func(c *Config) *int { return &c.FrameEnhancerBlend })},
}

func init() { options = append(options, frameEnhancerOptions...) }

// ---- end frame_enhancer ----
