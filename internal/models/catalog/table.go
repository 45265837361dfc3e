package catalog

import (
	"strings"

	"github.com/facefusion-hpc/facefusion/infer"
)

// Normalisations FaceFusion uses, in its own arithmetic.
var (
	unit     = [3]float64{1, 1, 1}
	half     = [3]float64{0.5, 0.5, 0.5}
	imagenet = Norm{Scale: 255, Mean: [3]float64{0.485, 0.456, 0.406}, Std: [3]float64{0.229, 0.224, 0.225}}
	// The anchor detectors take the BGR frame as (v − 127.5)/128; yoloface and 2dfan4 BGR/255.
	anchorNorm = Norm{BGR: true, Scale: 1, Mean: [3]float64{127.5, 127.5, 127.5}, Std: [3]float64{128, 128, 128}}
	bgrUnit    = Norm{BGR: true, Scale: 255, Std: unit}
	rgbUnit    = Norm{Scale: 255, Std: unit}
	rgbHalf    = Norm{Scale: 255, Mean: half, Std: half}
)

func f32(name string, shape ...int64) infer.TensorSpec {
	return infer.TensorSpec{Name: name, Shape: shape, Type: infer.Float32}
}

const dyn = infer.Dyn

// The published sizes and hashes of FaceFusion 3.x's files (see ../shared/models/README.md).
// The rows after the blank line are not in that table: their size and sha256 are those of the
// Git LFS pointer .assets/models/hyperswap_1a_256.onnx in github.com/gavinYChsu/fuse (commit
// 148337b0, a copy of FaceFusion's .assets/models whose 2dfan4, bisenet_resnet_34, xseg_1 and
// yoloface_8n pointers agree with the table above) for hyperswap_1a_256, and for the others the
// values pinned alike by at least two unrelated public projects that download these files from
// FaceFusion's hosts and check them (found by code search; no LFS pointer of FaceFusion's own).
// simswap_256, ghost_1/2/3_256 and crossface_simswap/ghost stay without: no two sources agreed.
var published = map[string]infer.Published{
	"2dfan4":             {Bytes: 97904803, SHA256: "678c6fa539d52335a31c980feefdf4a6e02d781d83dce00af8a894f114557285", CRC32: "a948738e"},
	"fan_68_5":           {Bytes: 944321, SHA256: "ea05f7d9d014ae1d9cdc6e9c72643d8f00d198b5db3fdd384148ddff499a613e", CRC32: "95c4a198"},
	"peppa_wutz":         {Bytes: 13753559, SHA256: "ff2de0fa5ceb8aad8c8d037ba2fab8afe90ace34626f3268aae5a56965015776", CRC32: "eb82cb4f"},
	"arcface_w600k_r50":  {Bytes: 174388474, SHA256: "f1f79dc3b0b79a69f94799af1fffebff09fbd78fd96a275fd8f0cbbea23270d1", CRC32: "1f5fefb8"},
	"bisenet_resnet_18":  {Bytes: 53205356, SHA256: "2218b6183c26ca5c83303232d682a536c670c13ea9695f716c777d1f244eefe9", CRC32: "6cafc877"},
	"bisenet_resnet_34":  {Bytes: 93632546, SHA256: "4a0b8c958a3c938913bd06a8365dbb3c8761afba6ecbf0d14b3b1f77eb230c96", CRC32: "35d17a50"},
	"gfpgan_1.4":         {Bytes: 340299087, SHA256: "accc4757b26bdb89b32b4d3500d4f79c9dff97c1dd7c7104bf9dcb95e3311385", CRC32: ""},
	"inswapper_128":      {Bytes: 555303150, SHA256: "a290273ed497312095dac48cdef20feec9d5208298223dd01288ab202b54bea7", CRC32: "7057c6ea"},
	"inswapper_128_fp16": {Bytes: 277680829, SHA256: "c4eccca86ad177586c85c28bf1a64a9d9ed237e283a15818d831f7facfd3f420", CRC32: "32500ff1"},
	"retinaface_10g":     {Bytes: 16926877, SHA256: "808399c3d0b40ed340634ed590ae564a7caa09e5659916923a95d4470b54ff5a", CRC32: "75b598f8"},
	"scrfd_2.5g":         {Bytes: 3295067, SHA256: "2c07342347cef21a619c49dd5664fb8c09570ae9eda5bff3e385c11eafc45ada", CRC32: "d0266d7d"},
	"xseg_1":             {Bytes: 70324286, SHA256: "c4d1498b8a03b5fe2a3a5d2ef2a0402ab03bd51edaf5b2d8d5fb764702a97dd3", CRC32: "f207afe3"},
	"xseg_2":             {Bytes: 70324286, SHA256: "cd9a0879eaf43841d765472cf1f8c330dbf9dcb03da0eace93e95f3bcc399042", CRC32: "1cae7137"},
	"xseg_3":             {Bytes: 70327709, SHA256: "48ccd7e8541e159a5a754ec9e62df2f12065f7df8f9af842c1750342c6533559", CRC32: "e99b694c"},
	"styleganex_age":     {Bytes: 1340360455, SHA256: "212cdf55a9b66c382016119f7d642a227ca16c833348dd78d1e129ae5cf9ec7c", CRC32: "d9cbebb8"},
	"yoloface_8n":        {Bytes: 12659761, SHA256: "821cdbb1e65fbbabdde7dd0933f754797a343e56fd962729c61ffcefcd135929", CRC32: "f9a0382f"},

	"codeformer":       {Bytes: 376951650, SHA256: "21710e7ab61c82683576c428e9c1b6fe1ed419586b7b39e394c3449c294b550f"},
	"gpen_bfr_256":     {Bytes: 75792988, SHA256: "bad8bf0426873828df2dbf4e3b3d9ababba9da7965b8b72426569486f7ae5c25"},
	"gpen_bfr_512":     {Bytes: 284340240, SHA256: "d5f066b9068a8b74217f9712e28e875a6144629b108a6f7355acbdb3a2832c54"},
	"hyperswap_1a_256": {Bytes: 402742682, SHA256: "c0e98a8a03a238f461ed3d2570e426b49f46745ee400854a60dceeb70c246add"},
	"hyperswap_1b_256": {Bytes: 402742682, SHA256: "5124031789c42f71b9558fb71954ef7aedb6da7ed9fac79293e23c61a792a73e"},
	"hyperswap_1c_256": {Bytes: 402742682, SHA256: "5528c2d76fe9986c99d829278987ef9f3a630cb606db7628d02b57b330f406a5"},

	// The lip syncer's voice extractor (lipsync.go).
	"kim_vocal_2": {Bytes: 66766794, SHA256: "fbde1fd7d35a6b1785add2225ce03255a01ccef6c8a5fb7b2ccd4e0c1e9097f7", CRC32: "c965a055"},

	// Not FaceFusion's: the file in npm faceplugin-face-recognition-js@0.0.1 (model/), as
	// internal/deps/fetch.sh places it.
	"fr_feature": {Bytes: 4884269, SHA256: "87aacdfe57510db2af90c0251df680e8eec88f122ee94712121d09bcaaaf3581"},
}

// addTo puts x into m under its Name with its file name, published facts and distribution.
func addTo(m map[string]*Model, x *Model) {
	if x.File == "" {
		x.File = x.Name + ".onnx"
	}
	x.Published = published[x.Name]
	d := distribution[x.Name]
	x.Published.By = d.pkg
	x.Base, x.Package, x.Licence = d.base, d.pkg, d.licence
	m[x.Name] = x
}

// table is every FaceFusion model this project loads, by Name. Input names are FaceFusion's
// (its code binds them by name); output names are not used by FaceFusion and are left open.
var table = func() map[string]*Model {
	m := map[string]*Model{}
	addDetectors(m)
	addAnalysers(m)
	addSwappers(m)
	addEnhancers(m)
	addMaskersAndConverters(m)
	addFrameModels(m) // frames.go: frame_colorizer, background_remover
	addFrameEnhancers(m)
	addAgeModifiers(m)
	addDeepSwappers(m)
	addLipSyncers(m) // lipsync.go
	addLivePortrait(m)
	return m
}()

// addDetectors adds the face detectors.
func addDetectors(m map[string]*Model) {
	add := func(x *Model) { addTo(m, x) }

	// Detectors: the frame, shrunk to fit and zero-padded bottom-right, BGR.
	//
	// scrfd_2.5g, confirmed on FaceFusion's own file (../shared/models, its published sha256;
	// internal/models/adapters TestSCRFDRealSignature): input "input" float32 [1,3,?,?], the batch axis
	// fixed at 1 and the sides dynamic, so every size FaceFusion offers loads; outputs "0"–"8"
	// float32, the scores [?,1], box distances [?,4] and keypoint offsets [?,10] of strides 8,
	// 16 and 32 in that order, two anchors per cell, with no batch axis. It cannot batch
	// (Batched false): a session shared by workers runs their frames one after another, or
	// concurrently where the provider allows. Its boxes and five points on real faces agree with
	// dlib's 68 points (internal/pipeline TestSCRFDRealFile).
	//
	// retinaface_10g is taken to have the same layout, since FaceFusion decodes both with the
	// same code; no real file has confirmed it.
	anchors := map[string]string{"scrfd_2.5g": "scrfd", "retinaface_10g": "retinaface"}
	for name, opt := range anchors {
		outs := make([]infer.TensorSpec, 0, 9)
		for _, w := range []int64{1, 4, 10} { // scores, boxes, 5 keypoints; per stride 8, 16, 32
			for range 3 {
				outs = append(outs, f32("", dyn, w))
			}
		}
		x := &Model{Name: name, Option: opt, Kind: Detector,
			Want: infer.Signature{Inputs: []infer.TensorSpec{f32("input", dyn, 3, dyn, dyn)}, Outputs: outs},
			Size: 640, Sizes: []int{160, 320, 480, 512, 640}, Norm: anchorNorm}
		if name == "retinaface_10g" {
			x.Unconfirmed = "the whole signature, from FaceFusion's code and scrfd_2.5g's file: input [1,3,?,?] with dynamic sides " +
				"(FaceFusion offers sizes 160..640); outputs [anchors, 1|4|10] without a batch axis, scores, boxes, keypoints per stride 8, 16, 32"
		}
		add(x)
	}
	add(&Model{Name: "yoloface_8n", Option: "yolo_face", Kind: Detector,
		Want: infer.Signature{
			Inputs:  []infer.TensorSpec{f32("input", dyn, 3, 640, 640)},
			Outputs: []infer.TensorSpec{f32("", dyn, 20, dyn)}},
		Size: 640, Sizes: []int{640}, Norm: bgrUnit,
		Unconfirmed: "output [1, 20, 8400] at 640 (cx, cy, w, h, score, 5×(x, y, visibility)), transposed by FaceFusion"})

	// yunet takes the BGR frame as it is (0..255), FaceFusion offers it only at 640×640, and
	// reads its twelve outputs by position: class scores, objectness, boxes (centre offset,
	// log size) and five points, each for strides 8, 16 and 32, one anchor per cell.
	var yunetOuts []infer.TensorSpec
	for _, w := range []int64{1, 1, 4, 10} {
		for range 3 {
			yunetOuts = append(yunetOuts, f32("", dyn, dyn, w))
		}
	}
	add(&Model{Name: "yunet_2023_mar", Option: "yunet", Kind: Detector,
		Want: infer.Signature{Inputs: []infer.TensorSpec{f32("input", dyn, 3, dyn, dyn)}, Outputs: yunetOuts},
		Size: 640, Sizes: []int{640}, Norm: Norm{BGR: true, Scale: 1, Std: unit},
		Unconfirmed: "outputs [1, cells, 1|1|4|10] in the order cls, obj, bbox, kps (from FaceFusion's squeeze(0) and reshape(-1)); input sides"})
}

// addAnalysers adds the models that read a found face: landmarkers, recognizers and the
// classifier.
func addAnalysers(m map[string]*Model) {
	add := func(x *Model) { addTo(m, x) }

	// The crop is scaled by 195/max(box w, h) around the box; points are heatmap coordinates
	// (×256/64); the score is the mean of per-point heatmap maxima.
	add(&Model{Name: "2dfan4", Kind: Landmarker, Batched: true,
		Want: infer.Signature{
			Inputs:  []infer.TensorSpec{f32("input", dyn, 3, 256, 256)},
			Outputs: []infer.TensorSpec{f32("", dyn, 68, 3), f32("", dyn, 68, 64, 64)}},
		Size: 256, Norm: bgrUnit,
		Unconfirmed: "output order (points [1,68,3] then heatmaps [1,68,64,64]) from FaceFusion's unpacking"})
	// The same crop as 2dfan4's; one output FaceFusion reshapes to 68 rows of (x, y on the
	// 64-grid, confidence); the score is the mean confidence mapped from [0, 0.95] onto [0, 1].
	add(&Model{Name: "peppa_wutz", Kind: Landmarker, Batched: true,
		Want: infer.Signature{
			Inputs:  []infer.TensorSpec{f32("input", dyn, 3, 256, 256)},
			Outputs: []infer.TensorSpec{f32("", dyn, 68, 3)}},
		Size: 256, Norm: bgrUnit,
		Unconfirmed: "output shape [1,68,3], from FaceFusion's reshape(-1, 3) of its first output"})
	// fan_68_5 estimates 68 points from the detector's five, moved into ffhq_512's unit square
	// (input [1,5,2]); its output, moved back, gives the face angle (estimate_face_angle).
	add(&Model{Name: "fan_68_5", Kind: LandmarkEstimator, Batched: true,
		Want: infer.Signature{
			Inputs:  []infer.TensorSpec{f32("input", dyn, 5, 2)},
			Outputs: []infer.TensorSpec{f32("", dyn, 68, 2)}},
		Template: "ffhq_512", Size: 1,
		Unconfirmed: "output shape [1,68,2], from FaceFusion's [0][0] of its first output"})

	// FaceFusion reverses its BGR crop to RGB and maps it to v/127.5 − 1.
	add(&Model{Name: "arcface_w600k_r50", Kind: Recognizer, Batched: true,
		Want: infer.Signature{
			Inputs:  []infer.TensorSpec{f32("input", dyn, 3, 112, 112)},
			Outputs: []infer.TensorSpec{f32("", dyn, 512)}},
		Template: "arcface_112_v2", Size: 112, Norm: Norm{Scale: 127.5, Mean: unit, Std: unit}})

	// fairface: the face warped to arcface_112_v2 at 224×224, RGB, /255, ImageNet mean and
	// deviation; three outputs FaceFusion unpacks as race, gender and age ids and reads at [0].
	add(&Model{Name: "fairface", Kind: Classifier,
		Want: infer.Signature{
			Inputs: []infer.TensorSpec{f32("input", dyn, 3, 224, 224)},
			Outputs: []infer.TensorSpec{{Shape: []int64{dyn}, Type: infer.Int64}, {Shape: []int64{dyn}, Type: infer.Int64},
				{Shape: []int64{dyn}, Type: infer.Int64}}},
		Template: "arcface_112_v2", Size: 224, Norm: imagenet,
		Unconfirmed: "outputs race_id, gender_id, age_id as int64 [1] (the ids FaceFusion compares with 1, 2, …)"})

	// The embedded default's recognizer (reference mode and the identity measure without
	// FaceFusion's models), confirmed on the real file with infer.ReadSignature: input "input"
	// float32 [1,3,112,112] (its batch axis fixed at 1), output "output" float32 [1,512]. Its
	// package's lib/fr_feature.js aligns the face by an affine map of three of the 68 points'
	// five (the eyes' centres and the nose tip) onto the first three points of its
	// REFERENCE_FACIAL_POINTS, which are arcface_112_v2's; then RGB, (v − 127)/128.
	add(&Model{Name: "fr_feature", Kind: Recognizer, Batched: true,
		Want: infer.Signature{
			Inputs:  []infer.TensorSpec{f32("input", dyn, 3, 112, 112)},
			Outputs: []infer.TensorSpec{f32("output", dyn, 512)}},
		Template: "arcface_112_v2", Size: 112,
		Norm: Norm{Scale: 1, Mean: [3]float64{127, 127, 127}, Std: [3]float64{128, 128, 128}}})
}

// sourceCrop is the source face a swapper takes: a crop of size² pixels warped to template,
// or, the zero value, the source's embedding [1,512].
type sourceCrop struct {
	template string
	size     int64
}

// embedding is the source of the swappers that take an embedding, not a crop.
var embedding = sourceCrop{}

// addSwappers adds the face swappers.
func addSwappers(m map[string]*Model) {
	add := func(x *Model) { addTo(m, x) }

	// The pixel boosts FaceFusion lists (face_swapper/choices.py). blendswap_256's 384 and
	// simswap_unofficial_512's 768 are not whole multiples of the model's size: FaceFusion's
	// implode_pixel_boost cannot split them into tiles, so job validation refuses them.
	boost128 := []int{128, 256, 384, 512, 768, 1024}
	boost256 := []int{256, 512, 768, 1024}
	add(swapperModel("blendswap_256", Blendswap, "ffhq_512", 256, rgbUnit, "", []int{256, 384, 512, 768, 1024}, sourceCrop{"arcface_112_v2", 112}))
	add(swapperModel("hififace_unofficial_256", Hififace, "mtcnn_512", 256, rgbHalf, "crossface_hififace", boost256, embedding))
	add(swapperModel("inswapper_128", Inswapper, "arcface_128", 128, rgbUnit, "", boost128, embedding))
	add(swapperModel("inswapper_128_fp16", Inswapper, "arcface_128", 128, rgbUnit, "", boost128, embedding))
	for _, v := range []string{"1a", "1b", "1c"} {
		add(swapperModel("hyperswap_"+v+"_256", Hyperswap, "arcface_128", 256, rgbHalf, "", boost256, embedding))
	}
	add(swapperModel("simswap_256", Simswap, "arcface_112_v1", 256, imagenet, "crossface_simswap", boost256, embedding))
	add(swapperModel("simswap_unofficial_512", Simswap, "arcface_112_v1", 512, rgbUnit, "crossface_simswap", []int{512, 768, 1024}, embedding))
	for _, v := range []string{"1", "2", "3"} {
		add(swapperModel("ghost_"+v+"_256", Ghost, "arcface_112_v1", 256, rgbHalf, "crossface_ghost", boost256, embedding))
	}
	add(swapperModel("uniface_256", Uniface, "ffhq_512", 256, rgbHalf, "", boost256, sourceCrop{"ffhq_512", 256}))
}

// swapperModel is a swapper's entry. source.size 0: the 'source' input is an embedding
// [1,512]; else a source.size² RGB face crop.
func swapperModel(name string, typ SwapperType, template string, size int64, norm Norm, converter string, boost []int, source sourceCrop) *Model {
	t := infer.Float32
	if strings.HasSuffix(name, "_fp16") {
		t = infer.AnyFloat
	}
	img := infer.TensorSpec{Shape: []int64{dyn, 3, size, size}, Type: t}
	tgt := img
	tgt.Name = "target"
	src := infer.TensorSpec{Name: "source", Shape: []int64{dyn, 512}, Type: t}
	unconfirmed := "source width 512 for every swapper (the crossface converters keep 512 for simswap, ghost and hififace: not verified)"
	if source.size > 0 {
		src.Shape = []int64{dyn, 3, source.size, source.size}
		unconfirmed = "output [1,3,size,size] like the target (FaceFusion reads output 0)"
	}
	return &Model{Name: name, Kind: Swapper, Batched: true,
		Want: infer.Signature{
			Inputs:  []infer.TensorSpec{tgt, src},
			Outputs: []infer.TensorSpec{img}},
		Template: template, Size: int(size), Sizes: boost, Norm: norm,
		SwapperType: typ, Converter: converter, SourceTemplate: source.template, SourceSize: int(source.size),
		FP16:        strings.HasSuffix(name, "_fp16") || typ == Hyperswap,
		Unconfirmed: unconfirmed}
}

// addEnhancers adds the face enhancers.
func addEnhancers(m map[string]*Model) {
	add := func(x *Model) { addTo(m, x) }

	add(enhancerModel("codeformer", "ffhq_512", 512, true))
	add(enhancerModel("gfpgan_1.2", "ffhq_512", 512, false))
	add(enhancerModel("gfpgan_1.3", "ffhq_512", 512, false))
	add(enhancerModel("gfpgan_1.4", "ffhq_512", 512, false))
	// FaceFusion 3.8.1 warps gpen_bfr_256 with arcface_128, not ffhq_512.
	add(enhancerModel("gpen_bfr_256", "arcface_128", 256, false))
	add(enhancerModel("gpen_bfr_512", "ffhq_512", 512, false))
	add(enhancerModel("gpen_bfr_1024", "ffhq_512", 1024, false))
	add(enhancerModel("gpen_bfr_2048", "ffhq_512", 2048, false))
	add(enhancerModel("restoreformer_plus_plus", "ffhq_512", 512, false))
}

// enhancerModel is an enhancer's entry; weight adds FaceFusion's 'weight' input.
func enhancerModel(name, template string, size int64, weight bool) *Model {
	ins := []infer.TensorSpec{f32("input", dyn, 3, size, size)}
	if weight {
		// FaceFusion feeds numpy.array([weight]).astype(numpy.double).
		ins = append(ins, infer.TensorSpec{Name: "weight", Shape: []int64{1}, Type: infer.Float64})
	}
	return &Model{Name: name, Kind: Enhancer, Batched: true,
		Want:     infer.Signature{Inputs: ins, Outputs: []infer.TensorSpec{f32("", dyn, 3, size, size)}},
		Template: template, Size: int(size), Norm: rgbHalf}
}

// addMaskersAndConverters adds the occluders and region parsers the masks use, and the
// converters of source embeddings.
func addMaskersAndConverters(m map[string]*Model) {
	add := func(x *Model) { addTo(m, x) }

	// The occluders (face_occluder_model; "many" runs all three): the crop resized to 256,
	// /255, channel-last, in the frame's (BGR) order.
	for _, n := range []string{"xseg_1", "xseg_2", "xseg_3"} {
		add(&Model{Name: n, Kind: Occluder, Batched: true,
			Want: infer.Signature{
				Inputs:  []infer.TensorSpec{f32("input", dyn, 256, 256, 3)},
				Outputs: []infer.TensorSpec{f32("", dyn, 256, 256, 1)}},
			Size: 256, Norm: Norm{BGR: true, NHWC: true, Scale: 255, Std: unit},
			Unconfirmed: "output [1,256,256,1] (FaceFusion clips it to [0,1] and blurs it)"})
	}
	// The region parsers (face_parser_model): RGB /255, ImageNet mean/std; argmax over the 19
	// classes.
	for _, n := range []string{"bisenet_resnet_18", "bisenet_resnet_34"} {
		add(&Model{Name: n, Kind: Parser, Batched: true,
			Want: infer.Signature{
				Inputs:  []infer.TensorSpec{f32("input", dyn, 3, 512, 512)},
				Outputs: []infer.TensorSpec{f32("", dyn, 19, 512, 512)}},
			Size: 512, Norm: imagenet,
			Unconfirmed: "output [1,19,512,512] (19 face-parsing classes)"})
	}
	// The embedding converters simswap, ghost and hififace take their source through:
	// FaceFusion feeds the raw arcface embedding as 'input' [1,512] and uses output 0.
	for _, n := range []string{"crossface_simswap", "crossface_ghost", "crossface_hififace"} {
		add(&Model{Name: n, Kind: Converter, Batched: true,
			Want: infer.Signature{
				Inputs:  []infer.TensorSpec{f32("input", dyn, 512)},
				Outputs: []infer.TensorSpec{f32("", dyn, 512)}},
			Size:        512,
			Unconfirmed: "output [1,512] (FaceFusion reads output 0 and reshapes it to the swapper's source)"})
	}
}

// ---- frame_enhancer (processors/modules/frame_enhancer/core.py) ----

// frameEnhancers are FaceFusion 3.8.1's frame enhancers: name, 'size' (tile, pad, overlap),
// 'scale', and the 'precision' fp16 mark.
var frameEnhancers = []struct {
	name  string
	tile  Tile
	scale int
	fp16  bool
}{
	{"clear_reality_x4", Tile{128, 8, 4}, 4, false},
	{"face_dat_x4", Tile{128, 8, 4}, 4, false},
	{"nomos8k_sc_x4", Tile{128, 8, 4}, 4, false},
	{"real_esrgan_x2", Tile{256, 16, 8}, 2, false},
	{"real_esrgan_x2_fp16", Tile{256, 16, 8}, 2, true},
	{"real_esrgan_x4", Tile{256, 16, 8}, 4, false},
	{"real_esrgan_x4_fp16", Tile{256, 16, 8}, 4, true},
	{"real_esrgan_x8", Tile{256, 16, 8}, 8, false},
	{"real_esrgan_x8_fp16", Tile{256, 16, 8}, 8, true},
	{"real_hatgan_x4", Tile{256, 16, 8}, 4, false},
	{"real_web_photo_x4", Tile{64, 4, 2}, 4, false},
	{"realistic_rescaler_x4", Tile{128, 8, 4}, 4, false},
	{"remacri_x4", Tile{128, 8, 4}, 4, false},
	{"siax_x4", Tile{128, 8, 4}, 4, false},
	{"span_kendata_x4", Tile{128, 8, 4}, 4, false},
	{"swin2_sr_x4", Tile{128, 8, 4}, 4, false},
	{"tghq_face_x8", Tile{128, 8, 4}, 8, false},
	{"ultra_sharp_x4", Tile{128, 8, 4}, 4, false},
	{"ultra_sharp_2_x4", Tile{1024, 64, 32}, 4, false},
}

// addFrameEnhancers adds the frame enhancers. FaceFusion feeds each tile as 'input' float32
// [1,3,size,size], RGB in [0, 1] (prepare_tile_frame), and reads output 0 as [1,3,size·scale,
// size·scale] in [0, 1] (normalize_tile_frame: ×255, clipped, truncated, back to BGR); its fp16
// files are fed float32 as well. A file that leaves the sides dynamic takes these.
func addFrameEnhancers(m map[string]*Model) {
	for _, e := range frameEnhancers {
		t, o := int64(e.tile.Size), int64(e.tile.Size*e.scale)
		addTo(m, &Model{Name: e.name, Kind: FrameEnhancer, Batched: true,
			Want: infer.Signature{
				Inputs:  []infer.TensorSpec{f32("input", dyn, 3, t, t)},
				Outputs: []infer.TensorSpec{f32("", dyn, 3, o, o)}},
			Size: e.tile.Size, Tile: e.tile, Scale: e.scale, FP16: e.fp16, Norm: rgbUnit,
			Unconfirmed: "the file's batch axis and sides (FaceFusion runs batch 1 at the tile size; no real file was checked)"})
	}
}

// addAgeModifiers adds age_modifier's models (processors/modules/age_modifier/core.py).
//
// fran takes the face warped to ffhq_512 at 1024, RGB /255 (mean 0, deviation 1), as 'target',
// and 'direction', the face's age and the age aimed at, both /100 and clipped to [0, 1], as
// float32 [2] with no batch axis: each face has its own, so a session runs one face at a time.
// styleganex_age takes the same face at 256 as 'target' and a wider crop (the five points
// scaled 0.875 about the nose, styleganex_384 at 384) as 'target_with_background', both RGB
// (v/255 − 0.5)/0.5, and 'direction', one float32 for the whole run; its output is the wider
// crop at four times its side.
func addAgeModifiers(m map[string]*Model) {
	add := func(x *Model) { addTo(m, x) }

	add(&Model{Name: "fran", Kind: AgeModifier,
		Want: infer.Signature{
			Inputs:  []infer.TensorSpec{f32("target", dyn, 3, 1024, 1024), f32("direction", 2)},
			Outputs: []infer.TensorSpec{f32("", dyn, 3, 1024, 1024)}},
		Template: "ffhq_512", Size: 1024, Norm: rgbUnit,
		Unconfirmed: "'direction' [2] and the output [1,3,1024,1024], from FaceFusion's feed and its [0][0] of output 0"})
	add(&Model{Name: "styleganex_age", Kind: AgeModifier,
		Want: infer.Signature{
			Inputs: []infer.TensorSpec{f32("target", dyn, 3, 256, 256), f32("target_with_background", dyn, 3, 384, 384),
				{Name: "direction", Shape: []int64{}, Type: infer.Float32}},
			Outputs: []infer.TensorSpec{f32("", dyn, 3, 1536, 1536)}},
		Template: "ffhq_512", Size: 256, Norm: rgbHalf,
		WideTemplate: "styleganex_384", WideSize: 384, WideScale: 0.875, PasteSize: 1024,
		Unconfirmed: "'direction' a 0-d float32 (FaceFusion feeds numpy.array(x).astype(float32)) and the output [1,3,1536,1536] (FaceFusion resizes it to 1024)"})
}

// --- expression_restorer and face_editor: LivePortrait's chain ---

// addLivePortrait adds the files of FaceFusion's live_portrait model set
// (processors/modules/expression_restorer/core.py, and face_editor/core.py, which adds the
// retargeters and the stitcher to the same set). The crops are RGB/255 at 256×256 (prepare_crop_frame), the
// generator's output RGB in 0..1 at 512×512. The motion extractor's pitch, yaw and roll have no
// axis at all (FaceFusion hands them to scipy's from_euler as scalars), so no file of the chain
// batches: the sessions run one face at a time, shared by the workers.
func addLivePortrait(m map[string]*Model) {
	add := func(part string, want infer.Signature) {
		addTo(m, &Model{Name: "live_portrait_" + part, Kind: LivePortrait, Set: "live_portrait", Part: part,
			Want: want, Size: 256, Norm: rgbUnit,
			Unconfirmed: "the output shapes, from FaceFusion's arithmetic on them (no real file checked here)"})
	}
	crop := []infer.TensorSpec{f32("input", dyn, 3, 256, 256)}
	points := func(name string) infer.TensorSpec { return f32(name, dyn, 21, 3) }
	add("feature_extractor", infer.Signature{Inputs: crop,
		Outputs: []infer.TensorSpec{f32("", dyn, 32, 16, 64, 64)}})
	add("motion_extractor", infer.Signature{Inputs: crop,
		Outputs: []infer.TensorSpec{f32(""), f32(""), f32(""), // pitch, yaw, roll in degrees
			// scale [1,1] and translation [1,3]: a two-axis output's batch axis is not one the
			// session may size, and the chain runs batch 1 (FaceFusion's too)
			f32("", 1, 1), f32("", 1, 3), points(""), points("")}}) // then expression, motion points
	add("generator", infer.Signature{
		Inputs:  []infer.TensorSpec{f32("feature_volume", dyn, 32, 16, 64, 64), points("source"), points("target")},
		Outputs: []infer.TensorSpec{f32("", dyn, 3, 512, 512)}})
	// face_editor's parts (processors/modules/face_editor/core.py): the retargeters take the
	// keypoints flattened with the eyes' ratios and their goal (66) or the lip's (65) as one
	// row and give the keypoints' move (63, reshaped to 21×3); the stitcher takes the edited
	// and the original keypoints and gives the generator's source keypoints.
	add("eye_retargeter", infer.Signature{Inputs: []infer.TensorSpec{f32("input", 1, 66)},
		Outputs: []infer.TensorSpec{f32("", 1, 63)}})
	add("lip_retargeter", infer.Signature{Inputs: []infer.TensorSpec{f32("input", 1, 65)},
		Outputs: []infer.TensorSpec{f32("", 1, 63)}})
	add("stitcher", infer.Signature{Inputs: []infer.TensorSpec{points("source"), points("target")},
		Outputs: []infer.TensorSpec{points("")}})
}
