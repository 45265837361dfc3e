package catalog

// distribution is where FaceFusion 3.8.1 publishes each model and under which licence (its
// create_static_model_set tables: resolve_download_url's base_name, __metadata__'s license). The
// embedding converters ship in the entry of the swapper that needs them, under its licence. A
// model that is not FaceFusion's names its registry package instead of a base.
var distribution = map[string]struct{ base, pkg, licence string }{
	// facefusion/face_detector.py, face_landmarker.py, face_recognizer.py
	"retinaface_10g":    {"models-3.0.0", "", "Non-Commercial"},
	"scrfd_2.5g":        {"models-3.0.0", "", "Non-Commercial"},
	"yoloface_8n":       {"models-3.0.0", "", "GPL-3.0"},
	"yunet_2023_mar":    {"models-3.4.0", "", "MIT"},
	"2dfan4":            {"models-3.0.0", "", "MIT"},
	"peppa_wutz":        {"models-3.0.0", "", "Apache-2.0"},
	"fan_68_5":          {"models-3.0.0", "", "OpenRAIL-M"},
	"arcface_w600k_r50": {"models-3.0.0", "", "Non-Commercial"},
	// facefusion/face_classifier.py
	"fairface": {"models-3.0.0", "", "CC-BY-4.0"},
	// processors/modules/face_swapper/core.py
	"blendswap_256":           {"models-3.0.0", "", "Non-Commercial"},
	"hififace_unofficial_256": {"models-3.1.0", "", "Unknown"},
	"inswapper_128":           {"models-3.0.0", "", "Non-Commercial"},
	"inswapper_128_fp16":      {"models-3.0.0", "", "Non-Commercial"},
	"hyperswap_1a_256":        {"models-3.3.0", "", "ResearchRAIL"},
	"hyperswap_1b_256":        {"models-3.3.0", "", "ResearchRAIL"},
	"hyperswap_1c_256":        {"models-3.3.0", "", "ResearchRAIL"},
	"simswap_256":             {"models-3.0.0", "", "Non-Commercial"},
	"simswap_unofficial_512":  {"models-3.0.0", "", "Non-Commercial"},
	"uniface_256":             {"models-3.0.0", "", "Unknown"},
	"ghost_1_256":             {"models-3.0.0", "", "Apache-2.0"},
	"ghost_2_256":             {"models-3.0.0", "", "Apache-2.0"},
	"ghost_3_256":             {"models-3.0.0", "", "Apache-2.0"},
	"crossface_simswap":       {"models-3.4.0", "", "Non-Commercial"},
	"crossface_ghost":         {"models-3.4.0", "", "Apache-2.0"},
	"crossface_hififace":      {"models-3.4.0", "", "Unknown"},
	// processors/modules/face_enhancer/core.py
	"codeformer":              {"models-3.0.0", "", "S-Lab-1.0"},
	"gfpgan_1.2":              {"models-3.0.0", "", "Apache-2.0"},
	"gfpgan_1.3":              {"models-3.0.0", "", "Apache-2.0"},
	"gfpgan_1.4":              {"models-3.0.0", "", "Apache-2.0"},
	"gpen_bfr_256":            {"models-3.0.0", "", "Non-Commercial"},
	"gpen_bfr_512":            {"models-3.0.0", "", "Non-Commercial"},
	"gpen_bfr_1024":           {"models-3.0.0", "", "Non-Commercial"},
	"gpen_bfr_2048":           {"models-3.0.0", "", "Non-Commercial"},
	"restoreformer_plus_plus": {"models-3.0.0", "", "Apache-2.0"},
	// face_masker.py: the occluder and the region parser
	"xseg_1":            {"models-3.1.0", "", "GPL-3.0"},
	"xseg_2":            {"models-3.1.0", "", "GPL-3.0"},
	"xseg_3":            {"models-3.2.0", "", "GPL-3.0"},
	"bisenet_resnet_18": {"models-3.1.0", "", "MIT"},
	"bisenet_resnet_34": {"models-3.0.0", "", "MIT"},
	// ---- processors/modules/frame_enhancer/core.py ----
	"clear_reality_x4":      {"models-3.0.0", "", "Non-Commercial"},
	"face_dat_x4":           {"models-3.5.0", "", "CC-BY-4.0"},
	"nomos8k_sc_x4":         {"models-3.0.0", "", "CC-BY-4.0"},
	"real_esrgan_x2":        {"models-3.0.0", "", "BSD-3-Clause"},
	"real_esrgan_x2_fp16":   {"models-3.0.0", "", "BSD-3-Clause"},
	"real_esrgan_x4":        {"models-3.0.0", "", "BSD-3-Clause"},
	"real_esrgan_x4_fp16":   {"models-3.0.0", "", "BSD-3-Clause"},
	"real_esrgan_x8":        {"models-3.0.0", "", "BSD-3-Clause"},
	"real_esrgan_x8_fp16":   {"models-3.0.0", "", "BSD-3-Clause"},
	"real_hatgan_x4":        {"models-3.0.0", "", "Apache-2.0"},
	"real_web_photo_x4":     {"models-3.1.0", "", "CC-BY-4.0"},
	"realistic_rescaler_x4": {"models-3.1.0", "", "WTFPL"},
	"remacri_x4":            {"models-3.1.0", "", "Non-Commercial"},
	"siax_x4":               {"models-3.1.0", "", "WTFPL"},
	"span_kendata_x4":       {"models-3.0.0", "", "Non-Commercial"},
	"swin2_sr_x4":           {"models-3.1.0", "", "Apache-2.0"},
	"tghq_face_x8":          {"models-3.5.0", "", "GPL-3.0"},
	"ultra_sharp_x4":        {"models-3.0.0", "", "Non-Commercial"},
	"ultra_sharp_2_x4":      {"models-3.3.0", "", "Non-Commercial"},
	// ---- end frame_enhancer ----
	// processors/modules/age_modifier/core.py
	"fran":           {"models-3.6.0", "", "MIT"},
	"styleganex_age": {"models-3.1.0", "", "S-Lab-1.0"},
	// processors/modules/lip_syncer/core.py and voice_extractor.py
	"edtalk_256":     {"models-3.3.0", "", "Apache-2.0"},
	"wav2lip_96":     {"models-3.0.0", "", "Non-Commercial"},
	"wav2lip_gan_96": {"models-3.0.0", "", "Non-Commercial"},
	"kim_vocal_1":    {"models-3.4.0", "", "Non-Commercial"},
	"kim_vocal_2":    {"models-3.0.0", "", "Non-Commercial"},
	"uvr_mdxnet":     {"models-3.4.0", "", "MIT"},
	// processors/modules/expression_restorer/core.py (face_editor's live_portrait set too)
	"live_portrait_feature_extractor": {"models-3.0.0", "", "MIT"},
	"live_portrait_motion_extractor":  {"models-3.0.0", "", "MIT"},
	"live_portrait_generator":         {"models-3.0.0", "", "MIT"},
	"live_portrait_eye_retargeter":    {"models-3.0.0", "", "MIT"},
	"live_portrait_lip_retargeter":    {"models-3.0.0", "", "MIT"},
	"live_portrait_stitcher":          {"models-3.0.0", "", "MIT"},
	// internal/deps/fetch.sh
	"fr_feature": {"", "npm faceplugin-face-recognition-js@0.0.1", "MIT (package); the weights' origin is not stated"},
}

// DownloadProvider is one of FaceFusion's download hosts (facefusion/choices.py's
// download_provider_set): a file's URL is a host, then Path with {base_name} (a model's Base)
// and {file_name} (its File) filled in. FaceFusion uses the first host that answers.
type DownloadProvider struct {
	Name string
	// Hosts are FaceFusion's own (its GitHub organisation, its Hugging Face account).
	Hosts []string
	// Mirrors serve the same paths but are someone else's (FaceFusion lists hf-mirror.com, a
	// third party's copy of Hugging Face): tried after Hosts, and trusted only where a published
	// sha256 checks what they serve, since their own .hash (a CRC32) would catch damage but not
	// a substituted file.
	Mirrors []string
	Path    string
}

// DownloadProviders are FaceFusion's hosts in its default --download-providers order.
var DownloadProviders = []DownloadProvider{
	{Name: "github", Hosts: []string{"https://github.com"},
		Path: "/facefusion/facefusion-assets/releases/download/{base_name}/{file_name}"},
	{Name: "huggingface", Hosts: []string{"https://huggingface.co"}, Mirrors: []string{"https://hf-mirror.com"},
		Path: "/facefusion/{base_name}/resolve/main/{file_name}"},
}
