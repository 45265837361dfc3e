package swap

import (
	"math"
	"slices"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// pairRunRef is pairRun written plainly, each step rounded from the sum of the pixel's
// coordinate and the step: the reference pairRun's table of steps must match bit for bit.
func (s *Swapper) pairRunRef(cw, ch, i int, a geom.Pt, o *pairOffsets, m int, reach float64) (run float64, off bool) {
	x, y := i%cw, i/cw
	run, pairs := 1.0, 1.0
	s.pairIdx = append(s.pairIdx[:0], int32(i))
	onFace := func(t float64) bool {
		px, py := int(math.Round(float64(x)+t*a.X)), int(math.Round(float64(y)+t*a.Y))
		return px >= m && py >= m && px < cw-m && py < ch-m && s.pairGrid[py*cw+px].face > 0.5
	}
	// How far each channel may drift from i's: a point is steady where none drifts further.
	g := s.pairGrid
	vi := &g[i].col
	var far [3]float32
	for c := range 3 {
		far[c] = pairSteady + pairSteadyShare*vi[c]
	}
	for _, sg := range [2]float64{-1, 1} {
		miss, last := 0, 0.0
		for t := 1.0; miss < 2; t++ {
			px, py := int(math.Round(float64(x)+sg*t*a.X)), int(math.Round(float64(y)+sg*t*a.Y))
			if px < 0 || py < 0 || px >= cw || py >= ch {
				break
			}
			j := py*cw + px
			vj := &g[j].col
			steady := absBits(vj[0]-vi[0])-far[0] <= 0 && absBits(vj[1]-vi[1])-far[1] <= 0 && absBits(vj[2]-vi[2])-far[2] <= 0
			if steady && g[j].side < 0 && g[j].face > 0.5 && px >= m && py >= m && px < cw-m && py < ch-m {
				g[j].pair, g[j].side = s.pairAt(j, o)
				s.pairTouched = append(s.pairTouched, int32(j))
			}
			if !steady || g[j].side < pairLeast/2 {
				miss++
				continue
			}
			run, miss, last = run+1+float64(miss), 0, t
			s.pairIdx = append(s.pairIdx, int32(j))
			if g[j].pair >= pairLeast {
				pairs++
			}
		}
		off = off || !onFace(sg*(last+reach))
	}
	if pairs < pairShare*run {
		return 0, false
	}
	return run, off
}

// pairRunCall is what one pairRun leaves: its answer, the run's points and the pixels it
// scored, with their scores.
type pairRunCall struct {
	run     float64
	off     bool
	idx     []int32
	touched []int32
	scores  []float32
}

// TestPairRunMatchesReference follows a run from every start of skinBands, in every direction
// and width, on both sample photos and on Grace Hopper with a rod of her own hue between her
// lips, with pairRun and with pairRunRef, and wants the same run, points and scores.
func TestPairRunMatchesReference(t *testing.T) {
	ways := photoWays(t)
	rod := ways[false].tgt.Clone()
	lm := ways[false].lm
	b := geom.Bounds(lm[:])
	size := max(b.W(), b.H())
	hue := hoSkinOf(rod, &lm)
	for y := range rod.H {
		for x := range rod.W {
			if u, v := lcLocal(&lm, size, float64(x), float64(y)); math.Abs(v) <= 0.022 && math.Abs(u) <= 1.5 {
				rod.Set(x, y, hue.R, hue.G, hue.B)
			}
		}
	}
	faces := []struct {
		name string
		w    *photoWay
		img  *raster.Image
	}{{"into Grace Hopper", ways[false], ways[false].tgt}, {"into the astronaut", ways[true], ways[true].tgt}, {"a rod at Grace Hopper's lips", ways[false], rod}}
	var runs, halfSteps int
	for _, fc := range faces {
		s := NewSwapper(fc.w.src, DefaultOptions())
		s.Apply(fc.img.Clone(), &fc.w.lm)
		b := geom.Bounds(fc.w.lm[:])
		size := max(b.W(), b.H())
		f := max(1, int(math.Round(size/occRidgeCoarse)))
		csize := size / float64(f)
		cw, ch := s.chan3[0].Rect.Dx(), s.chan3[0].Rect.Dy()
		m := pairMargin(csize)
		for i := range s.pairGrid {
			s.pairGrid[i].pair, s.pairGrid[i].side = -1, -1
		}
		call := func(i int, a geom.Pt, o *pairOffsets, reach float64, run func(cw, ch, i int, a geom.Pt, o *pairOffsets, m int, reach float64) (float64, bool)) pairRunCall {
			s.pairTouched = s.pairTouched[:0]
			var c pairRunCall
			c.run, c.off = run(cw, ch, i, a, o, m, reach)
			c.idx, c.touched = slices.Clone(s.pairIdx), slices.Clone(s.pairTouched)
			for _, j := range s.pairTouched {
				c.scores = append(c.scores, s.pairGrid[j].pair, s.pairGrid[j].side)
				s.pairGrid[j].pair, s.pairGrid[j].side = -1, -1
			}
			return c
		}
		for d := range pairDirs {
			th := math.Pi * float64(d) / pairDirs
			a := geom.Pt{X: math.Cos(th), Y: math.Sin(th)}
			s.pairStepsAlong(a, cw+ch)
			for _, st := range s.pairSteps {
				if !st.exact {
					halfSteps++
				}
			}
			for _, hr := range pairHalves {
				r := hr * csize
				o := offsetsAcross(geom.Pt{X: -a.Y, Y: a.X}, r, cw)
				for _, i := range s.pairStart {
					want := call(int(i), a, &o, r+2, s.pairRunRef)
					got := call(int(i), a, &o, r+2, s.pairRun)
					if got.run != want.run || got.off != want.off || !slices.Equal(got.idx, want.idx) || !slices.Equal(got.touched, want.touched) || !slices.Equal(got.scores, want.scores) {
						t.Fatalf("%s, direction %d, half-width %.1f, from grid pixel %d: pairRun %v, %v over %d points, want %v, %v over %d", fc.name, d, r, i, got.run, got.off, len(got.idx), want.run, want.off, len(want.idx))
					}
					if want.run > 0 {
						runs++
					}
				}
			}
		}
	}
	// Without runs, or without steps near a half, the comparison above proves little.
	if runs < 1000 || halfSteps == 0 {
		t.Errorf("%d runs followed, %d steps near a half: too few to compare", runs, halfSteps)
	}
	t.Logf("%d runs followed, %d steps near a half", runs, halfSteps)
}
