package infer

// Published is what FaceFusion publishes about one of its model files: where its hosts keep it
// and, where known, the file's size and checksums. The sums are FaceFusion 3.x's, read from the
// Git LFS pointers and .hash files of a mirror of its .assets/models (../shared/models/README.md);
// the download base and licence from FaceFusion 3.8.1's create_static_model_set tables.
type Published struct {
	// Base is the release the file is published under (FaceFusion's resolve_download_url
	// base_name): a GitHub release tag of facefusion-assets, a Hugging Face repository.
	Base string
	// Licence is the model's licence as FaceFusion's __metadata__ names it.
	Licence string
	// Size is the file's length in bytes; 0 where no hash is published.
	Size int64
	// SHA256 is the file's sha256 in lower-case hex; "" where none is published.
	SHA256 string
	// CRC32 is the content of FaceFusion's MODEL.hash (zlib's CRC32, 8 hex digits); "" where
	// the mirror had no .hash.
	CRC32 string
}

// published is keyed by FaceFusion's model name (the file is NAME.onnx). A row with no size and
// no sums is a model for which no hash is published: FaceFusion's own .hash beside the file on
// its hosts is then the only check of a download.
var published = map[string]Published{
	// Face detectors (facefusion/face_detector.py).
	"retinaface_10g": {Base: "models-3.0.0", Licence: "Non-Commercial", Size: 16926877,
		SHA256: "808399c3d0b40ed340634ed590ae564a7caa09e5659916923a95d4470b54ff5a", CRC32: "75b598f8"},
	"scrfd_2.5g": {Base: "models-3.0.0", Licence: "Non-Commercial", Size: 3295067,
		SHA256: "2c07342347cef21a619c49dd5664fb8c09570ae9eda5bff3e385c11eafc45ada", CRC32: "d0266d7d"},
	"yoloface_8n": {Base: "models-3.0.0", Licence: "GPL-3.0", Size: 12659761,
		SHA256: "821cdbb1e65fbbabdde7dd0933f754797a343e56fd962729c61ffcefcd135929", CRC32: "f9a0382f"},

	// Landmarker (face_landmarker.py) and recognizer (face_recognizer.py).
	"2dfan4": {Base: "models-3.0.0", Licence: "MIT", Size: 97904803,
		SHA256: "678c6fa539d52335a31c980feefdf4a6e02d781d83dce00af8a894f114557285", CRC32: "a948738e"},
	"arcface_w600k_r50": {Base: "models-3.0.0", Licence: "Non-Commercial", Size: 174388474,
		SHA256: "f1f79dc3b0b79a69f94799af1fffebff09fbd78fd96a275fd8f0cbbea23270d1", CRC32: "1f5fefb8"},

	// Swappers (processors/modules/face_swapper/core.py).
	"inswapper_128": {Base: "models-3.0.0", Licence: "Non-Commercial", Size: 555303150,
		SHA256: "a290273ed497312095dac48cdef20feec9d5208298223dd01288ab202b54bea7", CRC32: "7057c6ea"},
	"inswapper_128_fp16": {Base: "models-3.0.0", Licence: "Non-Commercial", Size: 277680829,
		SHA256: "c4eccca86ad177586c85c28bf1a64a9d9ed237e283a15818d831f7facfd3f420", CRC32: "32500ff1"},
	"hyperswap_1a_256": {Base: "models-3.3.0", Licence: "ResearchRAIL"},   // no published hash
	"hyperswap_1b_256": {Base: "models-3.3.0", Licence: "ResearchRAIL"},   // no published hash
	"hyperswap_1c_256": {Base: "models-3.3.0", Licence: "ResearchRAIL"},   // no published hash
	"simswap_256":      {Base: "models-3.0.0", Licence: "Non-Commercial"}, // no published hash
	"ghost_1_256":      {Base: "models-3.0.0", Licence: "Apache-2.0"},     // no published hash
	"ghost_2_256":      {Base: "models-3.0.0", Licence: "Apache-2.0"},     // no published hash
	"ghost_3_256":      {Base: "models-3.0.0", Licence: "Apache-2.0"},     // no published hash
	// The embedding converters ship in the entry of the swapper that needs them, under its
	// licence.
	"crossface_simswap": {Base: "models-3.4.0", Licence: "Non-Commercial"}, // no published hash
	"crossface_ghost":   {Base: "models-3.4.0", Licence: "Apache-2.0"},     // no published hash

	// Enhancers (processors/modules/face_enhancer/core.py). FaceFusion lists a gfpgan_1.4.hash,
	// but the mirror had none: its CRC32 is unknown here.
	"gfpgan_1.4": {Base: "models-3.0.0", Licence: "Apache-2.0", Size: 340299087,
		SHA256: "accc4757b26bdb89b32b4d3500d4f79c9dff97c1dd7c7104bf9dcb95e3311385"},
	"codeformer":   {Base: "models-3.0.0", Licence: "S-Lab-1.0"},      // no published hash
	"gpen_bfr_256": {Base: "models-3.0.0", Licence: "Non-Commercial"}, // no published hash
	"gpen_bfr_512": {Base: "models-3.0.0", Licence: "Non-Commercial"}, // no published hash

	// Masks (face_masker.py): the occluder and the region parser.
	"xseg_1": {Base: "models-3.1.0", Licence: "GPL-3.0", Size: 70324286,
		SHA256: "c4d1498b8a03b5fe2a3a5d2ef2a0402ab03bd51edaf5b2d8d5fb764702a97dd3", CRC32: "f207afe3"},
	"bisenet_resnet_34": {Base: "models-3.0.0", Licence: "MIT", Size: 93632546,
		SHA256: "4a0b8c958a3c938913bd06a8365dbb3c8761afba6ecbf0d14b3b1f77eb230c96", CRC32: "35d17a50"},
}

// LookupPublished returns what FaceFusion publishes about model name; false for a name it does
// not know.
func LookupPublished(name string) (Published, bool) {
	p, ok := published[name]
	return p, ok
}

// DownloadProvider is one of FaceFusion's download hosts (facefusion/choices.py's
// download_provider_set): a file's URL is a host, then Path with {base_name} and {file_name}
// filled in. FaceFusion uses the first host that answers.
type DownloadProvider struct {
	Name  string
	Hosts []string
	Path  string
}

// DownloadProviders are FaceFusion's hosts in its default --download-providers order.
var DownloadProviders = []DownloadProvider{
	{Name: "github", Hosts: []string{"https://github.com"},
		Path: "/facefusion/facefusion-assets/releases/download/{base_name}/{file_name}"},
	{Name: "huggingface", Hosts: []string{"https://huggingface.co", "https://hf-mirror.com"},
		Path: "/facefusion/{base_name}/resolve/main/{file_name}"},
}
