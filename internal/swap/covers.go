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
// occluders start from), nil where nothing does, where the face would not be swapped, and
// without a source face (a worker opened without one swaps nothing).
func (s *Swapper) FindCover(frame *raster.Image, target *face.Landmarks68) *face.Cover {
	if !s.opts.Occluders || s.src == nil {
		return nil
	}
	size, _, fr, ok := s.place(frame, target)
	if !ok {
		return nil
	}
	s.features(target, fr)
	if !s.findOccluders(frame, target, &s.mask, size, fr) {
		return nil
	}
	c := &face.Cover{Rect: fr, Pix: make([]uint8, len(s.occ.Pix)), Landmarks: *target}
	for i, v := range s.occ.Pix {
		if v > 0.5 {
			c.Pix[i] = 1
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
// target by the face's motion from its landmarks there.
func (s *Swapper) voteCovers(target *face.Landmarks68, size float64, fr image.Rectangle) {
	s.occ.Reset(fr)
	need := s.voteFrames/2 + 1
	if len(s.votes) < need {
		s.nothingCovers()
		return
	}
	w, h := fr.Dx(), fr.Dy()
	if cap(s.voteCount) < w*h {
		s.voteCount = make([]uint8, w*h)
	}
	count := s.voteCount[:w*h]
	clear(count)
	for _, c := range s.votes {
		// Each pixel's centre in target's frame, mapped into c's frame, read at the nearest pixel.
		m := geom.Similarity(target[:], c.Landmarks[:])
		cw := c.Rect.Dx()
		for y := range h {
			py := float64(fr.Min.Y+y) + 0.5
			row := count[y*w:][:w]
			for x := range row {
				p := m.Apply(geom.Pt{X: float64(fr.Min.X+x) + 0.5, Y: py})
				cx, cy := int(math.Floor(p.X))-c.Rect.Min.X, int(math.Floor(p.Y))-c.Rect.Min.Y
				if cx >= 0 && cy >= 0 && cx < cw && cy < c.Rect.Dy() {
					row[x] += c.Pix[cy*cw+cx]
				}
			}
		}
	}
	any := false
	for i, n := range count {
		if int(n) >= need {
			s.occ.Pix[i], any = 1, true
		}
	}
	if !any {
		s.nothingCovers()
		return
	}
	s.featherOccluders(size)
}

// CoverVote is how many frames each side of its own a face's covers are voted over: a cover
// that comes and goes for three frames or fewer does not show, and one that stays shows from
// its first frame to its last. The votes are counted in bytes: at most 127.
const CoverVote = 3
