package face

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/geom"
)

func TestAngle(t *testing.T) {
	for _, c := range []struct {
		dx, dy float64
		want   int
	}{{10, 0, 0}, {10, 3, 0}, {0, 10, 90}, {-10, 1, 180}, {1, -10, 270}, {10, -2, 0}, {10, 10.5, 90}} {
		var l Landmarks68
		l[0] = geom.Pt{X: 100, Y: 100}
		l[16] = geom.Pt{X: 100 + c.dx, Y: 100 + c.dy}
		if got := l.Angle(); got != c.want {
			t.Errorf("jaw direction (%v, %v): angle %d, want %d", c.dx, c.dy, got, c.want)
		}
	}
}
