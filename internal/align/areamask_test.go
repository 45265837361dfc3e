package align

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// TestAreaMaskMatchesFaceFusion compares AreaMask with FaceFusion's own create_area_mask
// (testdata/areamask.json, made by areamask_golden.py with FaceFusion 3.8.1 and OpenCV) on
// random landmark sets and area choices, one partly outside the crop: sampled values, most
// on the feathered edge, and the whole mask's sum.
func TestAreaMaskMatchesFaceFusion(t *testing.T) {
	raw, err := os.ReadFile("testdata/areamask.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		OpenCV string
		Cases  []struct {
			Landmarks [68][2]float32
			Areas     []string
			Sum       float64
			Samples   [][3]float64
		}
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden.Cases) < 8 {
		t.Fatalf("%d cases", len(golden.Cases))
	}
	var ws MaskWorkspace
	mask := make([]float32, 512*512)
	for i, c := range golden.Cases {
		var lm [68]geom.Pt
		for k, p := range c.Landmarks {
			lm[k] = geom.Pt{X: float64(p[0]), Y: float64(p[1])}
		}
		var areas []int
		for _, name := range c.Areas {
			areas = append(areas, slices.IndexFunc(MaskAreas, func(a MaskArea) bool { return a.Name == name }))
		}
		AreaMask(mask, 512, 512, &lm, geom.Identity, areas, &ws)
		worst := 0.0
		for _, s := range c.Samples {
			worst = math.Max(worst, math.Abs(float64(mask[int(s[0])*512+int(s[1])])-s[2]))
		}
		sum := 0.0
		for _, v := range mask {
			sum += float64(v)
		}
		if worst > 1e-5 || math.Abs(sum-c.Sum) > 0.05 {
			t.Errorf("case %d %v: sampled values differ from FaceFusion's (OpenCV %s) by up to %.2g, sum %.3f, FaceFusion's %.3f", i, c.Areas, golden.OpenCV, worst, sum, c.Sum)
		}
	}
}
