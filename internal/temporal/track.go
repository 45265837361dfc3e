package temporal

import (
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// Tracker is FaceFusion's face tracker (face_tracker.track_faces with face_creator.refill_faces):
// frame t's faces are those of the tracks through it over frames t−Amount..t+Amount, a track
// that misses frame t giving a face interpolated between its nearest faces either side. Frames
// outside [lo, hi] have no face, as FaceFusion's empty frames beyond the video's ends. It keeps
// scratch buffers (one per goroutine).
type Tracker struct {
	Amount int     // target_frame_amount: frames each side
	Score  float64 // face_tracker_score: the least box overlap that continues a track (> 0)
	tracks [][]member
}

// member is one face of a track: its frame's index in the window and the face.
type member struct {
	at int
	f  *face.Face
}

// Track appends frame t's tracked faces to dst, in the order FaceFusion's tracks are created
// (the order of their first face in the window); faces(s) are frame s's faces as analysed
// (every frame of [t−Amount, t+Amount] ∩ [lo, hi] must be given).
func (tr *Tracker) Track(dst []face.Face, t, lo, hi int, faces func(s int) []face.Face) []face.Face {
	for i := range tr.tracks {
		tr.tracks[i] = tr.tracks[i][:0]
	}
	tracks := tr.tracks[:0]
	first := t - tr.Amount
	for s := first; s <= t+tr.Amount; s++ {
		if s < lo || s > hi {
			continue
		}
		fs := faces(s)
		for j := range fs {
			f := &fs[j]
			k := tr.selectTrack(tracks, f)
			if k < 0 {
				if len(tracks) < cap(tracks) {
					tracks = tracks[:len(tracks)+1]
					tracks[len(tracks)-1] = append(tracks[len(tracks)-1][:0], member{s - first, f})
				} else {
					tracks = append(tracks, []member{{s - first, f}})
				}
				continue
			}
			// A track holds one face a frame: a second face of the same frame that matches
			// it replaces the first (FaceFusion's dict keyed by frame).
			if last := &tracks[k][len(tracks[k])-1]; last.at == s-first {
				last.f = f
			} else {
				tracks[k] = append(tracks[k], member{s - first, f})
			}
		}
	}
	tr.tracks = tracks
	target := t - first
	for _, m := range tracks {
		a, b := m[0].at, m[len(m)-1].at
		if target < a || target > b {
			continue
		}
		dst = append(dst, refill(m, target))
	}
	return dst
}

// selectTrack is the track whose last face's box overlaps f's most, above Score; -1: none.
// The first of equal overlaps wins.
func (tr *Tracker) selectTrack(tracks [][]member, f *face.Face) int {
	best, score := -1, tr.Score
	for k, m := range tracks {
		if o := Overlap(f.Box, m[len(m)-1].f.Box); o > score {
			best, score = k, o
		}
	}
	return best
}

// refill is the track's face at window index target: its own where the track has one, else
// the average of its nearest faces before and after, weighted by distance (refill_faces).
func refill(m []member, target int) face.Face {
	for i, x := range m {
		if x.at == target {
			return *x.f
		}
		if x.at > target {
			prev := m[i-1]
			factor := float64(target-prev.at) / float64(x.at-prev.at)
			return Average(prev.f, x.f, factor)
		}
	}
	panic("temporal: refill outside its track")
}

// Average is FaceFusion's average_face_geometry of faces a and b at factor (0: a, 1: b): box
// and points ('68/5' included) interpolated, the angle estimated from the interpolated '68/5';
// score, landmark score, embedding and class those of the nearer face (b from 0.5 on); marked
// Refill.
func Average(a, b *face.Face, factor float64) face.Face {
	out := *a
	if factor >= 0.5 {
		out = *b
	}
	out.Box = geom.Rect{
		X0: lerp(a.Box.X0, b.Box.X0, factor), Y0: lerp(a.Box.Y0, b.Box.Y0, factor),
		X1: lerp(a.Box.X1, b.Box.X1, factor), Y1: lerp(a.Box.Y1, b.Box.Y1, factor),
	}
	lerpPts(out.Five[:], a.Five[:], b.Five[:], factor)
	lerpPts(out.DetectorFive[:], a.DetectorFive[:], b.DetectorFive[:], factor)
	lerpPts(out.Keypoints[:], a.Keypoints[:], b.Keypoints[:], factor)
	lerpPts(out.Landmarks[:], a.Landmarks[:], b.Landmarks[:], factor)
	lerpPts(out.Landmarks68From5[:], a.Landmarks68From5[:], b.Landmarks68From5[:], factor)
	out.Angle = out.Landmarks68From5.Angle()
	out.Refill = true
	return out
}

func lerp(a, b, f float64) float64 { return a*(1-f) + b*f }

func lerpPts(dst, a, b []geom.Pt, f float64) {
	for i := range dst {
		dst[i] = geom.Pt{X: lerp(a[i].X, b[i].X, f), Y: lerp(a[i].Y, b[i].Y, f)}
	}
}

// Overlap is FaceFusion's calculate_bounding_box_overlap: the boxes' intersection over their
// union, 0 where the union is not positive.
func Overlap(a, b geom.Rect) float64 {
	in := max(0, min(a.X1, b.X1)-max(a.X0, b.X0)) * max(0, min(a.Y1, b.Y1)-max(a.Y0, b.Y0))
	union := a.W()*a.H() + b.W()*b.H() - in
	if union > 0 {
		return in / union
	}
	return 0
}
