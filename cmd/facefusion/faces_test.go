package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// TestFacesCommand: facefusion faces prints the faces of the image and the selection as JSON in
// the oracle's shape (the fixture detector's one face, 2dfan4's 68 points, arcface's embedding);
// without -t it is a usage error naming the flag.
func TestFacesCommand(t *testing.T) {
	models := clitest.FixtureModels(t)
	in := testenv.Sample(t, "astronaut.png")
	r := clitest.Run(t, "faces", "-t", in, "--models-dir", models, "--face-detector-model", "scrfd",
		"--face-landmarker-model", "2dfan4", "--face-swapper-model", "inswapper_128", "--log-level", "error")
	if r.Code != 0 {
		t.Fatalf("faces: exit %d: %s", r.Code, r.Stderr)
	}
	var d pipeline.FacesDump
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
		t.Fatalf("faces printed no JSON: %v\n%s", err, r.Stdout)
	}
	if d.Shape != [3]int{512, 512, 3} || len(d.Faces) != 1 || !slices.Equal(d.Selected, []int{0}) {
		t.Fatalf("faces: shape %v, %d faces, selected %v; want 512x512, 1 face, [0]", d.Shape, len(d.Faces), d.Selected)
	}
	f := d.Faces[0]
	if f.BoundingBox[2] <= f.BoundingBox[0] || f.DetectorScore < 0.5 || len(f.Landmark68) != 68 || len(f.Embedding) != 6 || len(f.EmbeddingNorm) != 6 {
		t.Errorf("faces: the face is incomplete: %+v", f)
	}
	if f.Landmark5 == f.Landmark5From68 && f.LandmarkerScore > 0.5 {
		t.Errorf("faces: landmark_5_68 %v is the detector's five though 2dfan4 scored %v", f.Landmark5From68, f.LandmarkerScore)
	}

	r = clitest.Run(t, "faces", "--models-dir", models)
	if r.Code != exitUsage || !strings.Contains(r.Stderr, "-t IMAGE") {
		t.Errorf("faces without -t: exit %d, %q; want %d naming -t IMAGE", r.Code, r.Stderr, exitUsage)
	}
}
