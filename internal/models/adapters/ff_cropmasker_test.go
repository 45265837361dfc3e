package adapters

import (
	"math"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// TestCropMasker: face_debugger's crop masks (box unblurred, occlusion, area, region of the
// crop itself) on a crop of one colour, against the stand-ins' arithmetic run through align's
// mask functions.
func TestCropMasker(t *testing.T) {
	dir := fixtures.Dir(t, "xseg_3", "bisenet_resnet_18")
	const size = 512
	col := [3]uint8{60, 170, 220} // R, G, B
	crop := raster.New(size, size)
	for y := range size {
		for x := range size {
			crop.Set(x, y, col[0], col[1], col[2])
		}
	}
	var lm [68]geom.Pt
	for k := range lm {
		a := 2 * math.Pi * float64(k) / 68
		lm[k] = geom.Pt{X: 150 + 60*math.Cos(a), Y: 140 + 70*math.Sin(3*a)}
	}
	toCrop := geom.Affine{A: 1.5, B: 0.2, C: 10, D: -0.2, E: 1.5, F: 30}
	var ws align.MaskWorkspace
	box := make([]float32, size*size)
	align.BoxMask(box, size, size, 0, [4]int{5, 0, 0, 10}, &ws)

	bgr := [3]float32{float32(float64(col[2]) / 255), float32(float64(col[1]) / 255), float32(float64(col[0]) / 255)}
	raw := make([]float32, 256*256)
	for p := range raw {
		raw[p] = fixtures.OccluderOut("xseg_3", bgr, p%256, p/256)
	}
	occ := make([]float32, size*size)
	align.OcclusionMask(occ, size, size, raw, 256, 256, &ws)

	area := make([]float32, size*size)
	align.AreaMask(area, size, size, &lm, toCrop, []int{0, 2}, &ws)

	var in [3]float32
	for c := range 3 {
		in[c] = (float32(col[c])/255 - float32(align.ImageNet.Mean[c])) / float32(align.ImageNet.Std[c])
	}
	const plane = size * size
	scores := make([]float32, 19*plane)
	for p := range plane {
		for k, v := range fixtures.ParserScores("bisenet_resnet_18", in, p%size, p/size) {
			scores[k*plane+p] = v
		}
	}
	region := make([]float32, size*size)
	align.RegionMask(region, size, size, align.ClassScores{Data: scores, Classes: 19, W: size, H: size}, []int{1, 2, 10}, &ws)

	for _, c := range []struct {
		types []string
		masks [][]float32
	}{
		{[]string{"box"}, [][]float32{box}},
		{[]string{"occlusion"}, [][]float32{occ}},
		{[]string{"area"}, [][]float32{area}},
		{[]string{"region"}, [][]float32{region}},
		{[]string{"box", "occlusion", "area", "region"}, [][]float32{box, occ, area, region}},
	} {
		cm, err := NewCropMasker(MaskOptions{Types: c.types, Padding: [4]int{5, 0, 0, 10}, Occluder: "xseg_3", Parser: "bisenet_resnet_18", Areas: []int{0, 2}, Regions: []int{1, 2, 10}}, size, ffConfig(t, dir, 1))
		if err != nil {
			t.Fatal(err)
		}
		got, err := cm.Mask(crop, &lm, toCrop)
		cm.Close()
		if err != nil {
			t.Fatal(err)
		}
		partial, worst := 0, 0.0
		for i := range got {
			w := float32(1)
			for _, m := range c.masks {
				w = min(w, m[i])
			}
			w = min(1, max(0, w))
			worst = math.Max(worst, math.Abs(float64(got[i]-w)))
			if w > 0.01 && w < 0.99 {
				partial++
			}
		}
		hard := len(c.types) == 1 && c.types[0] == "box" // unblurred: 0 or 1
		if worst > 1e-6 || (partial < 100 && !hard) {
			t.Errorf("%v: differs from the stand-ins' masks by up to %.3g (partial at %d pixels)", c.types, worst, partial)
		}
	}
}
