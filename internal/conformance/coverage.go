package conformance

import (
	"sort"
	"strings"
)

// option is one FaceFusion option the suite must prove: its key (program.py's flag, snake_case)
// and, for a choice, FaceFusion's choices (each must be covered as key=value; a number or a list
// of numbers is covered by the key alone).
type option struct {
	key     string
	choices []string
}

// options are the FaceFusion 3.8.1 options of face analysis, selection, tracking and masks
// (program.py's face detector, landmarker, selector, tracker and masker groups), of the
// face_swapper, face_enhancer and face_debugger processors (their core.py register_args, with
// choices.py and types.py), and the general options that change frames. TestOptionsAreFaceFusions
// holds the keys to program.py and core.py, and the choices to types.py.
var options = []option{
	{"face_detector_model", []string{"many", "retinaface", "scrfd", "yolo_face", "yunet"}},
	{"face_detector_size", nil},
	{"face_detector_margin", nil},
	{"face_detector_angles", []string{"0", "90", "180", "270"}},
	{"face_detector_score", nil},
	{"face_landmarker_model", []string{"many", "2dfan4", "peppa_wutz"}},
	{"face_landmarker_score", nil},
	{"face_selector_mode", []string{"many", "one", "reference"}},
	{"face_selector_order", []string{"left-right", "right-left", "top-bottom", "bottom-top", "small-large", "large-small", "best-worst", "worst-best"}},
	{"face_selector_age_start", nil},
	{"face_selector_age_end", nil},
	{"face_selector_gender", []string{"auto", "female", "male"}},
	{"face_selector_race", []string{"auto", "white", "black", "latino", "asian", "indian", "arabic"}},
	{"reference_face_position", nil},
	{"reference_face_distance", nil},
	{"reference_frame_number", nil},
	{"face_tracker_score", nil},
	{"face_occluder_model", []string{"many", "xseg_1", "xseg_2", "xseg_3"}},
	{"face_parser_model", []string{"bisenet_resnet_18", "bisenet_resnet_34"}},
	{"face_mask_types", []string{"box", "occlusion", "area", "region"}},
	{"face_mask_areas", []string{"upper-face", "lower-face", "mouth"}},
	{"face_mask_regions", []string{"skin", "left-eyebrow", "right-eyebrow", "left-eye", "right-eye", "glasses", "nose", "mouth", "upper-lip", "lower-lip"}},
	{"face_mask_blur", nil},
	{"face_mask_padding", nil},
	{"face_swapper_model", []string{"blendswap_256", "ghost_1_256", "ghost_2_256", "ghost_3_256", "hififace_unofficial_256", "hyperswap_1a_256", "hyperswap_1b_256", "hyperswap_1c_256", "inswapper_128", "inswapper_128_fp16", "simswap_256", "simswap_unofficial_512", "uniface_256"}},
	{"face_swapper_pixel_boost", nil},
	{"face_swapper_weight", nil},
	{"face_enhancer_model", []string{"codeformer", "gfpgan_1.2", "gfpgan_1.3", "gfpgan_1.4", "gpen_bfr_256", "gpen_bfr_512", "gpen_bfr_1024", "gpen_bfr_2048", "restoreformer_plus_plus"}},
	{"face_enhancer_blend", nil},
	{"face_enhancer_weight", nil},
	{"face_debugger_items", []string{"bounding-box", "face-landmark-5", "face-landmark-5/68", "face-landmark-68", "face-landmark-68/5", "face-mask"}},
	// ---- frame_enhancer ----
	{"frame_enhancer_model", []string{"clear_reality_x4", "face_dat_x4", "nomos8k_sc_x4", "real_esrgan_x2", "real_esrgan_x2_fp16", "real_esrgan_x4", "real_esrgan_x4_fp16", "real_esrgan_x8", "real_esrgan_x8_fp16", "real_hatgan_x4", "real_web_photo_x4", "realistic_rescaler_x4", "remacri_x4", "siax_x4", "span_kendata_x4", "swin2_sr_x4", "tghq_face_x8", "ultra_sharp_x4", "ultra_sharp_2_x4"}},
	{"frame_enhancer_blend", nil},
	// ---- end frame_enhancer ----
	// frame_colorizer (cases/framecolorizer.toml).
	{"frame_colorizer_model", []string{"ddcolor", "ddcolor_artistic", "deoldify", "deoldify_artistic", "deoldify_stable"}},
	{"frame_colorizer_size", []string{"192x192", "256x256", "384x384", "512x512"}},
	{"frame_colorizer_blend", nil},
	// background_remover (cases/backgroundremover.toml).
	{"background_remover_model", []string{"ben_2", "birefnet_general", "birefnet_portrait", "corridor_key_1024", "corridor_key_2048", "isnet_general", "modnet", "ormbg", "rmbg_1.4", "rmbg_2.0", "silueta", "u2net_cloth", "u2net_general", "u2net_human", "u2netp"}},
	{"background_remover_fill_color", nil},
	{"background_remover_despill_color", nil},
	// age_modifier (processors/modules/age_modifier).
	{"age_modifier_model", []string{"fran", "styleganex_age"}},
	{"age_modifier_direction", nil},
	// deep_swapper (processors/modules/deep_swapper). Its 157 models are one family, alike but
	// for their side and whether they take a morph: covered by the key, on the stand-ins of
	// infer/fixtures.DeepSwapStandIns and a custom one.
	{"deep_swapper_model", nil},
	{"deep_swapper_morph", nil},
	// expression_restorer (its core.py register_args, choices.py and types.py).
	{"expression_restorer_model", []string{"live_portrait"}},
	{"expression_restorer_factor", nil},
	{"expression_restorer_areas", []string{"upper-face", "lower-face"}},
	// face_editor (its core.py register_args, choices.py and types.py); each slider is a number,
	// covered by the key (cases/faceeditor.toml takes each to both ends and to 0).
	{"face_editor_model", []string{"live_portrait"}},
	{"face_editor_eyebrow_direction", nil},
	{"face_editor_eye_gaze_horizontal", nil},
	{"face_editor_eye_gaze_vertical", nil},
	{"face_editor_eye_open_ratio", nil},
	{"face_editor_lip_open_ratio", nil},
	{"face_editor_mouth_grim", nil},
	{"face_editor_mouth_pout", nil},
	{"face_editor_mouth_purse", nil},
	{"face_editor_mouth_smile", nil},
	{"face_editor_mouth_position_horizontal", nil},
	{"face_editor_mouth_position_vertical", nil},
	{"face_editor_head_pitch", nil},
	{"face_editor_head_yaw", nil},
	{"face_editor_head_roll", nil},
	// General options that change frames.
	{"processors", []string{"face_swapper", "face_enhancer", "face_debugger", "frame_enhancer", "frame_colorizer", "background_remover", "age_modifier", "deep_swapper", "lip_syncer", "expression_restorer", "face_editor"}},
	{"trim_frame_start", nil},
	{"trim_frame_end", nil},
	{"output_image_quality", nil},
	{"output_image_scale", nil},
	{"output_video_scale", nil},
	{"output_video_fps", nil},
	{"target_frame_amount", nil},
	{"workflow_mode", []string{"auto", "image-to-image", "image-to-video"}},
	{"workflow_strategy", []string{"disk", "memory"}},
	{"temp_frame_format", []string{"bmp", "jpeg", "png", "tiff"}},
	{"temp_pixel_format", []string{"bgr24", "bgra"}},
	{"video_memory_strategy", []string{"strict", "moderate", "tolerant"}},

	// lip_syncer (processors/modules/lip_syncer) and its voice extractor (program.py's voice
	// extractor group).
	{"lip_syncer_model", []string{"edtalk_256", "wav2lip_96", "wav2lip_gan_96"}},
	{"lip_syncer_weight", nil},
	{"voice_extractor_model", []string{"kim_vocal_1", "kim_vocal_2", "uvr_mdxnet"}},
}

// notYetCovered are the coverage items (key or key=value) no case proves yet: the to-do list,
// printed in docs/conformance.md. The test fails when an item here is covered after all (take
// it out) or when an item is neither covered nor here.
var notYetCovered = []string{
	// ---- frame_enhancer ----
	// Each shares its tiling and scale with a model a case runs (cases/frameenhancer.toml), and
	// its stand-in is the same arithmetic: a case would prove only its catalog row, which
	// catalog's TestFrameEnhancersAreFaceFusions holds to FaceFusion's core.py. Left out to keep
	// the full tier short (about 2 s of CPU a case).
	"frame_enhancer_model=clear_reality_x4", "frame_enhancer_model=face_dat_x4", "frame_enhancer_model=nomos8k_sc_x4",
	"frame_enhancer_model=real_esrgan_x2_fp16", "frame_enhancer_model=real_esrgan_x4", "frame_enhancer_model=real_esrgan_x8_fp16",
	"frame_enhancer_model=real_hatgan_x4", "frame_enhancer_model=realistic_rescaler_x4", "frame_enhancer_model=remacri_x4",
	"frame_enhancer_model=siax_x4", "frame_enhancer_model=swin2_sr_x4", "frame_enhancer_model=ultra_sharp_x4",
	// ---- end frame_enhancer ----
}

func knownKey(key string) bool {
	for _, o := range options {
		if o.key == key {
			return true
		}
	}
	return false
}

// coverageItems are what the cases must cover: each choice as key=value, each other key alone.
func coverageItems() []string {
	var items []string
	for _, o := range options {
		if len(o.choices) == 0 {
			items = append(items, o.key)
			continue
		}
		for _, c := range o.choices {
			items = append(items, o.key+"="+c)
		}
	}
	return items
}

// uncovered are the coverage items no case's covers names, in the order of options.
func uncovered(cases []Case) []string {
	have := map[string]bool{}
	for _, c := range cases {
		for _, cv := range c.Covers {
			have[cv] = true
			key, _, _ := strings.Cut(cv, "=")
			have[key] = true
		}
	}
	var out []string
	for _, item := range coverageItems() {
		if !have[item] {
			out = append(out, item)
		}
	}
	return out
}

// diffLists are the items of a not in b and of b not in a, each sorted.
func diffLists(a, b []string) (onlyA, onlyB []string) {
	in := func(xs []string) map[string]bool {
		m := map[string]bool{}
		for _, x := range xs {
			m[x] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	for _, x := range a {
		if !mb[x] {
			onlyA = append(onlyA, x)
		}
	}
	for _, x := range b {
		if !ma[x] {
			onlyB = append(onlyB, x)
		}
	}
	sort.Strings(onlyA)
	sort.Strings(onlyB)
	return onlyA, onlyB
}
