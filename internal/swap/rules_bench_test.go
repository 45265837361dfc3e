package swap

import (
	"math"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// benchGraceRule times rule alone on the state a swap of the astronaut into grace_hopper's
// photo leaves (the face's rectangle, mask and thinCovers' grid), which it reads and rewrites
// the same way each time.
func benchGraceRule(b *testing.B, rule func(s *Swapper, p *photoPair, size float64)) {
	p := photos(b)
	src, err := NewSource(p.src, &p.srcLm)
	if err != nil {
		b.Fatal(err)
	}
	s := NewSwapper(src, DefaultOptions())
	s.Apply(p.dst.Clone(), &p.dstLm)
	bb := geom.Bounds(p.dstLm[:])
	size := math.Max(bb.W(), bb.H())
	for b.Loop() {
		rule(s, p, size)
	}
}

// BenchmarkSkinBandsGrace is skinBands on grace_hopper's face.
func BenchmarkSkinBandsGrace(b *testing.B) {
	benchGraceRule(b, func(s *Swapper, p *photoPair, size float64) { s.skinBands(&p.dstLm, &s.mask, size, s.last) })
}

// BenchmarkLatticeGrace is latticeMap on grace_hopper's face.
func BenchmarkLatticeGrace(b *testing.B) {
	benchGraceRule(b, func(s *Swapper, p *photoPair, size float64) { s.latticeMap(p.dst, s.last, size) })
}

// BenchmarkCoveredNoseGrace is coveredNose on grace_hopper's bare face, given her eyes there.
func BenchmarkCoveredNoseGrace(b *testing.B) {
	benchGraceRule(b, func(s *Swapper, p *photoPair, _ float64) {
		s.coveredNose(p.dst, &p.dstLm, &s.mask, s.last, [2]eyeState{eyeThere, eyeThere})
	})
}
