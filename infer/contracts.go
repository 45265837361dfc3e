package infer

import (
	"fmt"
	"sort"
	"strings"
)

// DType is a tensor element type as ONNX numbers it (TensorProto.DataType), so the same values
// serve the session, the file reader and the fixture writer.
type DType int32

// The element types FaceFusion's models use.
const (
	Float32 DType = 1
	Uint8   DType = 2
	Int64   DType = 7
	Float16 DType = 10
	Float64 DType = 11
	// AnyFloat in a contract accepts Float32 or Float16: FaceFusion's "_fp16" swappers feed
	// float32 arrays (prepare_crop_frame never casts), so their files most likely keep float32
	// inputs and outputs around a half-precision graph, but that is not confirmed; both load.
	AnyFloat DType = -1
)

// Size is the number of bytes one element takes.
func (t DType) Size() int {
	switch t {
	case Float32:
		return 4
	case Float16:
		return 2
	case Float64, Int64:
		return 8
	case Uint8:
		return 1
	}
	return 0
}

func (t DType) String() string {
	switch t {
	case Float32:
		return "float32"
	case Float16:
		return "float16"
	case Float64:
		return "float64"
	case Int64:
		return "int64"
	case Uint8:
		return "uint8"
	case AnyFloat:
		return "float32|float16"
	}
	return fmt.Sprintf("dtype(%d)", int32(t))
}

// accepts reports whether a file's element type satisfies the contract's.
func (t DType) accepts(found DType) bool {
	if t == AnyFloat {
		return found == Float32 || found == Float16
	}
	return t == found
}

// Dyn in a contract shape means FaceFusion does not depend on that axis: the file may fix it or
// leave it dynamic. In a file's signature it marks a dynamic axis.
const Dyn int64 = -1

// TensorSpec is one input or output in a contract or in a file's signature. An empty Name in a
// contract output means "any name": FaceFusion runs every model with run(None, …) and takes the
// outputs by position, so only their order, rank and type are part of the contract.
type TensorSpec struct {
	Name  string
	Shape []int64
	Type  DType
}

func (s TensorSpec) String() string {
	name := s.Name
	if name == "" {
		name = "*"
	}
	dims := make([]string, len(s.Shape))
	for i, d := range s.Shape {
		if d < 0 {
			dims[i] = "?"
		} else {
			dims[i] = fmt.Sprint(d)
		}
	}
	return fmt.Sprintf("%s[%s]%s", name, strings.Join(dims, ","), s.Type)
}

// matches reports whether a file's tensor found satisfies the contract's tensor c.
func (c TensorSpec) matches(found TensorSpec) bool {
	if c.Name != "" && c.Name != found.Name {
		return false
	}
	if !c.Type.accepts(found.Type) || len(c.Shape) != len(found.Shape) {
		return false
	}
	for i, d := range c.Shape {
		// A dynamic axis in the file accepts whatever size FaceFusion feeds.
		if d >= 0 && found.Shape[i] >= 0 && d != found.Shape[i] {
			return false
		}
	}
	return true
}

// Signature is a model's inputs and outputs in file order.
type Signature struct {
	Inputs, Outputs []TensorSpec
}

func (s Signature) String() string {
	join := func(ts []TensorSpec) string {
		parts := make([]string, len(ts))
		for i, t := range ts {
			parts[i] = t.String()
		}
		return strings.Join(parts, " ")
	}
	return "in(" + join(s.Inputs) + ") out(" + join(s.Outputs) + ")"
}

// Kind is the role a model plays in the pipeline.
type Kind string

// The roles of FaceFusion's models.
const (
	KindDetector   Kind = "detector"
	KindLandmarker Kind = "landmarker"
	KindRecognizer Kind = "recognizer"
	KindSwapper    Kind = "swapper"
	KindEnhancer   Kind = "enhancer"
	KindOccluder   Kind = "occluder"
	KindParser     Kind = "parser"
	// KindConverter maps an arcface embedding into a swapper's identity space (crossface_*).
	KindConverter Kind = "converter"
)

// Prep is how FaceFusion turns a frame crop into the model input and the output back into
// pixels, as data an adapter applies. Pixel values v in 0..255 become (v/255 − Mean[c]) / Std[c]
// per channel c in ChannelOrder; outputs become (o·OutStd[c] + OutMean[c]) clipped to
// [ClipLo, ClipHi], then mapped back to 0..255 by the adapter (×255 for [0,1], (x+1)·127.5 for
// [−1,1]).
type Prep struct {
	// Template names the 5-point warp template (arcface_112_v1, arcface_112_v2, arcface_128,
	// ffhq_512, mtcnn_512); empty for models that do not take an aligned crop.
	Template string
	// Size is the side of the model's square input in pixels (the default detector size for a
	// detector).
	Size int
	// BGR is true when the model takes channels in BGR order (frames here are RGB).
	BGR bool
	// NHWC is true for channel-last inputs (xseg); otherwise NCHW.
	NHWC bool
	Mean [3]float32
	Std  [3]float32
	// OutMean and OutStd de-normalise an image output; zero OutStd means none (output used as is).
	OutMean, OutStd [3]float32
	// ClipLo and ClipHi bound an image output after de-normalisation (FaceFusion: swappers [0,1],
	// enhancers [−1,1]); equal values mean no image output.
	ClipLo, ClipHi float32
	// Embedding says how a swapper's source input is made: "emap" (inswapper: raw arcface
	// embedding · emap / ‖raw‖), "normed" (hyperswap: L2-normalised arcface embedding),
	// "converted" (simswap, ghost: FaceFusion first runs a crossface_* embedding converter, not
	// part of this table).
	Embedding string
}

// Contract is what FaceFusion 3.8.1 expects of one of its model files.
type Contract struct {
	// Name is FaceFusion's model name (--face-swapper-model inswapper_128, …).
	Name string
	// File is the file name FaceFusion downloads it as, looked up in the models directory.
	File string
	Kind Kind
	Signature
	Prep Prep
	// Unconfirmed lists the facts taken from the models' published signatures or inferred,
	// rather than read in FaceFusion's code; the contract accepts any value there.
	Unconfirmed string
}

// Check compares a file's signature with the contract and returns a one-line reason when it
// does not satisfy it, or "" when it does. Inputs are matched by name (FaceFusion binds them by
// name, in any order); outputs by position.
func (c *Contract) Check(found Signature) string {
	if len(found.Inputs) != len(c.Inputs) || len(found.Outputs) != len(c.Outputs) {
		return fmt.Sprintf("%d inputs and %d outputs, want %d and %d",
			len(found.Inputs), len(found.Outputs), len(c.Inputs), len(c.Outputs))
	}
	for _, want := range c.Inputs {
		ok := false
		for _, f := range found.Inputs {
			if f.Name == want.Name {
				if !want.matches(f) {
					return fmt.Sprintf("input %s, want %s", f, want)
				}
				ok = true
			}
		}
		if !ok {
			return fmt.Sprintf("no input named %q", want.Name)
		}
	}
	for i, want := range c.Outputs {
		if !want.matches(found.Outputs[i]) {
			return fmt.Sprintf("output %d is %s, want %s", i, found.Outputs[i], want)
		}
	}
	return ""
}

// Contracts returns every contract, sorted by name.
func Contracts() []*Contract {
	out := make([]*Contract, 0, len(contracts))
	for _, c := range contracts {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LookupContract returns the contract for FaceFusion's model name.
func LookupContract(name string) (*Contract, error) {
	c, ok := contracts[name]
	if !ok {
		names := make([]string, 0, len(contracts))
		for n := range contracts {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("model %q: not a known FaceFusion model: use one of %s", name, strings.Join(names, ", "))
	}
	return c, nil
}

// Normalisations FaceFusion uses, as (v/255 − mean)/std.
var (
	zero3     = [3]float32{0, 0, 0}
	one3      = [3]float32{1, 1, 1}
	half3     = [3]float32{0.5, 0.5, 0.5}
	imagenetM = [3]float32{0.485, 0.456, 0.406}
	imagenetS = [3]float32{0.229, 0.224, 0.225}
	// (v − 127.5)/128, the retinaface/scrfd input scaling.
	det128S = [3]float32{128.0 / 255, 128.0 / 255, 128.0 / 255}
)

func f32(shape ...int64) func(string) TensorSpec {
	return func(name string) TensorSpec { return TensorSpec{Name: name, Shape: shape, Type: Float32} }
}

// Every FaceFusion model this project loads. Input names are FaceFusion's (its code binds them
// by name); output names are not used by FaceFusion and are left open. The batch axis is Dyn
// everywhere: FaceFusion always runs batch 1, so a file may fix it at 1 or leave it dynamic (the
// session batches only when the file's axis is dynamic).
var contracts = func() map[string]*Contract {
	m := map[string]*Contract{}
	add := func(c *Contract) { m[c.Name] = c }

	// Detectors: the frame, shrunk to fit and zero-padded bottom-right, BGR.
	//
	// scrfd_2.5g, confirmed on FaceFusion's own file (sha256 2c0734…5ada, ../shared/models;
	// TestSCRFDRealSignature): input "input" float32 [1,3,?,?], the batch axis fixed at 1 and
	// the sides dynamic, so every --face-detector-size loads; outputs "0"–"8" float32, the
	// scores [?,1], box distances [?,4] and keypoint offsets [?,10] of strides 8, 16 and 32 in
	// that order, two anchors per cell, with no batch axis. The file cannot batch: one frame per
	// run, so a session shared by workers runs their frames one after another (or concurrently
	// where the provider allows), never as one batch. Its boxes and five points on real faces
	// agree with dlib's 68 points (internal/pipeline TestSCRFDRealFile).
	//
	// retinaface_10g is taken to have the same layout, since FaceFusion decodes both with the
	// same code; no real file has confirmed it.
	for _, n := range []string{"retinaface_10g", "scrfd_2.5g"} {
		outs := make([]TensorSpec, 0, 9)
		for _, w := range []int64{1, 4, 10} { // scores, boxes, 5 keypoints; per stride 8, 16, 32
			for range 3 {
				outs = append(outs, f32(Dyn, w)(""))
			}
		}
		c := &Contract{Name: n, File: n + ".onnx", Kind: KindDetector,
			Signature: Signature{Inputs: []TensorSpec{f32(Dyn, 3, Dyn, Dyn)("input")}, Outputs: outs},
			Prep:      Prep{Size: 640, BGR: true, Mean: half3, Std: det128S}}
		if n == "retinaface_10g" {
			c.Unconfirmed = "the whole signature, read from FaceFusion's code and scrfd_2.5g's file: input [1,3,?,?] with dynamic sides " +
				"(FaceFusion offers sizes 160..1024); outputs [anchors, 1|4|10] without a batch axis, scores, boxes, keypoints per stride 8, 16, 32"
		}
		add(c)
	}
	add(&Contract{Name: "yoloface_8n", File: "yoloface_8n.onnx", Kind: KindDetector,
		Signature: Signature{
			Inputs:  []TensorSpec{f32(Dyn, 3, 640, 640)("input")},
			Outputs: []TensorSpec{f32(Dyn, 20, Dyn)("")}},
		Prep:        Prep{Size: 640, BGR: true, Mean: zero3, Std: one3},
		Unconfirmed: "output [1, 20, 8400] at 640 (cx, cy, w, h, score, 5×(x, y, visibility)), transposed by FaceFusion"})

	add(&Contract{Name: "2dfan4", File: "2dfan4.onnx", Kind: KindLandmarker,
		Signature: Signature{
			Inputs:  []TensorSpec{f32(Dyn, 3, 256, 256)("input")},
			Outputs: []TensorSpec{f32(Dyn, 68, 3)(""), f32(Dyn, 68, 64, 64)("")}},
		// The crop is scaled by 195/max(box w, h) around the box; points are heatmap
		// coordinates (×256/64); the score is the mean of per-point heatmap maxima.
		Prep:        Prep{Size: 256, BGR: true, Mean: zero3, Std: one3},
		Unconfirmed: "output order (points [1,68,3] then heatmaps [1,68,64,64]) from FaceFusion's unpacking"})

	add(&Contract{Name: "arcface_w600k_r50", File: "arcface_w600k_r50.onnx", Kind: KindRecognizer,
		Signature: Signature{
			Inputs:  []TensorSpec{f32(Dyn, 3, 112, 112)("input")},
			Outputs: []TensorSpec{f32(Dyn, 512)("")}},
		Prep: Prep{Template: "arcface_112_v2", Size: 112, Mean: half3, Std: half3}})

	swapper := func(name, template string, size int64, mean, std [3]float32, denorm bool, emb string) *Contract {
		p := Prep{Template: template, Size: int(size), Mean: mean, Std: std, ClipLo: 0, ClipHi: 1, Embedding: emb}
		if denorm {
			p.OutMean, p.OutStd = mean, std
		}
		t := Float32
		if strings.HasSuffix(name, "_fp16") {
			t = AnyFloat
		}
		img := TensorSpec{Shape: []int64{Dyn, 3, size, size}, Type: t}
		tgt, out := img, img
		tgt.Name = "target"
		return &Contract{Name: name, File: name + ".onnx", Kind: KindSwapper,
			Signature: Signature{
				Inputs:  []TensorSpec{tgt, {Name: "source", Shape: []int64{Dyn, 512}, Type: t}},
				Outputs: []TensorSpec{out}},
			Prep:        p,
			Unconfirmed: "source width 512 for every swapper (the crossface converters keep 512 for simswap and ghost: not verified)"}
	}
	add(swapper("inswapper_128", "arcface_128", 128, zero3, one3, false, "emap"))
	add(swapper("inswapper_128_fp16", "arcface_128", 128, zero3, one3, false, "emap"))
	for _, v := range []string{"1a", "1b", "1c"} {
		add(swapper("hyperswap_"+v+"_256", "arcface_128", 256, half3, half3, true, "normed"))
	}
	add(swapper("simswap_256", "arcface_112_v1", 256, imagenetM, imagenetS, false, "converted"))
	for _, v := range []string{"1", "2", "3"} {
		add(swapper("ghost_"+v+"_256", "arcface_112_v1", 256, half3, half3, true, "converted"))
	}

	enhancer := func(name, template string, size int64, weight bool) *Contract {
		ins := []TensorSpec{f32(Dyn, 3, size, size)("input")}
		if weight {
			// FaceFusion feeds numpy.array([weight]).astype(numpy.double).
			ins = append(ins, TensorSpec{Name: "weight", Shape: []int64{1}, Type: Float64})
		}
		return &Contract{Name: name, File: name + ".onnx", Kind: KindEnhancer,
			Signature: Signature{Inputs: ins, Outputs: []TensorSpec{f32(Dyn, 3, size, size)("")}},
			Prep: Prep{Template: template, Size: int(size), Mean: half3, Std: half3,
				OutMean: half3, OutStd: half3, ClipLo: -1, ClipHi: 1}}
	}
	add(enhancer("gfpgan_1.4", "ffhq_512", 512, false))
	add(enhancer("codeformer", "ffhq_512", 512, true))
	// FaceFusion 3.8.1 warps gpen_bfr_256 with arcface_128, not ffhq_512.
	add(enhancer("gpen_bfr_256", "arcface_128", 256, false))
	add(enhancer("gpen_bfr_512", "ffhq_512", 512, false))

	add(&Contract{Name: "xseg_1", File: "xseg_1.onnx", Kind: KindOccluder,
		Signature: Signature{
			Inputs:  []TensorSpec{f32(Dyn, 256, 256, 3)("input")},
			Outputs: []TensorSpec{f32(Dyn, 256, 256, 1)("")}},
		// The swap crop resized to 256, /255, channel-last, in the frame's (BGR) order.
		Prep:        Prep{Size: 256, BGR: true, NHWC: true, Mean: zero3, Std: one3},
		Unconfirmed: "output [1,256,256,1] (FaceFusion clips it to [0,1] and blurs it)"})
	add(&Contract{Name: "bisenet_resnet_34", File: "bisenet_resnet_34.onnx", Kind: KindParser,
		Signature: Signature{
			Inputs:  []TensorSpec{f32(Dyn, 3, 512, 512)("input")},
			Outputs: []TensorSpec{f32(Dyn, 19, 512, 512)("")}},
		// RGB /255, ImageNet mean/std; argmax over the 19 classes.
		Prep:        Prep{Size: 512, Mean: imagenetM, Std: imagenetS},
		Unconfirmed: "output [1,19,512,512] (19 face-parsing classes)"})
	// The embedding converters simswap and ghost take their source through: FaceFusion feeds
	// the raw arcface embedding as 'input' [1,512] and uses output 0.
	for _, n := range []string{"crossface_simswap", "crossface_ghost"} {
		add(&Contract{Name: n, File: n + ".onnx", Kind: KindConverter,
			Signature: Signature{
				Inputs:  []TensorSpec{f32(Dyn, 512)("input")},
				Outputs: []TensorSpec{f32(Dyn, 512)("")}},
			// Size is the embedding width here: the converter takes no image.
			Prep:        Prep{Size: 512},
			Unconfirmed: "output [1,512] (FaceFusion reads output 0 and reshapes it to the swapper's source)"})
	}
	return m
}()
