package pipeline

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/raster"
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
	testenv.Full(t, "classifies faces through every real detector and the stand-ins")
	dir := fixtures.Dir(t, "retinaface_10g", "yoloface_8n", "2dfan4", "fan_68_5", "fairface")
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
		m, err := LoadModels(cfg, nil)
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

// TestDetectorFrameOptions: the job's face_detector_margin and face_detector_angles reach the
// detector. With real scrfd_2.5g, astronaut.png with a margin of 10, and the same turned a
// quarter counter-clockwise (numpy's rot90) searched at 0, 90 and 270, give the faces
// FaceFusion 3.8.1 gives (run-facefusion --faces, FFREF_FLOAT_WARP=1; boxes to 6 decimals).
func TestDetectorFrameOptions(t *testing.T) {
	testenv.Full(t, "runs the real scrfd on turned photos")
	dir := realModelsDir(t)
	img, err := video.ReadImage(testenv.Sample(t, "astronaut.png"))
	if err != nil {
		t.Fatal(err)
	}
	turned := raster.New(img.H, img.W)
	for y := range turned.H {
		for x := range turned.W {
			copy(turned.Pix[y*turned.Stride+3*x:][:3], img.Pix[x*img.Stride+3*(img.W-1-y):][:3])
		}
	}
	for _, c := range []struct {
		frame *raster.Image
		flags []string
		box   geom.Rect
	}{
		{img, []string{"--face-detector-margin", "10"}, geom.Rect{X0: 180.346226, Y0: 54.973518, X1: 270.86993, Y1: 177.650562}},
		{turned, []string{"--face-detector-angles", "0", "90", "270"}, geom.Rect{X0: 53.123878, Y0: 238.789742, X1: 179.235474, Y1: 330.760086}},
	} {
		args := append([]string{"-s", "s.png", "-t", "t.png", "-o", "o.png", "--models-dir", dir,
			"--onnxruntime-library", testenv.ORTLibrary(t), "--face-detector-model", "scrfd", "--processors", "face_debugger"}, c.flags...)
		cfg, err := job.Parse(args)
		if err != nil {
			t.Fatal(err)
		}
		m, err := LoadModels(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := m.newAnalyser(false)
		if err != nil {
			t.Fatal(err)
		}
		faces, err := a.analyse(c.frame)
		if err != nil {
			t.Fatal(err)
		}
		if len(faces) != 1 {
			t.Fatalf("%v: %d faces, want 1", c.flags, len(faces))
		}
		b := faces[0].Box
		if d := max(math.Abs(b.X0-c.box.X0), math.Abs(b.Y0-c.box.Y0), math.Abs(b.X1-c.box.X1), math.Abs(b.Y1-c.box.Y1)); d > 1e-5 {
			t.Errorf("%v: box %+v, FaceFusion's %+v (%.2g px off)", c.flags, b, c.box, d)
		}
		a.close()
		m.Close()
	}
}
