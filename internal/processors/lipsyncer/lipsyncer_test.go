package lipsyncer

import (
	"math"
	"sync"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/audio"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	"github.com/facefusion-hpc/facefusion/internal/processors/processortest"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// testFace is fixtures.Face68 at (x, y), side px, with FaceFusion's five points of it.
func testFace(x, y, side float64) *face.Face {
	f := &face.Face{}
	for i, p := range fixtures.Face68() {
		f.Landmarks[i] = geom.Pt{X: x + side*float64(p[0]), Y: y + side*float64(p[1])}
	}
	mean := func(lo, hi int) geom.Pt {
		var s geom.Pt
		for i := lo; i < hi; i++ {
			s.X, s.Y = s.X+f.Landmarks[i].X, s.Y+f.Landmarks[i].Y
		}
		return geom.Pt{X: s.X / float64(hi-lo), Y: s.Y / float64(hi-lo)}
	}
	f.Five = [5]geom.Pt{mean(36, 42), mean(42, 48), f.Landmarks[30], f.Landmarks[48], f.Landmarks[54]}
	return f
}

// A face takes the window of its frame's output index (Batch.Indices), and FaceFusion's empty
// window past the track's end: each frame equals the adapter's sync with that window, and
// frames given different windows differ.
func TestWindowByFrame(t *testing.T) {
	dir := fixtures.Dir(t, "wav2lip_gan_96")
	lib := testenv.ORTLibrary(t)
	session := func(string) infer.SessionConfig {
		return infer.SessionConfig{ModelsDir: dir, Library: lib, Logf: func(string, ...any) {}}
	}
	x := make([]float64, 16000) // a second of "voice" at 16 kHz
	for i := range x {
		x[i] = math.Sin(float64(i)*0.05) * float64(1+i%300)
	}
	track := audio.NewTrack(audio.Prepare(x), 25)
	cfg := job.Default()
	cfg.Processors = []string{job.ProcessorLipSync}
	ch, err := processors.Open(&processors.Context{Config: cfg, Session: session, Mask: adapters.DefaultMaskOptions(),
		Voice: track, Stats: processortest.Count{}}, cfg.Processors)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	base := processortest.Noise(3, 320, 320, [3]uint8{180, 140, 120})
	f := testFace(90, 70, 150)
	indices := []int{3, 11, track.Len() + 4}
	var frames []*raster.Image
	var faces []processors.Face
	for k := range indices {
		img := raster.New(base.W, base.H)
		copy(img.Pix, base.Pix)
		frames = append(frames, img)
		faces = append(faces, processors.Face{Frame: img, At: k, Face: f})
	}
	b := &processors.Batch{Frames: frames, Indices: indices, Faces: faces}
	for _, p := range ch.Steps() {
		if err := processors.Run(p, b); err != nil {
			t.Fatal(err)
		}
	}
	ls, err := adapters.NewLipSyncer(cfg.LipSyncerModel, session(""), cfg.LipSyncerWeight, adapters.DefaultMaskOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	for k, i := range indices {
		want := raster.New(base.W, base.H)
		copy(want.Pix, base.Pix)
		var w audio.Window
		win := &w
		if !track.Frame(i, &w) {
			win = nil
		}
		if err := ls.Sync(want, f.Five, (*[68]geom.Pt)(&f.Landmarks), win); err != nil {
			t.Fatal(err)
		}
		if string(want.Pix) != string(frames[k].Pix) {
			t.Errorf("frame %d (output index %d) is not the sync with its window", k, i)
		}
	}
	if string(frames[0].Pix) == string(frames[1].Pix) || string(frames[1].Pix) == string(frames[2].Pix) {
		t.Error("frames given different windows are equal: the stand-in does not show the window")
	}
}

// face_mask_types' occlusion reaches the lip syncer: the processor's frame is the adapter's
// sync with the occlusion mask (TestLipSyncerOcclusion holds that to sync_lip's minimum), and
// not the one without it.
func TestOcclusionMask(t *testing.T) {
	dir := fixtures.Dir(t, "wav2lip_gan_96", "xseg_1")
	lib := testenv.ORTLibrary(t)
	session := func(string) infer.SessionConfig {
		return infer.SessionConfig{ModelsDir: dir, Library: lib, Logf: func(string, ...any) {}}
	}
	x := make([]float64, 16000)
	for i := range x {
		x[i] = math.Sin(float64(i)*0.07) * float64(1+i%250)
	}
	track := audio.NewTrack(audio.Prepare(x), 25)
	cfg := job.Default()
	cfg.Processors = []string{job.ProcessorLipSync}
	mask := adapters.DefaultMaskOptions()
	mask.Types = []string{"box", "occlusion"}
	ch, err := processors.Open(&processors.Context{Config: cfg, Session: session, Mask: mask,
		Voice: track, Stats: processortest.Count{}}, cfg.Processors)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	base := processortest.Noise(7, 320, 320, [3]uint8{175, 135, 115})
	f := testFace(90, 70, 150)
	img := raster.New(base.W, base.H)
	copy(img.Pix, base.Pix)
	b := &processors.Batch{Frames: []*raster.Image{img}, Indices: []int{6}, Faces: []processors.Face{{Frame: img, Face: f}}}
	for _, p := range ch.Steps() {
		if err := processors.Run(p, b); err != nil {
			t.Fatal(err)
		}
	}
	var w audio.Window
	if !track.Frame(6, &w) {
		t.Fatal("frame 6 has no window")
	}
	sync := func(m adapters.MaskOptions) *raster.Image {
		ls, err := adapters.NewLipSyncer(cfg.LipSyncerModel, session(""), cfg.LipSyncerWeight, m)
		if err != nil {
			t.Fatal(err)
		}
		defer ls.Close()
		out := raster.New(base.W, base.H)
		copy(out.Pix, base.Pix)
		if err := ls.Sync(out, f.Five, (*[68]geom.Pt)(&f.Landmarks), &w); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if string(img.Pix) != string(sync(mask).Pix) {
		t.Error("the processor's frame is not the lip syncer's with the occlusion mask")
	}
	if string(img.Pix) == string(sync(adapters.DefaultMaskOptions()).Pix) {
		t.Error("the processor's frame with occlusion is the one without")
	}
}

// The workers of a rank share one session of the lip syncer (the rank's engine set), and two
// workers syncing at once give each its frame as one on its own session does.
func TestWorkersShareOneSession(t *testing.T) {
	dir := fixtures.Dir(t, "wav2lip_gan_96")
	lib := testenv.ORTLibrary(t)
	const workers = 2
	set := infer.NewEngineSet(infer.EngineConfig{Workers: workers})
	defer set.Close()
	own := func(string) infer.SessionConfig {
		return infer.SessionConfig{ModelsDir: dir, Library: lib, Logf: func(string, ...any) {}}
	}
	shared := func(name string) infer.SessionConfig {
		c := own(name)
		c.Engines = set
		return c
	}
	x := make([]float64, 16000)
	for i := range x {
		x[i] = math.Sin(float64(i)*0.03) * float64(1+i%200)
	}
	track := audio.NewTrack(audio.Prepare(x), 25)
	cfg := job.Default()
	cfg.Processors = []string{job.ProcessorLipSync}
	base := processortest.Noise(5, 320, 320, [3]uint8{170, 130, 110})
	f := testFace(90, 70, 150)
	run := func(session func(string) infer.SessionConfig, index int) (*raster.Image, error) {
		ch, err := processors.Open(&processors.Context{Config: cfg, Session: session, Mask: adapters.DefaultMaskOptions(),
			Voice: track, Stats: processortest.Count{}}, cfg.Processors)
		if err != nil {
			return nil, err
		}
		defer ch.Close()
		img := raster.New(base.W, base.H)
		copy(img.Pix, base.Pix)
		b := &processors.Batch{Frames: []*raster.Image{img}, Indices: []int{index}, Faces: []processors.Face{{Frame: img, Face: f}}}
		for _, p := range ch.Steps() {
			if err := processors.Run(p, b); err != nil {
				return nil, err
			}
		}
		return img, nil
	}
	var got [workers]*raster.Image
	var errs [workers]error
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[w], errs[w] = run(shared, 5+7*w)
		}()
	}
	wg.Wait()
	if n := len(set.Engines()); n != 1 {
		t.Errorf("the rank's engine set holds %d engines after %d workers opened the lip syncer, want its one", n, workers)
	}
	for w := range workers {
		if errs[w] != nil {
			t.Fatal(errs[w])
		}
		want, err := run(own, 5+7*w)
		if err != nil {
			t.Fatal(err)
		}
		if string(got[w].Pix) != string(want.Pix) {
			t.Errorf("worker %d: its frame on the shared session differs from one on a session of its own", w)
		}
	}
}
