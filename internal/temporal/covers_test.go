package temporal

import (
	"image"
	"slices"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// Each face carries the covers of the frames within Covers of its own, of the same face (two
// faces in every frame keep theirs apart), counting the frames looked at whether or not
// something covered the face there; the window stops at a cut and at the video's ends, and a
// frame that was not looked at is not counted. No vote is gathered where Covers is 0.
func TestSmootherGathersTheWindowsCovers(t *testing.T) {
	const n, k, r = 24, 6, 3
	cut := 15 // between frames 15 and 16
	// The cover's Rect.Min.X is the frame it was found in, Min.Y the face (0 left, 1 right).
	video := make([][]face.Face, n)
	for f := range video {
		for side := range 2 {
			fc := shape(geom.Pt{X: 200 + 300*float64(side), Y: 150}, 100)
			fc.Looked = f != 9 || side == 1
			if f%3 != 1 || side == 1 && f%2 == 0 {
				fc.Cover = &face.Cover{Rect: image.Rect(f, side, f+1, side+1), Pix: []uint8{1}}
			}
			video[f] = append(video[f], fc)
		}
	}
	covered := func(f, side int) bool { return video[f][side].Cover != nil && video[f][side].Looked }
	for _, covers := range []int{0, r} {
		sm := Smoother{K: k, Covers: covers, Cut: func(s int) bool { return s == cut }}
		for f := range video {
			at := func(s int) []face.Face { return video[s] }
			got := sm.Smooth(nil, f, 0, n-1, at)
			sm.Vote(got, f, 0, n-1, at)
			for side, g := range got {
				if covers == 0 {
					if g.Votes != nil {
						t.Fatalf("Covers 0: frame %d face %d gathered a vote", f, side)
					}
					continue
				}
				lo, hi := max(f-r, 0), min(f+r, n-1)
				if f <= cut {
					hi = min(hi, cut)
				} else {
					lo = max(lo, cut+1)
				}
				var want []int
				frames := 0
				for s := lo; s <= hi; s++ {
					if video[s][side].Looked {
						frames++
					}
					if covered(s, side) {
						want = append(want, s)
					}
				}
				var from []int
				for _, c := range g.Votes.Covers {
					if c.Rect.Min.Y != side {
						t.Fatalf("frame %d face %d: gathered face %d's cover", f, side, c.Rect.Min.Y)
					}
					from = append(from, c.Rect.Min.X)
				}
				if g.Votes.Frames != frames || !slices.Equal(from, want) {
					t.Fatalf("frame %d face %d: covers of frames %v of %d looked at, want %v of %d", f, side, from, g.Votes.Frames, want, frames)
				}
			}
		}
	}
}
