package swap

import (
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// A cover over one of the skin sample discs (a microphone at the mouth's corner, a hand on a
// cheek) puts its colour among the skin's: the median holds, but the spread widens and the
// skin's axis (see skinAxis) turns towards the cover's hue, so that the cover, and anything
// of its hue, counts as more of the skin's colour. A disc whose own median colour lies far
// from the other discs' is left out, as long as most discs remain.
//
// A large cover over the lower face (a scarf, a mask, a hand over the mouth and nose) covers
// most discs, the cheeks', the nose's and the chin's, often those under the eyes too, and
// their majority is then the cover: with it as the skin, the structure test takes the
// uncovered eyes and forehead for what is in front. Such a cover does not reach above the
// eyes: the disc between the brows and the forehead's discs (above each brow) alike with it,
// in colour and in grain (paint and cloth are flat or busy beside skin, though of its colour),
// judge, and where the majority is unlike them the skin is the discs alike with all of them,
// and they. A cover over the eyes reaches between the brows, and hair over the forehead is
// not the colour between the brows: either leaves the majority the skin, as before. The
// mirror case, a cover over the brows and the forehead (a fringe, a brim, a headband, a hand),
// covers the judges themselves, alike, over a majority on bare skin (strands across the brows
// make them busy): witnesses (see judgesCovered) weigh which of the two is under a cover. What
// the forehead chooses is only what is surely the cover (see coverDiscs), and a colour that
// surely has no skin's hue is no skin (see noSkinHue): a tinted light moves the skin's own
// hue, so the hue only ever says what is not skin, never which other region is.

const (
	// occDiscChroma and occDiscBright are how far (log-chromaticity distance, log-brightness)
	// a disc's median may lie from the median of the discs' medians and still be skin: the
	// skin's tone varies little over the face, its light more.
	occDiscChroma = 0.2
	occDiscBright = 0.6
	// occSkinDiscs is how many discs sample the skin (see skinCentres); occForeheadDiscs how
	// many the forehead, after them, the first at occForehead (above the right brow, the
	// other above the left); occWitnessDiscs how many beside the eyes, after those (see
	// witnessCentres).
	occSkinDiscs     = 8
	occForeheadDiscs = 2
	occForehead      = occSkinDiscs
	occWitnessDiscs  = 2
	occDiscs         = occSkinDiscs + occForeheadDiscs + occWitnessDiscs
	// occBrowGap is the disc between the brows (see skinCentres).
	occBrowGap = 7
	// occNoseTop is the disc at the top of the nose, between the eyes, under the brows' gap.
	occNoseTop = 4
	// occGrainRatio is how many times finer or coarser than another disc's a disc's grain
	// (the median over its samples of twice the smaller of the steps to the next pixel across
	// and down: an edge steps one way only) may be and both still be skin: paint, cloth and a
	// knit are flat or busy beside skin.
	occGrainRatio = 3
	// occHueMargin is how far (log-chromaticity) a colour may stray past a skin's order of
	// hues (see skinHue) and still have one: a grey or a white is within it.
	occHueMargin = 0.05
	// occHueFar is how far past a skin's order of hues skin may go under a tinted light (a
	// blue stage light, a teal monitor's, a wrong white balance take it 0.2–0.25 past); a
	// colour beyond it surely has no skin's hue (see noSkinHue): a dye's navy, teal or green
	// lies 0.8–1.4 past.
	occHueFar = 0.35
)

// foreheadCentres are the forehead's sample discs, above the middle of each brow by 15 % of
// the nose tip's depth below the eyes: skin under any cover of the lower face, clear of a bar
// over the eyes, and low enough to stay under a cap's brim or a fringe where it can (higher,
// on Grace Hopper's cap, they could not judge).
func foreheadCentres(l *face.Landmarks68, out *[occForeheadDiscs]geom.Pt) {
	up := geom.Mean(l[36:48]).Sub(l[33]).Scale(0.15)
	out[0] = l[19].Add(up)
	out[1] = l[24].Add(up)
}

// witnessCentres are the discs beside the eyes, halfway from each eye's outer corner to the
// face's outline: skin under a scarf or a mask, which stay below the eyes, and under a fringe,
// a brim, a headband or a hand on the forehead, which stay above them.
func witnessCentres(l *face.Landmarks68, out *[occWitnessDiscs]geom.Pt) {
	out[0] = l[0].Add(l[36]).Scale(0.5)
	out[1] = l[16].Add(l[45]).Scale(0.5)
}

// discMedians puts in med[k][d] the median of feature k over disc d's samples (disc d holds
// samples starts[d]..starts[d+1]−1), NaN where a disc has none.
func (s *Swapper) discMedians(starts *[occDiscs + 1]int, med *[3][occDiscs]float32) {
	for d := range len(starts) - 1 {
		for k := range 3 {
			if starts[d+1] == starts[d] {
				med[k][d] = float32(math.NaN())
				continue
			}
			s.dev = append(s.dev[:0], s.feat[k][starts[d]:starts[d+1]]...)
			slices.Sort(s.dev)
			med[k][d] = s.dev[len(s.dev)/2]
		}
	}
}

// medianOf is the median of v's values that are not NaN (NaN if none), through s.dev.
func (s *Swapper) medianOf(v []float32) float32 {
	s.dev = s.dev[:0]
	for _, x := range v {
		if !math.IsNaN(float64(x)) {
			s.dev = append(s.dev, x)
		}
	}
	if len(s.dev) == 0 {
		return float32(math.NaN())
	}
	slices.Sort(s.dev)
	return s.dev[len(s.dev)/2]
}

// farColour reports whether colour features a lie too far from b for both to be the skin.
func farColour(a, b [3]float32) bool {
	return math.Hypot(float64(a[1]-b[1]), float64(a[2]-b[2])) > occDiscChroma || math.Abs(float64(a[0]-b[0])) > occDiscBright
}

// dropCoveredSamples keeps in s.feat the samples of the skin's eight discs (disc d holds
// samples starts[d]..starts[d+1]−1) that are skin, and records which in s.skinDisc; the
// forehead's two discs, last, judge, and are kept where they overrule the majority.
func (s *Swapper) dropCoveredSamples(starts *[occDiscs + 1]int, grain *[occDiscs]float32) {
	n := len(s.skinDisc)
	for d := range s.skinDisc {
		s.skinDisc[d] = true
	}
	var med [3][occDiscs]float32
	s.discMedians(starts, &med)
	var ref [3]float32
	for k := range 3 {
		ref[k] = s.medianOf(med[k][:n])
	}
	s.upperSkin = false
	if math.IsNaN(float64(ref[0])) {
		for d := range n {
			s.discLight[d] = [3]float32{nan32, nan32, nan32}
		}
		s.keepDiscs(starts, n, [occForeheadDiscs]bool{})
		return
	}
	disc := func(d int) [3]float32 { return [3]float32{med[0][d], med[1][d], med[2][d]} }
	// unlike reports whether discs d and e differ in colour or in grain.
	unlike := func(d, e int) bool {
		a, b := grain[d], grain[e]
		return farColour(disc(d), disc(e)) || (max(a, b)+0.5) > occGrainRatio*(min(a, b)+0.5)
	}
	refGrain := s.medianOf(grain[:n])
	var judgeBuf [3]int
	judges := findJudges(&med, ref, unlike, &judgeBuf)
	upper := false
	if len(judges) > 0 {
		// The forehead overrules only a majority unlike it in colour or grain.
		var fh [3]float32
		var g float32
		for _, d := range judges {
			for k := range 3 {
				fh[k] += med[k][d] / float32(len(judges))
			}
			g += grain[d] / float32(len(judges))
		}
		upper = farColour(fh, ref) || (max(g, refGrain)+0.5) > occGrainRatio*(min(g, refGrain)+0.5)
	}
	var odd [8]bool
	bad := 0
	for d := range n {
		if !math.IsNaN(float64(med[0][d])) && farColour(disc(d), ref) {
			odd[d] = true
			bad++
		}
	}
	// Nor is a majority that is none (more than half the discs unlike their median: a cover
	// over some, the skin under others) the skin.
	upper = upper || len(judges) > 0 && 2*bad > n
	// Unless the witnesses side with the discs the judges would drop: the judges are then
	// under a cover of the brows and the forehead.
	upper = upper && !s.judgesCovered(&med, grain, judges, unlike)
	if upper {
		var cover [8]bool
		s.coverDiscs(&med, grain, judges, unlike, &cover)
		if upper = fromBelow(&med, &cover); upper {
			odd = cover
		}
	}
	if upper || bad > 0 && 2*bad <= n {
		for d := range n {
			s.skinDisc[d] = !odd[d]
		}
	}
	s.upperSkin = upper
	for d := range n {
		s.discLight[d] = [3]float32{nan32, nan32, nan32}
		if s.skinDisc[d] {
			s.discLight[d] = disc(d)
		}
	}
	var forehead [occForeheadDiscs]bool
	for _, d := range judges {
		if upper && d >= n {
			forehead[d-n] = true
		}
	}
	s.keepDiscs(starts, n, forehead)
}

// fromBelow reports whether the discs that judges would take for a cover (odd) could be a
// cover of the lower face, which rises from the chin: where it covers the cheek under an eye
// it covers that side's cheek by the mouth too. Sunglasses that drag the brows' landmarks
// onto their lenses put the judges on the lenses, unlike the bare cheeks under the eyes and
// like a bare cheek lower down.
func fromBelow(med *[3][occDiscs]float32, odd *[8]bool) bool {
	for _, side := range [][2]int{{0, 2}, {1, 3}} {
		if odd[side[0]] && !odd[side[1]] && !math.IsNaN(float64(med[0][side[1]])) {
			return false
		}
	}
	return true
}

// skinHue reports whether colour features c have a skin's order of hues, red over green over
// blue, within a margin: under a plain light no skin is greener than red or bluer than green.
func skinHue(c [3]float32) bool {
	return c[1] > -occHueMargin && c[2] < occHueMargin
}

// noSkinHue reports whether colour features c lie past a skin's order of hues by more than a
// tinted light moves skin (occHueFar): a dye's hue (a navy, a teal, a green), not skin under a
// stage's, a monitor's or foliage's light, which tints everything in the frame alike. Only
// what surely has no skin's hue is told by its hue alone.
func noSkinHue(c [3]float32) bool {
	return c[1] < -occHueFar || c[2] > occHueFar
}

// findJudges returns the judges, in buf: the disc between the brows and the forehead's discs
// alike with it (one may be on hair), or the forehead's two alone (see foreheadAlone).
func findJudges(med *[3][occDiscs]float32, ref [3]float32, unlike func(d, e int) bool, buf *[3]int) []int {
	judges := buf[:0]
	if !math.IsNaN(float64(med[0][occBrowGap])) {
		for _, d := range []int{occForehead, occForehead + 1} {
			if !math.IsNaN(float64(med[0][d])) && !unlike(occBrowGap, d) {
				judges = append(judges, d)
			}
		}
		if len(judges) > 0 {
			return append(judges, occBrowGap)
		}
	}
	if foreheadAlone(med, ref, unlike) {
		return append(judges, occForehead, occForehead+1)
	}
	return nil
}

// foreheadAlone reports whether the forehead's two discs judge alone: where the disc between
// the brows (if sampled) and the discs' majority surely have no skin's hue (see noSkinHue)
// while the forehead's two are alike and of a skin's hue. A mask's upper edge that misplaced
// the landmarks, taken for the eyes, puts the gap between the brows on it. A fringe leaves
// the gap on the skin, with the majority; so does a tinted light, which takes the skin's
// hue from the whole face alike, not from a fringe or a brim of a skin's hue on it.
func foreheadAlone(med *[3][occDiscs]float32, ref [3]float32, unlike func(d, e int) bool) bool {
	disc := func(d int) [3]float32 { return [3]float32{med[0][d], med[1][d], med[2][d]} }
	l, r := occForehead, occForehead+1
	if math.IsNaN(float64(med[0][l])) || math.IsNaN(float64(med[0][r])) || unlike(l, r) ||
		!skinHue(disc(l)) || !skinHue(disc(r)) {
		return false
	}
	gap := math.IsNaN(float64(med[0][occBrowGap])) || noSkinHue(disc(occBrowGap))
	return gap && noSkinHue(ref)
}

// discStat is a disc's median colour features and grain.
type discStat [4]float32

// discDist is how far apart two discs are, in units of what still counts as alike: colour
// (occDiscChroma, occDiscBright) and grain (a ratio of occGrainRatio) together.
func discDist(a, b discStat) float64 {
	c := math.Hypot(float64(a[1]-b[1]), float64(a[2]-b[2])) / occDiscChroma
	l := math.Abs(float64(a[0]-b[0])) / occDiscBright
	g := math.Abs(math.Log(float64(a[3]+0.5)/float64(b[3]+0.5))) / math.Log(occGrainRatio)
	return math.Sqrt(c*c + l*l + g*g)
}

// medianStat is the median, feature by feature, of the discs where pick holds (ok false if none).
func (s *Swapper) medianStat(med *[3][occDiscs]float32, grain *[occDiscs]float32, pick func(d int) bool) (out discStat, ok bool) {
	var v [4][occDiscs]float32
	for d := range occDiscs {
		for k := range 4 {
			v[k][d] = nan32
		}
		if !math.IsNaN(float64(med[0][d])) && pick(d) {
			v[0][d], v[1][d], v[2][d], v[3][d] = med[0][d], med[1][d], med[2][d], grain[d]
		}
	}
	for k := range 4 {
		out[k] = s.medianOf(v[k][:])
	}
	return out, !math.IsNaN(float64(out[3]))
}

// coverDiscs sets odd (in upper mode) to the skin discs that are the cover's: unlike a judge,
// and nearer the median of such discs (the cover) than the judges' median, or surely of no
// skin's hue where the judges have one. A bare disc that differs from the judges a little,
// in grain under a glasses rim, stays skin.
func (s *Swapper) coverDiscs(med *[3][occDiscs]float32, grain *[occDiscs]float32, judges []int, unlike func(d, e int) bool, odd *[8]bool) {
	unlikeJudge := func(d int) bool {
		return d < len(odd) && slices.ContainsFunc(judges, func(e int) bool { return unlike(d, e) })
	}
	cover, _ := s.medianStat(med, grain, unlikeJudge)
	jm, _ := s.medianStat(med, grain, func(d int) bool { return slices.Contains(judges, d) })
	// Where the judges have a skin's hue, a disc that surely has none is the cover's, however
	// the cover's median leans (skin deep in shadow, unlike the judges, can pull it).
	hued := skinHue([3]float32(jm[:3]))
	for d := range odd {
		odd[d] = false
		if math.IsNaN(float64(med[0][d])) || !unlikeJudge(d) {
			continue
		}
		st := discStat{med[0][d], med[1][d], med[2][d], grain[d]}
		odd[d] = discDist(st, cover) <= discDist(st, jm) || hued && noSkinHue([3]float32(st[:3]))
	}
}

// judgesCovered reports whether the judges (see dropCoveredSamples) are under a cover of the
// brows and the forehead (a fringe, a brim, a headband, a lock of hair, a hand) rather than
// the skin over a cover of the lower face: whether the witnesses lie nearer, on the whole,
// the others (the median of the skin discs the judges would drop) than the judges' median.
// Each weighs by how much nearer, so a witness between the two says little. The witnesses:
// a forehead disc that is not a judge (beside them, on the skin they would be covering);
// and where none of the skin discs below the eyes is alike with the judges, so that either
// the forehead or all the face below it is covered, the discs beside the eyes: a mask
// rarely reaches them, a cover of the forehead never.
func (s *Swapper) judgesCovered(med *[3][occDiscs]float32, grain *[occDiscs]float32, judges []int, unlike func(d, e int) bool) bool {
	const n = occSkinDiscs
	kept := 0 // the skin discs below the eyes the judges would keep
	others := func(d int) bool {
		return d < n && d != occBrowGap && slices.ContainsFunc(judges, func(e int) bool { return unlike(d, e) })
	}
	for d := range n {
		if !math.IsNaN(float64(med[0][d])) && d != occBrowGap && d != occNoseTop && !others(d) {
			kept++
		}
	}
	oc, ok := s.medianStat(med, grain, others)
	if !ok {
		return false
	}
	jm, _ := s.medianStat(med, grain, func(d int) bool { return slices.Contains(judges, d) })
	// What surely has no skin's hue is not the skin the witnesses would be siding with (a
	// mask that misplaced the landmarks reaches them). The rule only ever takes the others
	// for a cover: judges of no skin's hue under a tinted light may be the skin itself.
	if skinHue([3]float32(jm[:3])) && noSkinHue([3]float32(oc[:3])) {
		return false
	}
	var lean float64
	for d := n; d < occDiscs; d++ {
		if d >= n+occForeheadDiscs && kept > 0 {
			break
		}
		if math.IsNaN(float64(med[0][d])) || slices.Contains(judges, d) {
			continue
		}
		st := discStat{med[0][d], med[1][d], med[2][d], grain[d]}
		lean += max(-1, min(1, discDist(st, jm)-discDist(st, oc)))
	}
	return lean > 0
}

var nan32 = float32(math.NaN())

// keepDiscs compacts s.feat to the samples of the first n discs that s.skinDisc keeps, and of
// the forehead's that forehead keeps (those that judged the skin, see above).
func (s *Swapper) keepDiscs(starts *[occDiscs + 1]int, n int, forehead [occForeheadDiscs]bool) {
	j := 0
	for d := range len(starts) - 1 {
		if d < n && !s.skinDisc[d] || d >= n && (d-n >= occForeheadDiscs || !forehead[d-n]) {
			continue
		}
		for i := starts[d]; i < starts[d+1]; i++ {
			for k := range 3 {
				s.feat[k][j] = s.feat[k][i]
			}
			j++
		}
	}
	for k := range 3 {
		s.feat[k] = s.feat[k][:j]
	}
}
