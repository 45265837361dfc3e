package main

import (
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// TestFaceDebugger runs face_swapper then face_debugger on astronaut.png with FaceFusion's own
// scrfd_2.5g (../shared/models, linked into a models folder) and dlib's 68 points: the run
// draws scrfd's box (its top edge light red, FaceFusion's mark of the upright side) and five
// points on top of the swapped face, and changes nothing outside the face. An item that needs
// a model this program does not run is refused before any work, in one line, with no output.
func TestFaceDebugger(t *testing.T) {
	work := t.TempDir()
	models := filepath.Join(work, "models")
	if err := os.Mkdir(models, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct{ from, to string }{
		{testenv.SharedModel(t, "scrfd_2.5g.onnx"), "scrfd_2.5g.onnx"},
		{testenv.Model(t, "shape_predictor_68_face_landmarks.dat"), "shape_predictor_68_face_landmarks.dat"},
	} {
		if err := os.Symlink(l.from, filepath.Join(models, l.to)); err != nil {
			t.Fatal(err)
		}
	}
	in := testenv.Sample(t, "astronaut.png")
	run := func(out string, items ...string) clitest.Result {
		return clitest.Run(t, append([]string{"run", "-s", testenv.Sample(t, "grace_hopper.png"), "-t", in, "-o", out,
			"--models-dir", models, "--face-detector-model", "scrfd", "--processors", "face_swapper", "face_debugger",
			"--face-debugger-items"}, items...)...)
	}

	refused := filepath.Join(work, "refused.png")
	r := run(refused, "bounding-box", "face-landmark-68/5")
	if r.Code != exitUsage || !strings.Contains(r.Stderr, "face-landmark-68/5 cannot be drawn: it draws the 68 points FaceFusion's fan_68_5 model estimates") ||
		strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Errorf("item face-landmark-68/5: exit %d, want %d with one line saying why:\n%s", r.Code, exitUsage, r.Stderr)
	}
	if _, err := os.Stat(refused); err == nil {
		t.Errorf("a refused run wrote %s", refused)
	}

	out := filepath.Join(work, "debug.png")
	r = run(out, "bounding-box", "face-landmark-5")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	a, err := raster.Load(in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := raster.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	red, lightRed := raster.RGB{R: 255}, raster.RGB{R: 255, G: 100, B: 100}
	count := map[raster.RGB]int{}
	var topRows []int
	for y := range a.H {
		run := 0
		for x := range a.W {
			r1, g1, b1 := a.At(x, y)
			r2, g2, b2 := b.At(x, y)
			c := raster.RGB{R: r2, G: g2, B: b2}
			if (r1 != r2 || g1 != g2 || b1 != b2) && !image.Pt(x, y).In(image.Rect(150, 30, 300, 210)) {
				t.Fatalf("pixel (%d,%d) changed, far from the face (x 177–272, y 81–175)", x, y)
			}
			count[c]++
			if c == lightRed {
				run++
			}
		}
		if run >= 80 {
			topRows = append(topRows, y)
		}
	}
	// scrfd's box on this photo starts near y 54 (its forehead margin), 91 px wide: the top edge
	// is 5 rows of light red there: cv2.line of thickness DebugScale(512)+1 = 3 fills ±2 rows.
	if len(topRows) != 5 || topRows[2] < 50 || topRows[2] > 58 {
		t.Errorf("rows with a light-red run of 80 px or more: %v, want the 5 rows of the box's top edge around y 54", topRows)
	}
	// The box's other three edges (2 px) and five dots of radius 2 are red.
	if count[red] < 2*(2*120+85) {
		t.Errorf("%d red pixels: the box's sides and bottom and the five points are not all there", count[red])
	}
	for _, p := range []image.Point{{204, 99}, {247, 102}, {223, 128}, {201, 138}, {245, 140}} { // scrfd's five
		if r, g, bl := b.At(p.X, p.Y); (raster.RGB{R: r, G: g, B: bl}) != red {
			t.Errorf("scrfd's point near %v is not drawn: (%d,%d,%d)", p, r, g, bl)
		}
	}
}
