package framecolorizer

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/processors/processortest"
)

// The work around the model on a 1080p frame at 256x256, per family: what a rank spends per
// frame besides the model run (go test -bench . ./internal/processors/framecolorizer).
func BenchmarkAroundModel1080p(b *testing.B) {
	frame := processortest.Noise(3, 1920, 1080, [3]uint8{120, 80, 60})
	for _, typ := range []string{catalog.DDColor, catalog.DeOldify} {
		b.Run(typ, func(b *testing.B) {
			var s scratch
			in := make([]float32, 3*256*256)
			out := make([]float32, 3*256*256)
			for i := range out {
				out[i] = float32(i%255) / 4
			}
			f := processortest.Clone(frame)
			b.ReportAllocs()
			for b.Loop() {
				s.prepare(in, f, typ, 256)
				s.merge(f, out, typ, 256, 80)
			}
		})
	}
}
