package catalog

import "github.com/facefusion-hpc/facefusion/infer"

// The whole-frame models of frame_colorizer and background_remover, kept apart from
// the face models' table so that each processor's facts sit together.

// The kinds of the whole-frame models.
const (
	// Colorizer colours a frame (frame_colorizer_model).
	Colorizer Kind = "colorizer"
	// BackgroundRemover masks a frame's background (background_remover_model).
	BackgroundRemover Kind = "background_remover"
)

// The colorizer families (FaceFusion's model 'type'): how the grey frame is made and the
// model's output merged back.
const (
	// DDColor takes the grey frame as L of L*a*b* with a = b = 0, as RGB in 0..1, and gives a
	// and b ([N,2,H,W]), merged with the frame's own L.
	DDColor = "ddcolor"
	// DeOldify takes the grey frame as RGB 0..255 and gives a colour frame ([N,3,H,W], RGB
	// 0..255), whose 8-bit a and b are merged under the frame's blue channel as L.
	DeOldify = "deoldify"
)

// The background remover families FaceFusion tells apart: u2net_cloth's output is argmaxed
// over its classes; corridor_key takes a fourth, coarse green-screen channel and gives the
// frame back with the mask. The others give a mask alone.
const (
	RemoverU2NetCloth  = "u2net_cloth"
	RemoverCorridorKey = "corridor_key"
)

// ColorizerSizes are frame_colorizer_size's choices in pixels (frame_colorizer/choices.py);
// ColorizerSize is its default.
var ColorizerSizes = []int{192, 256, 384, 512}

const ColorizerSize = 256

// colorizerModel is a colorizer's entry: the input's sides are dynamic (FaceFusion feeds the
// frame_colorizer_size it is given).
func colorizerModel(name, typ string) *Model {
	outC := int64(2)
	norm := Norm{Scale: 255, Std: unit} // ddcolor: RGB 0..1
	if typ == DeOldify {
		outC, norm = 3, Norm{Scale: 1, Std: unit} // RGB 0..255 as it is
	}
	return &Model{Name: name, Kind: Colorizer, Batched: true, Type: typ,
		Want: infer.Signature{
			Inputs:  []infer.TensorSpec{f32("input", dyn, 3, dyn, dyn)},
			Outputs: []infer.TensorSpec{f32("", dyn, outC, dyn, dyn)}},
		Size: ColorizerSize, Sizes: ColorizerSizes, Norm: norm,
		Unconfirmed: "dynamic input sides (FaceFusion feeds 192..512) and the output's shape, from FaceFusion's [0][0] and its transpose"}
}

// removerModel is a background remover's entry: FaceFusion feeds the frame resized to size²,
// RGB, (v/255 − mean)/std.
func removerModel(name, typ string, size int64, norm Norm) *Model {
	in := int64(3)
	outs := []infer.TensorSpec{f32("", dyn, dyn, size, size)}
	if typ == RemoverCorridorKey {
		in = 4 // the coarse green-screen mask after R, G, B
		outs = []infer.TensorSpec{f32("", dyn, 1, size, size), f32("", dyn, 3, size, size)}
	}
	return &Model{Name: name, Kind: BackgroundRemover, Batched: true, Type: typ,
		Want: infer.Signature{
			Inputs:  []infer.TensorSpec{f32("input", dyn, in, size, size)},
			Outputs: outs},
		Size: int(size), Norm: norm,
		Unconfirmed: "the output's shape: a mask [1,1,size,size] FaceFusion squeezes (u2net_cloth: class scores it argmaxes over axis 1; corridor_key: mask and frame [1,3,size,size])"}
}

// addFrameModels adds frame_colorizer's and background_remover's models.
func addFrameModels(m map[string]*Model) {
	for name, d := range frameDistribution { // before addTo reads them
		distribution[name] = d
	}
	add := func(x *Model) { addTo(m, x) }

	// frame_colorizer/core.py
	add(colorizerModel("ddcolor", DDColor))
	add(colorizerModel("ddcolor_artistic", DDColor))
	add(colorizerModel("deoldify", DeOldify))
	add(colorizerModel("deoldify_artistic", DeOldify))
	add(colorizerModel("deoldify_stable", DeOldify))

	// background_remover/core.py: sizes, means and deviations as FaceFusion lists them.
	zero := Norm{Scale: 255, Std: unit}
	halfMean := Norm{Scale: 255, Mean: half, Std: unit}
	add(removerModel("ben_2", "ben", 1024, zero))
	add(removerModel("birefnet_general", "birefnet", 1024, zero))
	add(removerModel("birefnet_portrait", "birefnet", 1024, zero))
	add(removerModel("corridor_key_1024", RemoverCorridorKey, 1024, imagenet))
	add(removerModel("corridor_key_2048", RemoverCorridorKey, 2048, imagenet))
	add(removerModel("isnet_general", "isnet", 1024, halfMean))
	add(removerModel("modnet", "modnet", 512, rgbHalf))
	add(removerModel("ormbg", "ormbg", 1024, zero))
	add(removerModel("rmbg_1.4", "rmbg", 1024, halfMean))
	add(removerModel("rmbg_2.0", "rmbg", 1024, imagenet))
	add(removerModel("silueta", "silueta", 320, imagenet))
	add(removerModel("u2net_cloth", RemoverU2NetCloth, 768, imagenet))
	add(removerModel("u2net_general", "u2net", 320, imagenet))
	add(removerModel("u2net_human", "u2net", 320, imagenet))
	add(removerModel("u2netp", "u2netp", 320, imagenet))
}

// frameDistribution is where FaceFusion 3.8.1 publishes the whole-frame models and their
// licences (frame_colorizer/core.py, background_remover/core.py); FaceFusion publishes no sizes
// or hashes of them beyond its .hash files, and ../shared/models lists none.
var frameDistribution = map[string]struct{ base, pkg, licence string }{
	"ddcolor":           {"models-3.0.0", "", "Apache-2.0"},
	"ddcolor_artistic":  {"models-3.0.0", "", "Apache-2.0"},
	"deoldify":          {"models-3.0.0", "", "MIT"},
	"deoldify_artistic": {"models-3.0.0", "", "MIT"},
	"deoldify_stable":   {"models-3.0.0", "", "MIT"},

	"ben_2":             {"models-3.5.0", "", "MIT"},
	"birefnet_general":  {"models-3.5.0", "", "MIT"},
	"birefnet_portrait": {"models-3.5.0", "", "MIT"},
	"corridor_key_1024": {"models-3.6.0", "", "Non-Commercial"},
	"corridor_key_2048": {"models-3.6.0", "", "Non-Commercial"},
	"isnet_general":     {"models-3.5.0", "", "Apache-2.0"},
	"modnet":            {"models-3.5.0", "", "Apache-2.0"},
	"ormbg":             {"models-3.5.0", "", "Apache-2.0"},
	"rmbg_1.4":          {"models-3.5.0", "", "Non-Commercial"},
	"rmbg_2.0":          {"models-3.5.0", "", "Non-Commercial"},
	"silueta":           {"models-3.5.0", "", "Apache-2.0"},
	"u2net_cloth":       {"models-3.5.0", "", "MIT"},
	"u2net_general":     {"models-3.5.0", "", "Apache-2.0"},
	"u2net_human":       {"models-3.5.0", "", "Apache-2.0"},
	"u2netp":            {"models-3.5.0", "", "Apache-2.0"},
}
