// Package temporal smooths faces' landmarks over time with a finite window: frame t's faces are
// replaced by a weighted local fit over frames t−K..t+K, so that landmarks that move by codec
// noise alone hold still, and landmarks that follow a moving face keep up with it without lag.
// The window is clipped to fixed positions of the whole video ([lo, hi], the job's frames),
// never to a rank's or a chunk's range, so the result of frame t depends on the video alone:
// the pipeline decodes K (or Still) halo frames on each side of a rank's run to feed it (no
// recursive filter, whose state would depend on where a rank started).
package temporal

import (
	"cmp"
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// MinOverlap is the least intersection over union of two faces' boxes in consecutive frames for
// them to be one face: a face moves far less than half its size from one frame to the next.
const MinOverlap = 0.3

// Smoother smooths one frame at a time; it keeps scratch buffers (one per goroutine).
type Smoother struct {
	K int // frames each side; 0 leaves faces as they are
	// Still, above K, is how many frames each side a face still over all of them is averaged
	// over (its points' mean over the wider window); a face that moves in it is smoothed over
	// K as before, and one between is a blend (see Smooth). The window's frames are then
	// max(K, Still) each side.
	Still int
	// Cut reports a shot cut between frames s and s+1 (IsCut of their histograms): no face is
	// followed across it. Nil: none.
	Cut func(s int) bool
	// Covers is how many frames each side (up to K) Vote gathers a face's covers from for the
	// classic swap's vote (face.Face.Votes); 0 gathers none.
	Covers int
	links  [][]int
	order  []pair
	taken  []bool
	samp   []sample
	keep   []float64
	dist   []float64
	lms    []*face.Landmarks68
	poly   [][3]float64
	vals   []valued
}

type sample struct {
	s, j int // frame and face index in it
	c    float64
	m    float64 // its weight in the window's robust weighted mean (coefficients)
}

type pair struct {
	i, j int
	d    float64
}

// Smooth appends to dst frame t's faces, smoothed over the frames max(t−H, lo)..min(t+H, hi),
// H = max(K, Still): faces(s) are frame s's faces as analysed (every frame of that range must be
// given). A face is followed from frame to frame by Match, never across a Cut; the frames it is
// not found in (and those beyond) are left out of its fit. With Still above K, a face still over
// its Still frames each side (the α of coefficients over them, 0) takes its weighted mean there;
// one that moves there (α 1) its fit over K, bit for bit as without Still; between, the blend by
// that α. The result depends only on the faces of the window, its cuts and lo and hi, and is
// computed in a fixed order: the same inputs give the same bits.
func (sm *Smoother) Smooth(dst []face.Face, t, lo, hi int, faces func(s int) []face.Face) []face.Face {
	cur := faces(t)
	if sm.K <= 0 || len(cur) == 0 {
		return append(dst, cur...)
	}
	a, b := max(t-max(sm.K, sm.Still), lo), min(t+max(sm.K, sm.Still), hi)
	sm.link(a, b, faces)
	for i := range cur {
		sm.follow(t, i, a, b)
		// Over the wider window first: its α says how much the face moves there, from 0
		// (still: its mean there) to 1 (moving: its smoothing over K alone).
		var wide face.Face
		alpha := 1.0
		if sm.Still > sm.K {
			alpha = sm.coefficients(t, sm.Still, faces)
			sm.stillMean(&wide, t, faces)
			sm.samp = slices.DeleteFunc(sm.samp, func(sp sample) bool { return sp.s < t-sm.K || sp.s > t+sm.K })
		}
		sm.coefficients(t, sm.K, faces)
		f := cur[i] // score, embedding and the rest stay frame t's own
		var acc face.Face
		for _, sp := range sm.samp {
			addScaled(&acc, &faces(sp.s)[sp.j], alpha*sp.c)
		}
		if alpha < 1 {
			addScaled(&acc, &wide, 1-alpha)
		}
		f.Box, f.Keypoints, f.Five, f.DetectorFive, f.Landmarks = acc.Box, acc.Keypoints, acc.Five, acc.DetectorFive, acc.Landmarks
		f.SteadyTone = sm.tone(t, faces)
		dst = append(dst, f)
	}
	return dst
}

// link sets sm.links over frames a..b: links[s-a][i], for s < b, is the face of frame s+1 that
// face i of frame s is (−1: none).
func (sm *Smoother) link(a, b int, faces func(s int) []face.Face) {
	for len(sm.links) < b-a {
		sm.links = append(sm.links, nil)
	}
	for s := a; s < b; s++ {
		next := faces(s + 1)
		if sm.Cut != nil && sm.Cut(s) {
			next = nil // every face of frame s ends there
		}
		sm.links[s-a] = sm.match(sm.links[s-a], faces(s), next)
	}
}

// follow sets sm.samp to face i of frame t's frames among a..b (sm.links over them), in frame
// order: back from t, then t, then forward, as far as it is followed.
func (sm *Smoother) follow(t, i, a, b int) {
	sm.samp = sm.samp[:0]
	j := i
	for s := t - 1; s >= a; s-- {
		j = back(sm.links[s-a], j)
		if j < 0 {
			break
		}
		sm.samp = append(sm.samp, sample{s: s, j: j})
	}
	reverse(sm.samp)
	sm.samp = append(sm.samp, sample{s: t, j: i})
	j = i
	for s := t; s < b; s++ {
		j = sm.links[s-a][j]
		if j < 0 {
			break
		}
		sm.samp = append(sm.samp, sample{s: s + 1, j: j})
	}
}

// Vote sets the Votes of frame t's faces as Smooth gave them (smoothed, one for each of
// faces(t), in order): each face's covers in the frames within Covers of t (up to K) where it
// is followed, once those frames' faces carry them (face.Face.Cover, Looked).
func (sm *Smoother) Vote(smoothed []face.Face, t, lo, hi int, faces func(s int) []face.Face) {
	r := min(sm.Covers, sm.K)
	if r <= 0 {
		return
	}
	a, b := max(t-r, lo), min(t+r, hi)
	sm.link(a, b, faces)
	for i := range smoothed {
		sm.follow(t, i, a, b)
		smoothed[i].Votes = sm.votes(faces)
	}
}

// votes are the face's covers over its frames (sm.samp), nil where none was looked at. They are
// the face's own (frame t is processed while the next is voted on).
func (sm *Smoother) votes(faces func(s int) []face.Face) *face.Votes {
	v := &face.Votes{}
	for _, sp := range sm.samp {
		f := &faces(sp.s)[sp.j]
		if !f.Looked {
			continue
		}
		v.Frames++
		if f.Cover != nil {
			v.Covers = append(v.Covers, f.Cover)
		}
	}
	if v.Frames == 0 {
		return nil
	}
	return v
}

// stillMean sets acc to the face's weighted mean over its frames (sm.samp, over Still, with their
// inlier shares sm.keep): weights stillWeight(s−t, Still). On a still face in a lossy clip the
// points step at each keyframe and hold between, and the mean drifts as the window slides over
// the steps; that drift is what moves the swapped face from frame to frame.
func (sm *Smoother) stillMean(acc *face.Face, t int, faces func(s int) []face.Face) {
	var total float64
	for i, sp := range sm.samp {
		total += stillWeight(sp.s-t, sm.Still) * sm.keep[i]
	}
	for i, sp := range sm.samp {
		addScaled(acc, &faces(sp.s)[sp.j], stillWeight(sp.s-t, sm.Still)*sm.keep[i]/total)
	}
}

// stillWeight is the kernel of a still face's mean, d frames from the smoothed one in a window of
// k frames each side: Epanechnikov's, 1 − (d/(k+1))². Over steps held for g frames, g well under
// the window, the mean's change a frame is the steps' values times the kernel's differences
// across their frames; its size grows with ∫w'² against (∫w)², which among kernels that fall to
// zero at the window's edge is least for a parabola: a sixth less drift than the tricube's at
// k = 16 and g = 8 or 12 (TestStillMeanDriftsLittleOverKeyframeSteps). A box would drift less
// still, but takes each frame in or out of the window at full weight (a keyframe's outlier, a
// jump).
func stillWeight(d, k int) float64 {
	u := float64(d) / float64(k+1)
	return 1 - u*u
}

// tone is the face's Tone over its frames (sm.samp): a weighted local line in time, kernel
// weights Weight(s−t, K), every frame counted (a keyframe's tone is what it smooths, where a
// landmark jump there is an outlier). Inside the video the line's value at t is the weighted
// mean, the most a still face's noise can be averaged; a change of light at a steady pace is
// followed exactly, at the video's clipped ends too. Zero when a frame has no tone.
func (sm *Smoother) tone(t int, faces func(s int) []face.Face) face.Tone {
	var m [3]float64
	for _, sp := range sm.samp {
		if faces(sp.s)[sp.j].Tone.Weight <= 0 {
			return face.Tone{}
		}
		d, w := float64(sp.s-t), Weight(sp.s-t, sm.K)
		m[0], m[1], m[2] = m[0]+w, m[1]+w*d, m[2]+w*d*d
	}
	det := m[0]*m[2] - m[1]*m[1]
	var out face.Tone
	for _, sp := range sm.samp {
		d, w := float64(sp.s-t), Weight(sp.s-t, sm.K)
		c := w / m[0]
		if det > 1e-9*m[0]*m[2] {
			c = w * (m[2] - m[1]*d) / det
		}
		tn := &faces(sp.s)[sp.j].Tone
		for k := range 3 {
			out.Mean[k] += c * tn.Mean[k]
			out.Std[k] += c * tn.Std[k]
		}
		out.Weight += c * tn.Weight
	}
	out.Weight = max(out.Weight, 1e-9) // a fitted line may dip; the tone stays measured
	return out
}

// Weight is the tricube kernel of a frame d frames from the smoothed one, in a window of K frames
// each side: 1 at d = 0, falling smoothly, still above zero at |d| = K.
func Weight(d, k int) float64 {
	u := math.Abs(float64(d)) / float64(k+1)
	v := 1 - u*u*u
	return v * v * v
}

// StillMotion is how far, as a fraction of the face's width, the face must move within the
// window (its centroid's fitted curve away from the centroid's mean) before the fit follows it: below it the window's
// motion is within the landmarks' own noise (about 0.4 % of the width, frame to frame, on a
// still face in a lossy clip), and the face is averaged; at twice it and beyond, it is fitted.
const StillMotion = 0.005

// coefficients sets each sample's c so that Σ c·x is the smoothed value at frame t, and its m
// so that Σ m·x is the weighted mean, and returns the blend's α (below): an adaptive blend of
// two weighted least-squares fits (weights Weight(s−t, k), k frames each side). A local
// quadratic follows motion without lag: exact for constant speed and for constant
// acceleration, at the video's ends too. The weighted mean averages a still face strongly, and at the clipped ends does not
// extrapolate noise as a fitted slope would. The blend weight α comes from the motion the
// quadratic finds in the landmarks' centroid over half a window, against StillMotion: 0 (mean)
// below it, 1 (fit) at twice it, linear between, so the result is continuous in the landmarks.
// With fewer distinct frames the fit drops to a line, then to the mean.
func (sm *Smoother) coefficients(t, k int, faces func(s int) []face.Face) float64 {
	samp := sm.samp
	width := 0.0
	for _, sp := range samp {
		width += faces(sp.s)[sp.j].Box.W() / float64(len(samp))
	}
	// Each frame's weight: the kernel's, times its share as an inlier (see robust).
	_, rowAll := sm.moments(t, func(i int) float64 { return Weight(samp[i].s-t, k) })
	sm.robust(t, k, faces, width, rowAll)
	wk := func(i int) float64 { return Weight(samp[i].s-t, k) * sm.keep[i] }
	m, row := sm.moments(t, wk)
	// The motion: how far the centroid's fitted curve strays from its mean within the samples
	// (never extrapolated: at the video's ends a fitted speed would be noise magnified).
	var beta [3]geom.Pt
	var mean geom.Pt
	for i, sp := range samp {
		d := float64(sp.s - t)
		w := wk(i)
		c := geom.Mean(faces(sp.s)[sp.j].Landmarks[:])
		for i := range beta {
			cb := w * (row[i][0] + row[i][1]*d + row[i][2]*d*d)
			beta[i].X += cb * c.X
			beta[i].Y += cb * c.Y
		}
		mean.X += w / m[0] * c.X
		mean.Y += w / m[0] * c.Y
	}
	motion := 0.0
	for _, sp := range samp {
		d := float64(sp.s - t)
		motion = max(motion, math.Hypot(beta[0].X+beta[1].X*d+beta[2].X*d*d-mean.X, beta[0].Y+beta[1].Y*d+beta[2].Y*d*d-mean.Y))
	}
	alpha := min(max(motion/(StillMotion*width)-1, 0), 1)
	if math.IsNaN(alpha) {
		alpha = 1
	}
	for i := range samp {
		d := float64(samp[i].s - t)
		w := wk(i)
		fit := w * (row[0][0] + row[0][1]*d + row[0][2]*d*d)
		samp[i].m = w / m[0]
		samp[i].c = (1-alpha)*samp[i].m + alpha*fit
	}
	return alpha
}

// moments are Σw(i)·d^k over the samples (d = s−t) and the fit's rows from them (fitRows).
func (sm *Smoother) moments(t int, w func(i int) float64) (m [5]float64, row [3][3]float64) {
	for i, sp := range sm.samp {
		d := float64(sp.s - t)
		dk := w(i)
		for k := range m {
			m[k] += dk
			dk *= d
		}
	}
	return m, fitRows(m)
}

// OutlierSpread is how many times the window's median residual a frame's landmarks may lie
// from the window's fit (a weighted quadratic in time through every frame, point by point; RMS
// over the points) and still count whole; from there to twice as far their weight falls to 0.
// dlib's cascade can jump a few percent of the face's width on a change of a few pixels'
// values (an encoder's first frames, a keyframe, a hand passing): such a jump, left in, moves a
// still face by a tenth of a pixel each time it enters or leaves the window.
const OutlierSpread = 3

// OutlierFloor is the least tolerance, as a share of the face's width: frames within the
// landmarks' own noise of the fit (about 0.4 % of the width) all count, so the fit of a face
// that moves, or the mean of one that holds still, keeps every frame.
const OutlierFloor = 0.006

// robust sets sm.keep[i], each sample's share as an inlier: 1 within tolerance of the window's
// fit (row: the rows of the fit over every frame), falling to 0 at twice it. The frame t itself
// never falls to 0.
func (sm *Smoother) robust(t, k int, faces func(s int) []face.Face, width float64, row [3][3]float64) {
	samp := sm.samp
	sm.keep, sm.dist = sm.keep[:0], sm.dist[:0]
	for range samp {
		sm.keep, sm.dist = append(sm.keep, 1), append(sm.dist, 0)
	}
	if len(samp) < 4 || !(width > 0) {
		return
	}
	// Each sample's polynomial weights, once: the fit's value at sample i of a coordinate y is
	// Σ_c (Σ_j a[j][c]·y_j)·d_i^c.
	sm.lms, sm.poly = sm.lms[:0], sm.poly[:0]
	for _, sp := range samp {
		d := float64(sp.s - t)
		w := Weight(sp.s-t, k)
		sm.lms = append(sm.lms, &faces(sp.s)[sp.j].Landmarks)
		sm.poly = append(sm.poly, [3]float64{w * (row[0][0] + row[0][1]*d + row[0][2]*d*d),
			w * (row[1][0] + row[1][1]*d + row[1][2]*d*d), w * (row[2][0] + row[2][1]*d + row[2][2]*d*d)})
	}
	for p := range len(face.Landmarks68{}) {
		var bx, by [3]float64
		for i, l := range sm.lms {
			for c := range bx {
				bx[c] += sm.poly[i][c] * l[p].X
				by[c] += sm.poly[i][c] * l[p].Y
			}
		}
		for i, sp := range samp {
			d := float64(sp.s - t)
			rx := sm.lms[i][p].X - (bx[0] + bx[1]*d + bx[2]*d*d)
			ry := sm.lms[i][p].Y - (by[0] + by[1]*d + by[2]*d*d)
			sm.dist[i] += (rx*rx + ry*ry) / 68
		}
	}
	for i := range sm.dist {
		sm.dist[i] = math.Sqrt(sm.dist[i])
	}
	i := 0
	tol := max(OutlierSpread*sm.weightedMedian(t, k, func(sample) float64 { i++; return sm.dist[i-1] }), OutlierFloor*width)
	for i, sp := range samp {
		sm.keep[i] = min(max(2-sm.dist[i]/tol, 0), 1)
		if sp.s == t {
			sm.keep[i] = max(sm.keep[i], 1e-3)
		}
	}
}

// weightedMedian is the median of v over the samples, each weighted by Weight(s−t, k): the
// smallest value at which the weights up to it reach half. v is called once per sample, in
// order.
func (sm *Smoother) weightedMedian(t, k int, v func(sample) float64) float64 {
	sm.vals = sm.vals[:0]
	var total float64
	for _, sp := range sm.samp {
		w := Weight(sp.s-t, k)
		sm.vals = append(sm.vals, valued{v(sp), w})
		total += w
	}
	slices.SortFunc(sm.vals, func(a, b valued) int { return cmp.Compare(a.v, b.v) })
	var acc float64
	for _, x := range sm.vals {
		acc += x.w
		if acc >= total/2 {
			return x.v
		}
	}
	return sm.vals[len(sm.vals)-1].v
}

type valued struct{ v, w float64 }

// fitRows are the rows of the inverse of the normal matrix of a weighted polynomial fit
// (moments m[k] = Σw·d^k) in the offset d from the smoothed frame: row i times (1, d, d²)·w gives
// each sample's coefficient for the fit's term in d^i.
// A quadratic when the samples allow it (three frames or more), else a line, else a constant.
func fitRows(m [5]float64) [3][3]float64 {
	var r [3][3]float64
	// The quadratic's normal matrix [m0 m1 m2; m1 m2 m3; m2 m3 m4], inverted by its adjugate.
	c00 := m[2]*m[4] - m[3]*m[3]
	c01 := m[2]*m[3] - m[1]*m[4]
	c02 := m[1]*m[3] - m[2]*m[2]
	c11 := m[0]*m[4] - m[2]*m[2]
	c12 := m[1]*m[2] - m[0]*m[3]
	c22 := m[0]*m[2] - m[1]*m[1]
	det := m[0]*c00 + m[1]*c01 + m[2]*c02
	scale := m[0] * m[0] * m[4] // the determinant's size for well-spread samples
	if det > 1e-9*scale {
		r[0] = [3]float64{c00 / det, c01 / det, c02 / det}
		r[1] = [3]float64{c01 / det, c11 / det, c12 / det}
		r[2] = [3]float64{c02 / det, c12 / det, c22 / det}
		return r
	}
	if lin := m[0]*m[2] - m[1]*m[1]; lin > 1e-9*m[0]*m[2] {
		r[0] = [3]float64{m[2] / lin, -m[1] / lin, 0}
		r[1] = [3]float64{-m[1] / lin, m[0] / lin, 0}
		return r
	}
	r[0][0] = 1 / m[0]
	return r
}

// addScaled adds c times f's geometry (box, keypoints, five points, 68 landmarks) to acc.
func addScaled(acc, f *face.Face, c float64) {
	acc.Box.X0 += c * f.Box.X0
	acc.Box.Y0 += c * f.Box.Y0
	acc.Box.X1 += c * f.Box.X1
	acc.Box.Y1 += c * f.Box.Y1
	add := func(dst, src []geom.Pt) {
		for k := range dst {
			dst[k].X += c * src[k].X
			dst[k].Y += c * src[k].Y
		}
	}
	add(acc.Keypoints[:], f.Keypoints[:])
	add(acc.Five[:], f.Five[:])
	add(acc.DetectorFive[:], f.DetectorFive[:])
	add(acc.Landmarks[:], f.Landmarks[:])
}

// back is the face of frame s whose link into frame s+1 is j, or −1.
func back(links []int, j int) int {
	for i, l := range links {
		if l == j {
			return i
		}
	}
	return -1
}

func reverse(s []sample) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// Match links the faces of consecutive frames: links[i] is the face of b that face i of a is
// (−1: none). Pairs whose boxes overlap by at least MinOverlap are taken nearest centres first
// (ties by index), each face of a and of b at most once: deterministic, whatever order the
// detector lists the faces in.
func Match(links []int, a, b []face.Face) []int {
	var sm Smoother
	return sm.match(links, a, b)
}

func (sm *Smoother) match(links []int, a, b []face.Face) []int {
	links = links[:0]
	for range a {
		links = append(links, -1)
	}
	sm.order = sm.order[:0]
	for i := range a {
		for j := range b {
			if IoU(a[i].Box, b[j].Box) >= MinOverlap {
				sm.order = append(sm.order, pair{i, j, dist(a[i].Box.Center(), b[j].Box.Center())})
			}
		}
	}
	slices.SortFunc(sm.order, func(p, q pair) int {
		if c := cmp.Compare(p.d, q.d); c != 0 {
			return c
		}
		if c := cmp.Compare(p.i, q.i); c != 0 {
			return c
		}
		return cmp.Compare(p.j, q.j)
	})
	sm.taken = append(sm.taken[:0], make([]bool, len(b))...) // faces of b already linked (no allocation: append of make is cleared in place)
	for _, p := range sm.order {
		if links[p.i] >= 0 || sm.taken[p.j] {
			continue
		}
		links[p.i] = p.j
		sm.taken[p.j] = true
	}
	return links
}

// IoU is the intersection over union of two boxes.
func IoU(a, b geom.Rect) float64 {
	w := min(a.X1, b.X1) - max(a.X0, b.X0)
	h := min(a.Y1, b.Y1) - max(a.Y0, b.Y0)
	if w <= 0 || h <= 0 {
		return 0
	}
	in := w * h
	return in / (a.W()*a.H() + b.W()*b.H() - in)
}

func dist(p, q geom.Pt) float64 { return math.Hypot(p.X-q.X, p.Y-q.Y) }
