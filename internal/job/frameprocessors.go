package job

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
)

// The options of FaceFusion's whole-frame processors frame_colorizer and background_remover:
// their names, choices and defaults are FaceFusion 3.8.1's (processors/modules/NAME/core.py
// register_args, choices.py).

// The whole-frame processors' names.
const (
	ProcessorColorize         = "frame_colorizer"
	ProcessorRemoveBackground = "background_remover"
)

// FrameColorizer is frame_colorizer's keys.
type FrameColorizer struct {
	FrameColorizerModel string `toml:"frame_colorizer_model"`
	FrameColorizerSize  string `toml:"frame_colorizer_size"`  // WxH, one of catalog.ColorizerSizes
	FrameColorizerBlend int    `toml:"frame_colorizer_blend"` // 0..100: how much of the colourised frame replaces the frame
}

// BackgroundRemover is background_remover's keys. The colours are R G B A, 0..255 each.
type BackgroundRemover struct {
	BackgroundRemoverModel        string `toml:"background_remover_model"`
	BackgroundRemoverFillColor    []int  `toml:"background_remover_fill_color"`
	BackgroundRemoverDespillColor []int  `toml:"background_remover_despill_color"`
}

// Colorizers and BackgroundRemovers are the models those processors may name.
var (
	Colorizers         = catalog.Selectors(catalog.Colorizer)
	BackgroundRemovers = catalog.Selectors(catalog.BackgroundRemover)
)

// Colorizes and RemovesBackground report whether those processors run.
func (c *Config) Colorizes() bool { return slices.Contains(c.Processors, ProcessorColorize) }
func (c *Config) RemovesBackground() bool {
	return slices.Contains(c.Processors, ProcessorRemoveBackground)
}

// ColorizerSize is frame_colorizer_size in pixels.
func (c *Config) ColorizerSize() (int, error) { return squareSize(c.FrameColorizerSize) }

// validateFrameProcessors adds the whole-frame processors' complaints to bad.
func (c *Config) validateFrameProcessors(bad func(string, ...any)) {
	for _, msg := range []string{
		oneOf("frame_colorizer_model", c.FrameColorizerModel, Colorizers),
		oneOf("background_remover_model", c.BackgroundRemoverModel, BackgroundRemovers),
	} {
		if msg != "" {
			bad("%s", msg)
		}
	}
	if n, err := c.ColorizerSize(); err != nil || !slices.Contains(catalog.ColorizerSizes, n) {
		bad("frame_colorizer_size (--frame-colorizer-size): %s is not one of %s", strconv.Quote(c.FrameColorizerSize), sizeList(catalog.ColorizerSizes))
	}
	if c.FrameColorizerBlend < 0 || c.FrameColorizerBlend > 100 {
		bad("frame_colorizer_blend (--frame-colorizer-blend): %d is outside 0..100", c.FrameColorizerBlend)
	}
	for _, k := range []struct {
		key string
		v   []int
	}{{"background_remover_fill_color", c.BackgroundRemoverFillColor}, {"background_remover_despill_color", c.BackgroundRemoverDespillColor}} {
		// FaceFusion reads R, G, B and the alpha at [-1] or [3]: four values, each 0..255.
		if len(k.v) != 4 || slices.ContainsFunc(k.v, func(n int) bool { return n < 0 || n > 255 }) {
			bad("%s (--%s): %s is not four values 0..255 (R G B A)", k.key, strings.ReplaceAll(k.key, "_", "-"), fmt.Sprint(k.v))
		}
	}
}

// frameProcessorChoices are Choices for the whole-frame processors' keys; nil for another key.
func frameProcessorChoices(key string) []string {
	switch key {
	case "frame_colorizer_model":
		return Colorizers
	case "frame_colorizer_size":
		return strings.Split(sizeList(catalog.ColorizerSizes), ", ")
	case "background_remover_model":
		return BackgroundRemovers
	}
	return nil
}

var frameProcessorOptions = []option{
	{long: "frame-colorizer-model", arg: "NAME", help: strings.Join(Colorizers, ", ") + " (default ddcolor; processor frame_colorizer)",
		set: str(func(c *Config) *string { return &c.FrameColorizerModel })},
	{long: "frame-colorizer-size", arg: "WxH", help: "the size the frame is colourised at: " + sizeList(catalog.ColorizerSizes) + " (default 256x256)",
		set: str(func(c *Config) *string { return &c.FrameColorizerSize })},
	{long: "frame-colorizer-blend", arg: "0..100", help: "how much of the colourised frame replaces the frame (default 100)",
		set: integer("frame-colorizer-blend", func(c *Config) *int { return &c.FrameColorizerBlend })},
	{long: "background-remover-model", arg: "NAME", help: strings.Join(BackgroundRemovers, ", ") + " (default modnet; processor background_remover)",
		set: str(func(c *Config) *string { return &c.BackgroundRemoverModel })},
	{long: "background-remover-fill-color", arg: "R G B A", multi: true, help: "the colour the background becomes, its A how much (0..255 each; default 0 0 0 0: the frame kept)",
		set: ints("background-remover-fill-color", func(c *Config) *[]int { return &c.BackgroundRemoverFillColor })},
	{long: "background-remover-despill-color", arg: "R G B A", multi: true, help: "the screen colour whose spill is taken out of the frame, its A how much (0..255 each; default 0 0 0 0: none)",
		set: ints("background-remover-despill-color", func(c *Config) *[]int { return &c.BackgroundRemoverDespillColor })},
}

func init() { options = append(options, frameProcessorOptions...) }
