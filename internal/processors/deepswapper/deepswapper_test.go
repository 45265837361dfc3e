package deepswapper_test

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	_ "github.com/facefusion-hpc/facefusion/internal/processors/deepswapper" // registers deep_swapper
	"github.com/facefusion-hpc/facefusion/internal/processors/processortest"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// The processor run as a worker runs it on the deep swappers' stand-ins (fixtures.DeepMix and
// the rest). Its pixels are held to FaceFusion's by the conformance suite
// (cases/deepswapper.toml); here: the face changes inside its paste area only, the morph moves
// it where the file takes one and nothing where it does not, and the faces are counted.
func TestDeepSwapChangesTheFaceByTheMorph(t *testing.T) {
	rgb := [3]uint8{170, 90, 40}
	for _, model := range fixtures.DeepSwapStandIns {
		m := catalog.Must(model)
		tmpl := align.Templates[m.Template]
		five := processortest.FiveAt(tmpl, 60, 50, 300)
		area := align.PasteArea(420, 400, m.Size, m.Size, align.Estimate(five, tmpl, m.Size))
		base := processortest.Noise(9, 420, 400, rgb, area)
		var outs []*raster.Image
		for _, morph := range []int{0, 100} {
			cfg := job.Default()
			cfg.Processors, cfg.DeepSwapperModel, cfg.DeepSwapperMorph = []string{job.ProcessorDeepSwap}, model, morph
			st := processortest.Count{}
			ch := processortest.Open(t, cfg, model, 1, processors.Source{}, st)
			frame := processortest.Clone(base)
			processortest.Run(t, ch, []*raster.Image{frame}, processors.Face{Frame: frame, Face: &face.Face{Detection: face.Detection{Five: five}}})
			processortest.OutsideUntouched(t, frame, base, area)
			if processortest.Same(frame, base) {
				t.Errorf("%s morph %d: the frame did not change", model, morph)
			}
			if st[processors.StageDeepSwap] != 1 {
				t.Errorf("%s morph %d: faces counted %v, want 1", model, morph, st)
			}
			outs = append(outs, frame)
		}
		c := geom.Mean(five[:])
		r0, g0, b0 := outs[0].At(int(c.X), int(c.Y))
		r1, g1, b1 := outs[1].At(int(c.X), int(c.Y))
		moved := r0 != r1 || g0 != g1 || b0 != b1
		if hasMorph := model == fixtures.DeepSwapStandIns[0]; moved != hasMorph {
			t.Errorf("%s: the morph moved the face's centre: %v (%d %d %d → %d %d %d); the file takes one: %v", model, moved, r0, g0, b0, r1, g1, b1, hasMorph)
		}
	}
}
