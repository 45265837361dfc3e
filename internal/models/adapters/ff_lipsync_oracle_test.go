package adapters

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/audio"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// lipJob is one face for testdata/fflipsync.py.
type lipJob struct {
	Frame  string         `json:"frame"`
	Five   [5][2]float64  `json:"five"`
	LM68   [68][2]float64 `json:"lm68"`
	Voice  *audio.Window  `json:"voice"`
	Model  string         `json:"model"`
	Weight float64        `json:"weight"`
	Out    string         `json:"out"`
}

// testFace is fixtures.Face68 placed over the astronaut's face, and its five points as
// FaceFusion derives 5/68 (the eyes' centres, the nose tip, the mouth's corners).
func testFace() (five [5]geom.Pt, lm [68]geom.Pt) {
	for i, p := range fixtures.Face68() {
		lm[i] = geom.Pt{X: 175 + 130*float64(p[0]), Y: 70 + 150*float64(p[1])}
	}
	mean := func(lo, hi int) geom.Pt {
		var s geom.Pt
		for i := lo; i < hi; i++ {
			s.X, s.Y = s.X+lm[i].X, s.Y+lm[i].Y
		}
		return geom.Pt{X: s.X / float64(hi-lo), Y: s.Y / float64(hi-lo)}
	}
	return [5]geom.Pt{mean(36, 42), mean(42, 48), lm[30], lm[48], lm[54]}, lm
}

// The lip syncers' crop, masks, model call and paste equal FaceFusion's sync_lip run in the
// oracle's Python on the same face, window and stand-in model, within one level (the oracle's
// warps in float64, FFREF_FLOAT_WARP): wav2lip's area mask and mouth box with a voice window
// at weight 0.5 and with FaceFusion's empty window at weight 0.25; edtalk's box mask, resizes
// and weight input likewise at 0.5 and 0.8.
func TestLipSyncMatchesFaceFusion(t *testing.T) {
	testenv.Full(t, "runs FaceFusion's lip syncer in the oracle's Python")
	dir := t.TempDir()
	models := fixtures.Dir(t, "wav2lip_96", "wav2lip_gan_96", "edtalk_256")
	frame := testenv.Sample(t, "astronaut.png")
	five, lm := testFace()
	var voice audio.Window
	for f := range voice {
		for c := range voice[f] {
			voice[f][c] = math.Exp(float64((f*3+c*5)%17) - 12)
		}
	}
	jobs := []lipJob{
		{Frame: frame, Voice: &voice, Model: "wav2lip_96", Weight: 0.5, Out: filepath.Join(dir, "ff-0.png")},
		{Frame: frame, Model: "wav2lip_gan_96", Weight: 0.25, Out: filepath.Join(dir, "ff-1.png")},
		{Frame: frame, Voice: &voice, Model: "edtalk_256", Weight: 0.5, Out: filepath.Join(dir, "ff-2.png")},
		{Frame: frame, Model: "edtalk_256", Weight: 0.8, Out: filepath.Join(dir, "ff-3.png")},
	}
	for i := range jobs {
		for k, p := range five {
			jobs[i].Five[k] = [2]float64{p.X, p.Y}
		}
		for k, p := range lm {
			jobs[i].LM68[k] = [2]float64{p.X, p.Y}
		}
	}
	runFFLipSync(t, dir, models, jobs)
	for _, j := range jobs {
		img, err := raster.Load(frame)
		if err != nil {
			t.Fatal(err)
		}
		orig, _ := raster.Load(frame)
		l, err := NewLipSyncer(j.Model, ffConfig(t, models, 1), j.Weight, DefaultMaskOptions())
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Sync(img, five, &lm, j.Voice); err != nil {
			t.Fatal(err)
		}
		l.Close()
		want, err := raster.Load(j.Out)
		if err != nil {
			t.Fatal(err)
		}
		worst, changed, at := 0, 0, 0
		for k := range img.Pix {
			d := int(img.Pix[k]) - int(want.Pix[k])
			worst = max(worst, d, -d)
			if d > 1 || d < -1 {
				at = k
			}
			if want.Pix[k] != orig.Pix[k] {
				changed++
			}
		}
		t.Logf("%s: max abs %d against FaceFusion's; FaceFusion changed %d samples", j.Model, worst, changed)
		if worst > 1 {
			t.Errorf("%s: pixel (%d,%d) differs from FaceFusion's by more than 1 (max %d)", j.Model, at%img.Stride/3, at/img.Stride, worst)
		}
		if changed < 1000 {
			t.Errorf("%s: FaceFusion changed only %d samples: the test face is not where the mouth is", j.Model, changed)
		}
	}
}

// runFFLipSync runs testdata/fflipsync.py through run-facefusion on the jobs.
func runFFLipSync(t *testing.T, dir, models string, jobs []lipJob) {
	t.Helper()
	ref := filepath.Clean(filepath.Join(testenv.Root(t), "..", "shared", "reference"))
	if _, err := os.Stat(filepath.Join(ref, "run-facefusion")); err != nil {
		t.Fatalf("FaceFusion's oracle is missing: %s/run-facefusion (see ../shared/reference/README.md): put the shared folder beside the checkout", ref)
	}
	data, _ := json.Marshal(jobs)
	list := filepath.Join(dir, "jobs.json")
	if err := os.WriteFile(list, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, file, _, _ := runtime.Caller(0)
	real := os.Getenv("FFREF_PYTHON")
	if real == "" {
		real = "/usr/bin/python3"
	}
	cmd := exec.Command(filepath.Join(ref, "run-facefusion"), "--work", filepath.Join(dir, "ffwork"), "--models", models, "--ort", testenv.ORTLibrary(t), "--", list)
	cmd.Env = append(os.Environ(), "FFREF_FLOAT_WARP=1", "FFREF_PYTHON="+filepath.Join(filepath.Dir(file), "testdata", "python"), "FFREF_PYTHON_WRAPPED="+real)
	if said, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("FaceFusion's sync_lip: %v\n%s", err, said)
	}
}
