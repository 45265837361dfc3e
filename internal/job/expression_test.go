package job

import (
	"slices"
	"strings"
	"testing"
)

// expression_restorer's keys: FaceFusion's defaults (live_portrait, 80, both areas), set by
// flag and by FaceFusion's facefusion.ini ([processors], the areas space-separated), each in
// the resume fingerprint; a factor outside 0..100, an area or a model FaceFusion does not
// have, or no area at all is refused, naming the key.
func TestExpressionRestorerKeys(t *testing.T) {
	base := []string{"-t", "t.png", "-o", "o.png"}
	c, err := Parse(append([]string{"--processors", "expression_restorer"}, base...))
	if err != nil {
		t.Fatal(err)
	}
	if !c.RestoresExpression() || !c.FindsFaces() || c.Swaps() || c.ExpressionRestorerModel != "live_portrait" ||
		c.ExpressionRestorerFactor != 80 || !slices.Equal(c.ExpressionRestorerAreas, []string{"upper-face", "lower-face"}) {
		t.Errorf("defaults: restores %v, model %q, factor %d, areas %v", c.RestoresExpression(), c.ExpressionRestorerModel, c.ExpressionRestorerFactor, c.ExpressionRestorerAreas)
	}
	c, err = Parse(append([]string{"--processors", "expression_restorer", "--expression-restorer-factor", "0", "--expression-restorer-areas", "lower-face"}, base...))
	if err != nil {
		t.Fatal(err)
	}
	fp := c.Settings()
	if c.ExpressionRestorerFactor != 0 || fp["expression_restorer_factor"] != "0" || fp["expression_restorer_areas"] != "lower-face" || fp["expression_restorer_model"] != "live_portrait" {
		t.Errorf("flags: factor %d, fingerprint %q %q %q", c.ExpressionRestorerFactor, fp["expression_restorer_factor"], fp["expression_restorer_areas"], fp["expression_restorer_model"])
	}
	ini := writeINI(t, "[processors]\nprocessors = face_swapper expression_restorer\nexpression_restorer_model = live_portrait\nexpression_restorer_factor = 100\nexpression_restorer_areas = upper-face\n")
	c, err = Parse(append([]string{"--config-path", ini, "-s", "s.png"}, base...))
	if err != nil {
		t.Fatal(err)
	}
	if c.ExpressionRestorerFactor != 100 || !slices.Equal(c.ExpressionRestorerAreas, []string{"upper-face"}) ||
		!slices.Equal(c.Processors, []string{"face_swapper", "expression_restorer"}) {
		t.Errorf("from facefusion.ini: factor %d, areas %v, processors %v", c.ExpressionRestorerFactor, c.ExpressionRestorerAreas, c.Processors)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--expression-restorer-factor", "101"}, "expression_restorer_factor (--expression-restorer-factor): 101 is outside 0..100"},
		{[]string{"--expression-restorer-factor", "-1"}, "expression_restorer_factor (--expression-restorer-factor): -1 is outside 0..100"},
		{[]string{"--expression-restorer-areas", "mouth"}, `expression_restorer_areas (--expression-restorer-areas): "mouth" is not one of upper-face, lower-face`},
		{[]string{"--expression-restorer-model", "live_portrait_generator"}, `expression_restorer_model (--expression-restorer-model): "live_portrait_generator" is not one of live_portrait`},
	} {
		_, err := Parse(append(append([]string{"--processors", "expression_restorer"}, bad.args...), base...))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: %v, want an error with %q", bad.args, err, bad.want)
		}
	}
	if got := Choices("expression_restorer_areas"); !slices.Equal(got, []string{"upper-face", "lower-face"}) {
		t.Errorf("areas' choices %v", got)
	}
}
