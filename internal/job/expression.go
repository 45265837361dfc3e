package job

import (
	"slices"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
)

// ExpressionRestorer is FaceFusion's expression_restorer keys
// (processors/modules/expression_restorer): the LivePortrait chain puts the target face's
// original expression back on the face the processors before it changed.
type ExpressionRestorer struct {
	ExpressionRestorerModel  string   `toml:"expression_restorer_model"`
	ExpressionRestorerFactor int      `toml:"expression_restorer_factor"`
	ExpressionRestorerAreas  []string `toml:"expression_restorer_areas"`
}

// ProcessorExpression is FaceFusion's expression_restorer.
const ProcessorExpression = "expression_restorer"

var (
	// ExpressionRestorers are expression_restorer_model's choices: the catalog's LivePortrait sets.
	ExpressionRestorers = catalog.Sets(catalog.LivePortrait)
	// ExpressionAreas are expression_restorer_areas' choices (expression_restorer/types.py).
	ExpressionAreas = []string{"upper-face", "lower-face"}
)

// RestoresExpression reports whether the expression restorer runs.
func (c *Config) RestoresExpression() bool { return slices.Contains(c.Processors, ProcessorExpression) }

// validateExpression adds the expression_restorer keys' complaints to bad.
func (c *Config) validateExpression(bad func(string, ...any)) {
	if msg := oneOf("expression_restorer_model", c.ExpressionRestorerModel, ExpressionRestorers); msg != "" {
		bad("%s", msg)
	}
	if f := c.ExpressionRestorerFactor; f < 0 || f > 100 {
		bad("expression_restorer_factor (--expression-restorer-factor): %d is outside 0..100", f)
	}
	if len(c.ExpressionRestorerAreas) == 0 {
		bad("expression_restorer_areas (--expression-restorer-areas): give at least one of %s", strings.Join(ExpressionAreas, ", "))
	}
	for _, a := range c.ExpressionRestorerAreas {
		if msg := oneOf("expression_restorer_areas", a, ExpressionAreas); msg != "" {
			bad("%s", msg)
			break
		}
	}
}

var expressionOptions = []option{
	{long: "expression-restorer-model", arg: "NAME", help: strings.Join(ExpressionRestorers, ", ") + " (default live_portrait; processor expression_restorer)",
		set: str(func(c *Config) *string { return &c.ExpressionRestorerModel })},
	{long: "expression-restorer-factor", arg: "0..100", help: "how much of the target face's original expression is restored (default 80)",
		set: integer("expression-restorer-factor", func(c *Config) *int { return &c.ExpressionRestorerFactor })},
	{long: "expression-restorer-areas", arg: "AREA...", multi: true, help: strings.Join(ExpressionAreas, ", ") + " (default upper-face lower-face): the parts of the face whose expression is restored",
		set: strs(func(c *Config) *[]string { return &c.ExpressionRestorerAreas })},
}

func init() { options = append(options, expressionOptions...) }
