package agemodifier_test

import (
	"math"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	_ "github.com/facefusion-hpc/facefusion/internal/processors/agemodifier" // registers age_modifier
	"github.com/facefusion-hpc/facefusion/internal/processors/processortest"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// The processor run as a worker runs it on fran's stand-in (fixtures.AgeMix and the rest: a
// non-symmetric colour mix, ramps over the crop, and each age's own gain per channel), so a
// paste at the wrong place, a wrong colour order or normalisation, or a wrong, unclipped or
// swapped age moves the pixels checked.

// TestDirection is FaceFusion's: numpy.mean of the age range, and that plus the direction, /100
// and clipped to [0, 1].
func TestDirection(t *testing.T) {
	for _, c := range []struct {
		age  [2]int
		dir  int
		want [2]float32
	}{
		{[2]int{20, 29}, 0, [2]float32{0.24, 0.24}},
		{[2]int{20, 29}, 50, [2]float32{0.24, 0.74}},
		{[2]int{0, 2}, -100, [2]float32{0.005, 0}},
		{[2]int{70, 100}, 100, [2]float32{0.845, 1}},
	} {
		if got := adapters.Direction(c.age, c.dir); math.Abs(float64(got[0]-c.want[0])) > 1e-7 || math.Abs(float64(got[1]-c.want[1])) > 1e-7 {
			t.Errorf("Direction(%v, %d) = %v, want %v", c.age, c.dir, got, c.want)
		}
	}
}

// At the face's five points and centre the frame holds the stand-in's output for the crop
// position they map to, for the face's age and the direction at its ends and at zero; outside
// the paste area nothing changes; the faces are counted.
func TestModifyAgePastesTheModelsCrop(t *testing.T) {
	const model = "fran"
	m := catalog.Must(model)
	tmpl := align.Templates[m.Template]
	rgb := [3]uint8{170, 90, 40} // not grey: a swapped colour order shows
	age := [2]int{30, 39}
	for _, dir := range []int{-100, 0, 100} {
		cfg := job.Default()
		cfg.Processors, cfg.AgeModifierModel, cfg.AgeModifierDirection = []string{job.ProcessorAge}, model, dir
		st := processortest.Count{}
		ch := processortest.Open(t, cfg, model, 1, processors.Source{}, st)
		five := processortest.FiveAt(tmpl, 60, 50, 300)
		toCrop := align.Estimate(five, tmpl, m.Size)
		area := align.PasteArea(420, 400, m.Size, m.Size, toCrop)
		frame := processortest.Noise(3, 420, 400, rgb, area)
		orig := processortest.Clone(frame)
		f := &face.Face{Detection: face.Detection{Five: five}, Class: face.Class{Age: age}}
		processortest.Run(t, ch, []*raster.Image{frame}, processors.Face{Frame: frame, Face: f})
		d := adapters.Direction(age, dir)
		for _, p := range append(five[:], geom.Mean(five[:])) {
			px, py := int(p.X), int(p.Y)
			at := toCrop.Apply(geom.Pt{X: float64(px), Y: float64(py)})
			cx, cy := int(math.Round(at.X)), int(math.Round(at.Y))
			r, g, b := frame.At(px, py)
			for c, got := range [3]uint8{r, g, b} {
				v := float64(fixtures.AgeBias[c]) + float64(fixtures.AgeRamp[c][0])*float64(cx)/float64(m.Size) +
					float64(fixtures.AgeRamp[c][1])*float64(cy)/float64(m.Size)
				for k := range 3 {
					v += float64(fixtures.AgeMix[c][k]) * float64(rgb[k]) / 255
				}
				for j := range 2 {
					v += float64(fixtures.AgeDirGain[c][j]) * float64(d[j])
				}
				want := math.Floor(math.Min(1, math.Max(0, v)) * 255)
				if math.Abs(float64(got)-want) > 1 {
					t.Errorf("direction %d: (%d, %d) channel %d = %d, want %v", dir, px, py, c, got, want)
				}
			}
		}
		processortest.OutsideUntouched(t, frame, orig, area)
		if st[processors.StageAge] != 1 {
			t.Errorf("direction %d: faces counted %v, want 1", dir, st)
		}
	}
}

// styleganex_age pastes its wider crop, four times the face crop's side, inside that crop's
// paste area only; its direction moves the face (the stand-in's gain per channel); the faces
// are counted. Its pixels are held to FaceFusion's by the conformance suite.
func TestStyleGANExPastesTheWideCrop(t *testing.T) {
	const model = "styleganex_age"
	m := catalog.Must(model)
	five := processortest.FiveAt(align.Templates[m.Template], 90, 80, 220)
	var wide [5]geom.Pt
	for i, p := range five {
		wide[i] = geom.Pt{X: (p.X-five[2].X)*m.WideScale + five[2].X, Y: (p.Y-five[2].Y)*m.WideScale + five[2].Y}
	}
	area := align.PasteArea(420, 400, m.WideSize, m.WideSize, align.Estimate(wide, align.Templates[m.WideTemplate], m.WideSize))
	base := processortest.Noise(4, 420, 400, [3]uint8{120, 160, 60}, area)
	var outs []*raster.Image
	for _, dir := range []int{-100, 100} {
		cfg := job.Default()
		cfg.Processors, cfg.AgeModifierModel, cfg.AgeModifierDirection = []string{job.ProcessorAge}, model, dir
		st := processortest.Count{}
		ch := processortest.Open(t, cfg, model, 1, processors.Source{}, st)
		frame := processortest.Clone(base)
		processortest.Run(t, ch, []*raster.Image{frame}, processors.Face{Frame: frame, Face: &face.Face{Detection: face.Detection{Five: five}}})
		processortest.OutsideUntouched(t, frame, base, area)
		if st[processors.StageAge] != 1 {
			t.Errorf("direction %d: faces counted %v, want 1", dir, st)
		}
		outs = append(outs, frame)
	}
	c := geom.Mean(five[:])
	r0, g0, b0 := outs[0].At(int(c.X), int(c.Y))
	r1, g1, b1 := outs[1].At(int(c.X), int(c.Y))
	if r0 == r1 && g0 == g1 && b0 == b1 {
		t.Errorf("directions -100 and 100 give the same face centre %d %d %d", r0, g0, b0)
	}
}
