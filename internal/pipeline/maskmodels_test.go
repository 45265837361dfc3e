package pipeline

import (
	"slices"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/job"
)

// The mask models a job loads: the occluders face_occluder_model names (all three for many)
// where occlusion masks a swap, an enhancement, a lip sync or face_debugger's face-mask; the parser
// face_parser_model names where region masks a swap or face-mask (never the enhancer's or the
// expression restorer's, which loads LivePortrait's chain).
func TestMaskModelNames(t *testing.T) {
	base := []string{"-s", "s.png", "-t", "t.png", "-o", "o.png", "--face-detector-model", "scrfd", "--face-landmarker-model", "2dfan4"}
	for _, c := range []struct {
		args       []string
		want, none []string
	}{
		{[]string{"--face-swapper-model", "inswapper_128", "--face-mask-types", "box", "occlusion", "--face-occluder-model", "many"},
			[]string{"xseg_1", "xseg_2", "xseg_3"}, []string{"bisenet_resnet_34"}},
		{[]string{"--face-swapper-model", "inswapper_128", "--face-mask-types", "region", "--face-parser-model", "bisenet_resnet_18"},
			[]string{"bisenet_resnet_18"}, []string{"xseg_1", "bisenet_resnet_34"}},
		{[]string{"--processors", "face_enhancer", "--face-mask-types", "occlusion", "region", "--face-occluder-model", "xseg_2"},
			[]string{"xseg_2"}, []string{"xseg_1", "bisenet_resnet_34"}},
		{[]string{"--processors", "face_debugger", "--face-mask-types", "area", "region", "occlusion", "--face-occluder-model", "xseg_3"},
			[]string{"xseg_3", "bisenet_resnet_34"}, []string{"xseg_1"}},
		{[]string{"--processors", "face_debugger", "--face-debugger-items", "bounding-box", "--face-mask-types", "region", "occlusion"},
			nil, []string{"xseg_1", "bisenet_resnet_34"}},
		// lip_syncer masks by occlusion (sync_lip), never by region
		{[]string{"--processors", "lip_syncer", "--face-mask-types", "occlusion", "region", "--face-occluder-model", "xseg_3", "-s", "s.png", "v.wav"},
			[]string{"wav2lip_gan_96", "xseg_3"}, []string{"xseg_1", "bisenet_resnet_34"}},
		// age_modifier masks by occlusion (its crop and the wide crop), never by region
		{[]string{"--processors", "age_modifier", "--face-mask-types", "occlusion", "region", "--face-occluder-model", "xseg_2"},
			[]string{"xseg_2"}, []string{"xseg_1", "bisenet_resnet_34"}},
		// deep_swapper masks by occlusion and region, as the swapper does
		{[]string{"--processors", "deep_swapper", "--face-mask-types", "occlusion", "region", "--face-occluder-model", "xseg_3", "--face-parser-model", "bisenet_resnet_18"},
			[]string{"xseg_3", "bisenet_resnet_18"}, []string{"xseg_1", "bisenet_resnet_34"}},
		// expression_restorer loads LivePortrait's three files and masks by occlusion, not region
		{[]string{"--processors", "expression_restorer", "--face-mask-types", "occlusion", "region"},
			[]string{"live_portrait_feature_extractor", "live_portrait_motion_extractor", "live_portrait_generator", "xseg_1"},
			[]string{"bisenet_resnet_34", "gfpgan_1.4"}},
		// face_editor loads the six files, each once beside the restorer's three, and masks by
		// box alone
		{[]string{"--processors", "expression_restorer", "face_editor", "--face-mask-types", "box"},
			[]string{"live_portrait_feature_extractor", "live_portrait_motion_extractor", "live_portrait_generator",
				"live_portrait_eye_retargeter", "live_portrait_lip_retargeter", "live_portrait_stitcher"},
			[]string{"xseg_1", "bisenet_resnet_34"}},
	} {
		cfg, err := job.Parse(append(append([]string(nil), base...), c.args...)) // a case's -s replaces base's
		if err != nil {
			t.Fatal(err)
		}
		names := ModelNames(cfg)
		for i, n := range names {
			if slices.Contains(names[:i], n) {
				t.Errorf("%v: models %v hold %s twice", c.args, names, n)
			}
		}
		for _, n := range c.want {
			if !slices.Contains(names, n) {
				t.Errorf("%v: models %v lack %s", c.args, names, n)
			}
		}
		for _, n := range c.none {
			if slices.Contains(names, n) {
				t.Errorf("%v: models %v hold %s", c.args, names, n)
			}
		}
	}
}
