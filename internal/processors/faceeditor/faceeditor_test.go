package faceeditor_test

import (
	"image"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	_ "github.com/facefusion-hpc/facefusion/internal/processors/faceeditor" // registers face_editor
	"github.com/facefusion-hpc/facefusion/internal/processors/processortest"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// The processor as a worker runs it (processors.Open, processors.Run) on LivePortrait's
// stand-ins (their arithmetic is checked crop by crop in internal/models/adapters): here, that
// it pastes where the face is and nothing outside, counts its faces, that its sliders reach
// the chain, and that a batch of two frames gives each frame what a batch of one gives (the
// batches a rank count cuts change nothing).

var parts = []string{"live_portrait_feature_extractor", "live_portrait_motion_extractor", "live_portrait_generator",
	"live_portrait_eye_retargeter", "live_portrait_lip_retargeter", "live_portrait_stitcher"}

func open(t *testing.T, dir string, smile, lip float64, st processors.Stats) *processors.Chain {
	t.Helper()
	cfg := job.Default()
	cfg.Processors = []string{job.ProcessorFaceEditor}
	cfg.FaceEditorMouthSmile, cfg.FaceEditorLipOpenRatio = smile, lip
	return processortest.OpenDir(t, cfg, dir, 1, processors.Source{}, st)
}

// scene is a noise frame with a face patch, the face's points (five on ffhq_512 spread as
// face_editor spreads them, 68 along the patch) and its paste area.
func scene(seed uint64) (*raster.Image, *face.Face, image.Rectangle) {
	tmpl := align.FFHQ512
	five := processortest.FiveAt(tmpl, 140, 120, 150)
	f := &face.Face{Detection: face.Detection{Five: five}}
	for i := range f.Landmarks {
		f.Landmarks[i] = geom.Pt{X: 150 + 2*float64(i), Y: 150 + float64(i%7)*3}
	}
	var spread [5]geom.Pt
	for i, p := range five {
		spread[i] = geom.Pt{X: (p.X-five[2].X)*1.5 + five[2].X, Y: (p.Y-five[2].Y)*1.5 + five[2].Y}
	}
	area := align.PasteArea(420, 400, 512, 512, align.Estimate(spread, tmpl, 512))
	frame := processortest.Noise(seed, 420, 400, [3]uint8{180, 120, 90}, area)
	return frame, f, area
}

func TestEditsTheFace(t *testing.T) {
	dir := fixtures.Dir(t, parts...)
	orig, f, area := scene(3)
	edit := func(smile, lip float64) *raster.Image {
		st := processortest.Count{}
		frame := processortest.Clone(orig)
		processortest.Run(t, open(t, dir, smile, lip, st), []*raster.Image{frame}, processors.Face{Frame: frame, Face: f})
		processortest.OutsideUntouched(t, frame, orig, area)
		if st[processors.StageFaceEditor] != 1 {
			t.Errorf("faces counted %v, want 1 edited", st)
		}
		return frame
	}
	zero := edit(0, 0)
	if processortest.Same(zero, orig) {
		t.Error("the face is untouched: the chain's crop was not pasted")
	}
	if processortest.Same(edit(1, 0), zero) || processortest.Same(edit(0, -1), zero) || processortest.Same(edit(0, 1), edit(0, -1)) {
		t.Error("a slider did not reach the chain")
	}

	// two frames in one batch, each as in a batch of its own
	other, _, _ := scene(9)
	want := []*raster.Image{processortest.Clone(orig), processortest.Clone(other)}
	ch := open(t, dir, 0.5, 0.25, processortest.Count{})
	for _, w := range want {
		processortest.Run(t, ch, []*raster.Image{w}, processors.Face{Frame: w, Face: f})
	}
	got := []*raster.Image{processortest.Clone(orig), processortest.Clone(other)}
	st := processortest.Count{}
	b := &processors.Batch{Frames: got, Indices: []int{0, 1}, Faces: []processors.Face{{Frame: got[0], Face: f}, {Frame: got[1], At: 1, Face: f}}}
	if err := processors.Run(open(t, dir, 0.5, 0.25, st).Steps()[0], b); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if !processortest.Same(got[i], want[i]) {
			t.Errorf("frame %d of a batch of two differs from the same frame alone", i)
		}
	}
	if st[processors.StageFaceEditor] != 2 {
		t.Errorf("faces counted %v, want 2", st)
	}
}

// TestNoAllocationPerFace: a batch with the editor warm allocates nothing (the chain's inputs,
// outputs and crops are the editor's own, reused face after face).
func TestNoAllocationPerFace(t *testing.T) {
	dir := fixtures.Dir(t, parts...)
	orig, f, _ := scene(3)
	frame := processortest.Clone(orig)
	step := open(t, dir, 1, -0.5, processortest.Count{}).Steps()[0]
	b := &processors.Batch{Frames: []*raster.Image{frame}, Indices: []int{0}, Faces: []processors.Face{{Frame: frame, Face: f}}}
	if err := processors.Run(step, b); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(3, func() { processors.Run(step, b) }); n != 0 {
		t.Errorf("%v allocations a batch of one face, want 0", n)
	}
}

// TestMasksByBoxAlone: as FaceFusion's edit_face, the editor pastes through the box mask at
// face_mask_blur alone: face_mask_types' occlusion, area and region and face_mask_padding
// change nothing (and their models are not opened: the folder has none), the blur does.
func TestMasksByBoxAlone(t *testing.T) {
	dir := fixtures.Dir(t, parts...)
	orig, f, _ := scene(3)
	edit := func(mask adapters.MaskOptions) *raster.Image {
		cfg := job.Default()
		cfg.Processors = []string{job.ProcessorFaceEditor}
		cfg.FaceEditorMouthSmile = 1
		lib := testenv.ORTLibrary(t)
		ch, err := processors.Open(&processors.Context{Config: cfg, Mask: mask, Stats: processortest.Count{},
			Session: func(string) infer.SessionConfig {
				return infer.SessionConfig{ModelsDir: dir, Library: lib, MaxBatch: 1, Logf: func(string, ...any) {}}
			}}, cfg.Processors)
		if err != nil {
			t.Fatal(err)
		}
		defer ch.Close()
		frame := processortest.Clone(orig)
		processortest.Run(t, ch, []*raster.Image{frame}, processors.Face{Frame: frame, Face: f})
		return frame
	}
	box := edit(adapters.DefaultMaskOptions())
	all := adapters.MaskOptions{Types: []string{"box", "occlusion", "area", "region"}, Blur: 0.3, Padding: [4]int{20, 10, 30, 5}}
	if !processortest.Same(edit(all), box) {
		t.Error("occlusion, area, region or padding changed face_editor's paste: FaceFusion's masks by box alone")
	}
	if processortest.Same(edit(adapters.MaskOptions{Types: []string{"box"}, Blur: 0.8}), box) {
		t.Error("face_mask_blur did not reach face_editor's box mask")
	}
}
