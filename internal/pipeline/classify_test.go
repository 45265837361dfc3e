package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// TestSelectorFiltersByClass runs the job's analyser with face_detector_model many (FaceFusion's
// real scrfd_2.5g with the retinaface and yolo_face stand-ins: astronaut.png has the real face
// and the stand-ins' one) and a gender filter: fairface runs on every face only because a
// filter reads it, and each filter keeps the face FaceFusion 3.8.1 keeps (with the same
// stand-ins and --face-landmarker-score 1: the real face male, 3-8, asian; the stand-ins'
// female, 10-18, arabic). Without a filter no face is classified.
func TestSelectorFiltersByClass(t *testing.T) {
	dir := fixtures.Dir(t, "retinaface_10g", "yoloface_8n", "2dfan4", "fairface")
	if err := os.Symlink(testenv.SharedModel(t, "scrfd_2.5g.onnx"), filepath.Join(dir, "scrfd_2.5g.onnx")); err != nil {
		t.Fatal(err)
	}
	img, err := video.ReadImage(testenv.Sample(t, "astronaut.png"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flags []string
		want  float64 // the box's left edge of the face kept; 0: every face, unclassified
	}{
		{nil, 0},
		{[]string{"--face-selector-gender", "male"}, 180.344},
		{[]string{"--face-selector-race", "arabic"}, 272.048},
		{[]string{"--face-selector-age-start", "10", "--face-selector-age-end", "19"}, 272.048},
	} {
		args := append([]string{"-s", "s.png", "-t", "t.png", "-o", "o.png", "--models-dir", dir,
			"--onnxruntime-library", testenv.ORTLibrary(t), "--face-detector-model", "many", "--face-landmarker-model", "2dfan4",
			"--face-landmarker-score", "1", "--face-selector-mode", "many", "--processors", "face_debugger"}, c.flags...)
		cfg, err := job.Parse(args)
		if err != nil {
			t.Fatal(err)
		}
		m, err := LoadModels(cfg)
		if err != nil {
			t.Fatal(err)
		}
		a, err := m.newAnalyser(false)
		if err != nil {
			t.Fatal(err)
		}
		faces, err := a.analyse(img)
		if err != nil {
			t.Fatal(err)
		}
		if len(faces) != 2 {
			t.Fatalf("%v: %d faces, want the real one and the stand-ins'", c.flags, len(faces))
		}
		kept := selector(cfg, nil).Select(nil, faces, nil)
		switch {
		case c.want == 0:
			if len(kept) != 2 || faces[0].Class.Gender != "" || faces[1].Class.Gender != "" {
				t.Errorf("no filter: kept %v, classes %+v %+v: want both, unclassified", kept, faces[0].Class, faces[1].Class)
			}
		case len(kept) != 1 || faces[kept[0]].Box.X0 < c.want-1e-3 || faces[kept[0]].Box.X0 > c.want+1e-3:
			t.Errorf("%v: kept %v of %+v, want the face at x %v", c.flags, kept, faces, c.want)
		}
		a.close()
		m.Close()
	}
}
