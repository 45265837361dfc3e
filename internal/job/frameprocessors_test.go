package job

import (
	"slices"
	"strings"
	"testing"
)

// frame_colorizer's and background_remover's keys: FaceFusion's defaults, set by flag and by
// facefusion.ini, in the resume fingerprint, and FaceFusion's choices refused outside them.
func TestFrameProcessorOptions(t *testing.T) {
	base := []string{"-t", "t.png", "-o", "o.png"}
	c, err := Parse(append([]string{"--processors", "frame_colorizer", "background_remover"}, base...))
	if err != nil {
		t.Fatal(err)
	}
	if c.FrameColorizerModel != "ddcolor" || c.FrameColorizerSize != "256x256" || c.FrameColorizerBlend != 100 ||
		c.BackgroundRemoverModel != "modnet" || !slices.Equal(c.BackgroundRemoverFillColor, []int{0, 0, 0, 0}) ||
		!slices.Equal(c.BackgroundRemoverDespillColor, []int{0, 0, 0, 0}) {
		t.Errorf("defaults %+v %+v: want FaceFusion's ddcolor 256x256 100, modnet 0 0 0 0, 0 0 0 0", c.FrameColorizer, c.BackgroundRemover)
	}
	if !c.Colorizes() || !c.RemovesBackground() || c.FindsFaces() || c.Swaps() {
		t.Errorf("colorizes %v, removes %v, finds faces %v", c.Colorizes(), c.RemovesBackground(), c.FindsFaces())
	}
	c, err = Parse(append([]string{"--processors", "frame_colorizer", "--frame-colorizer-model", "deoldify_stable",
		"--frame-colorizer-size", "512x512", "--frame-colorizer-blend", "40", "--background-remover-model", "u2net_cloth",
		"--background-remover-fill-color", "0", "255", "0", "128", "--background-remover-despill-color", "10", "20", "30", "40"}, base...))
	if err != nil {
		t.Fatal(err)
	}
	fp := c.Settings()
	for key, want := range map[string]string{
		"frame_colorizer_model": "deoldify_stable", "frame_colorizer_size": "512x512", "frame_colorizer_blend": "40",
		"background_remover_model": "u2net_cloth", "background_remover_fill_color": "0 255 0 128",
		"background_remover_despill_color": "10 20 30 40",
	} {
		if fp[key] != want {
			t.Errorf("fingerprint %s = %q, want %q", key, fp[key], want)
		}
	}
	ini := writeINI(t, "[processors]\nprocessors = frame_colorizer\nframe_colorizer_model = deoldify\nframe_colorizer_blend = 55\nbackground_remover_fill_color = 1 2 3 4\n")
	if c, err = Parse(append([]string{"--config-path", ini}, base...)); err != nil {
		t.Fatal(err)
	}
	if c.FrameColorizerModel != "deoldify" || c.FrameColorizerBlend != 55 || !slices.Equal(c.BackgroundRemoverFillColor, []int{1, 2, 3, 4}) {
		t.Errorf("from facefusion.ini: %+v %+v", c.FrameColorizer, c.BackgroundRemover)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--frame-colorizer-model", "ddcolour"}, `frame_colorizer_model (--frame-colorizer-model): "ddcolour" is not one of ddcolor, ddcolor_artistic`},
		{[]string{"--frame-colorizer-size", "320x320"}, "frame_colorizer_size (--frame-colorizer-size): \"320x320\" is not one of 192x192, 256x256, 384x384, 512x512"},
		{[]string{"--frame-colorizer-blend", "101"}, "frame_colorizer_blend (--frame-colorizer-blend): 101 is outside 0..100"},
		{[]string{"--background-remover-model", "u2net"}, `background_remover_model (--background-remover-model): "u2net" is not one of ben_2`},
		{[]string{"--background-remover-fill-color", "0", "0", "256", "0"}, "background_remover_fill_color (--background-remover-fill-color): [0 0 256 0] is not four values 0..255"},
		{[]string{"--background-remover-despill-color", "0", "255", "0"}, "background_remover_despill_color (--background-remover-despill-color): [0 255 0] is not four values"},
	} {
		_, err := Parse(append(append([]string{"--processors", "frame_colorizer"}, bad.args...), base...))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: %v, want an error with %q", bad.args, err, bad.want)
		}
	}
}
