package swap

import (
	"image"
	"math"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// A rule that judges a region near its threshold judges it one way in one frame and the other
// way in the next, as a codec's noise moves it: the region is kept, then swapped, then kept, a
// flicker no single frame shows. So where a time window runs, the covers are found once in
// each frame as the target gave it, on the face as the window smoothed it (FindCover, halo
// frames included), and the swap keeps, pixel by pixel, what covers the face in most of the
// frames around it (Votes). An edge that moves one way is where the frame has it (a pixel it
// has crossed by then is covered in most of the frames, one it has not in fewer than half), a
// cover that stays is kept, and what comes and goes for fewer frames than half the vote does
// not show.

// FindCover is what covers the face with landmarks target in frame (the binary mask Apply's
// occluders start from, and the shadows cast across it), nil where neither is found, where
// the face would not be swapped, and without a source face (a worker opened without one swaps
// nothing).
func (s *Swapper) FindCover(frame *raster.Image, target *face.Landmarks68) *face.Cover {
	if !s.opts.Occluders || s.src == nil {
		return nil
	}
	size, _, fr, ok := s.place(frame, target)
	if !ok {
		return nil
	}
	s.features(target, fr)
	if !s.findOccluders(frame, target, &s.mask, size, fr) && !s.shade.on {
		return nil
	}
	c := &face.Cover{Rect: fr, Pix: make([]uint8, len(s.occ.Pix)), Landmarks: *target}
	for i, v := range s.occ.Pix {
		if v > 0.5 {
			c.Pix[i] = 1
		}
	}
	if s.shade.on {
		c.Shade, c.ShadeFactor = make([]uint8, len(s.shade.area.Pix)), s.shade.k
		for i, v := range s.shade.area.Pix {
			if v > 0.5 {
				c.Shade[i] = 1
			}
		}
	}
	return c
}

// Votes makes the next Apply keep what covers the face in most of frames frames (the face's
// window, its own frame among them) rather than what covers it in its frame: covers are those
// frames' covers (FindCover's), the frames where nothing did left out. It lasts one Apply.
func (s *Swapper) Votes(covers []*face.Cover, frames int) {
	s.votes, s.voteFrames, s.voteOn = covers, frames, frames > 0
}

// voteCovers sets s.occ (over fr, after place) as occluders does, from the votes: a pixel is
// covered where more than half of the frames have it covered, each frame's cover mapped onto
// target by the face's motion from its landmarks there. The shadows cast across the face are
// voted alike (s.shade), so the swap darkens what it swaps of them on every frame the vote
// swaps them, whatever its own frame's finds.
func (s *Swapper) voteCovers(target *face.Landmarks68, size float64, fr image.Rectangle) {
	s.occ.Reset(fr)
	s.shade.on = false
	need := s.voteFrames/2 + 1
	if len(s.votes) < need {
		s.nothingCovers()
		return
	}
	n := fr.Dx() * fr.Dy()
	if cap(s.voteCount) < 2*n {
		s.voteCount = make([]uint8, 2*n)
	}
	count, shade := s.voteCount[:n], s.voteCount[n:2*n]
	clear(count)
	clear(shade)
	var k [3]float32
	var kw float32
	shaded := 0
	for _, c := range s.votes {
		m := geom.Similarity(target[:], c.Landmarks[:])
		voteOnto(count, c.Pix, c.Rect, m, fr)
		if c.Shade != nil {
			// A frame's factor counts by how much of its shadow lands here.
			w := float32(voteOnto(shade, c.Shade, c.Rect, m, fr))
			for ch := range k {
				k[ch] += w * c.ShadeFactor[ch]
			}
			kw += w
			shaded++
		}
	}
	any := false
	for i, n := range count {
		if int(n) >= need {
			s.occ.Pix[i], any = 1, true
		}
	}
	if kw > 0 {
		s.voteShadows(count, shade, need, k, kw, shaded, size, fr)
	}
	if !any {
		s.nothingCovers()
		return
	}
	s.featherOccluders(size)
}

// voteOnto adds pix (a cover's mask over rect) into count (over fr) through m, which maps each
// pixel's centre in fr's frame into the cover's, read at the nearest pixel. It returns how
// much it added.
func voteOnto(count, pix []uint8, rect image.Rectangle, m geom.Affine, fr image.Rectangle) int {
	w, cw := fr.Dx(), rect.Dx()
	added := 0
	for y := range fr.Dy() {
		py := float64(fr.Min.Y+y) + 0.5
		row := count[y*w:][:w]
		for x := range row {
			p := m.Apply(geom.Pt{X: float64(fr.Min.X+x) + 0.5, Y: py})
			cx, cy := int(math.Floor(p.X))-rect.Min.X, int(math.Floor(p.Y))-rect.Min.Y
			if cx >= 0 && cy >= 0 && cx < cw && cy < rect.Dy() {
				v := pix[cy*cw+cx]
				row[x] += v
				added += int(v)
			}
		}
	}
	return added
}

// voteShadows sets s.shade from the votes (count: covers, shade: shadows, over fr; need of
// them win): the area that is swapped (fewer than need covers) where most frames found it dark,
// a cover or a shadow, and shadeVotes or more a shadow (one or two frames' shadow does not take
// a cover from the others: it would come and go with them), feathered as fillShadows does; its
// factor is the shaded frames' ksum over kw, weighted by how much of each one's shadow lands on
// the face. Where that area is under shadeVoted of the shaded frames' mean (kw over shaded),
// the frames do not agree where the shadow is (a sliver of it is all that wins) and none is
// carried. A region some frames took for a cover and others for a shadow loses both votes, is
// swapped, and must still be darkened; carryShadows measures how dark in this frame, so the
// lit skin the area reaches is left as it is.
func (s *Swapper) voteShadows(count, shade []uint8, need int, ksum [3]float32, kw float32, shaded int, size float64, fr image.Rectangle) {
	sh := &s.shade
	sh.area.Reset(fr)
	voted := 0
	for i, n := range shade {
		if int(n) >= shadeVotes && int(count[i]) < need && int(count[i])+int(n) >= need {
			sh.area.Pix[i] = 1
			voted++
		}
	}
	if float32(voted) < shadeVoted*kw/float32(shaded) {
		return
	}
	sh.on = true
	for c := range sh.k {
		sh.k[c] = ksum[c] / kw
	}
	s.featherShadows(size)
}

// CoverVote is how many frames each side of its own a face's covers are voted over: a cover
// that comes and goes for three frames or fewer does not show, and one that stays shows from
// its first frame to its last. The votes are counted in bytes: at most 127.
const CoverVote = 3
