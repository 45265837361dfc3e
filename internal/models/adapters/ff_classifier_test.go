package adapters

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// TestClassifierIsFaceFusions classifies two faces with the fairface stand-in as FaceFusion
// 3.8.1 did (run-facefusion --faces with the same stand-in, --face-landmarker-score 1 so that
// '5/68' is the detector's five, given here to 6 decimals): astronaut.png a male, 3-8, asian;
// grace_hopper.png a female, 60-68, latino. A wrong template, size, colour order or
// normalisation gives other ids.
func TestClassifierIsFaceFusions(t *testing.T) {
	c, err := NewClassifier(ffConfig(t, fixtures.Dir(t, "fairface"), 1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		file string
		five [5]geom.Pt
		want face.Class
	}{
		{"astronaut.png", [5]geom.Pt{{X: 204.37092, Y: 99.855354}, {X: 247.786421, Y: 102.350799}, {X: 223.574757, Y: 128.663252}, {X: 201.095209, Y: 138.414257}, {X: 245.965387, Y: 140.856529}},
			face.Class{Gender: "male", Race: "asian", Age: [2]int{3, 9}}},
		{"grace_hopper.png", [5]geom.Pt{{X: 223.009037, Y: 194.124405}, {X: 305.439835, Y: 189.450165}, {X: 267.608848, Y: 239.904284}, {X: 237.00835, Y: 278.749771}, {X: 302.984802, Y: 274.238907}},
			face.Class{Gender: "female", Race: "latino", Age: [2]int{60, 69}}},
	} {
		img, err := video.ReadImage(testenv.Sample(t, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Classify(FaceRef{Frame: img, Five: tc.five})
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s: %+v, want FaceFusion's %+v", tc.file, got, tc.want)
		}
	}
}
