package align

import (
	"math"

	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// FaceFusion's cv2.estimateAffinePartial2D(method = RANSAC, ransacReprojThreshold = 100) with
// OpenCV's other defaults (2000 iterations, confidence 0.99, 10 refinement iterations).
const (
	ransacThreshold  = 100
	ransacMaxIters   = 2000
	ransacConfidence = 0.99
)

// partialAffine is cv::estimateAffinePartial2D as FaceFusion calls it: the points are rounded
// to float32 as OpenCV converts them, RANSAC over two-point similarities picks the inliers,
// and the similarity is refined on them. OpenCV's refinement is Levenberg–Marquardt on (a, b,
// tx, ty), where the residuals are linear: its damping falls to zero after the first step and
// the next step lands on the least-squares similarity, which geom.Similarity computes in
// closed form. ok is false where RANSAC finds no model (all points on one spot). It does not
// allocate.
func partialAffine(src, dst *[5]geom.Pt) (m geom.Affine, ok bool) {
	var from, to [5]geom.Pt
	for i := range from {
		from[i], to[i] = round32(src[i]), round32(dst[i])
	}
	inliers, ok := ransacInliers(&from, &to)
	if !ok {
		return geom.Affine{}, false
	}
	var fi, ti [5]geom.Pt
	n := 0
	for i, in := range inliers {
		if in {
			fi[n], ti[n] = from[i], to[i]
			n++
		}
	}
	return geom.Similarity(fi[:n], ti[:n]), true
}

// ransacInliers is OpenCV's RANSACPointSetRegistrator::run for the two-point similarity
// (modelPoints 2) on five points: the same random subsets from cv::RNG seeded with all ones,
// the same float32 reprojection test, the same adaptive iteration count. It returns the best
// model's inlier mask, with false when no model was found. Points must be float32 values.
func ransacInliers(from, to *[5]geom.Pt) (best [5]bool, ok bool) {
	const n = len(from)
	rng := cvRNG(math.MaxUint64)
	var mask [5]bool
	maxGood := 0
	niters := ransacMaxIters
	for iter := 0; iter < niters; iter++ {
		// getSubset: two distinct indices; the collinearity check of two points always passes.
		i0 := rng.uniform(n)
		i1 := rng.uniform(n)
		for i1 == i0 {
			i1 = rng.uniform(n)
		}
		m, ok := twoPointSimilarity(from, to, i0, i1)
		if !ok {
			continue
		}
		good := countInliers(from, to, m, &mask)
		if good > max(maxGood, 1) {
			best, maxGood = mask, good
			niters = ransacUpdateNumIters(ransacConfidence, float64(n-good)/float64(n), 2, niters)
		}
	}
	return best, maxGood > 0
}

// twoPointSimilarity is AffinePartial2DEstimatorCallback::runKernel: the similarity taking
// from[i], from[j] onto to[i], to[j], in float64 as OpenCV writes it. It reports false where
// OpenCV's model would not be finite (the two source points coincide).
func twoPointSimilarity(from, to *[5]geom.Pt, i, j int) (geom.Affine, bool) {
	x1, y1, x2, y2 := from[i].X, from[i].Y, from[j].X, from[j].Y
	X1, Y1, X2, Y2 := to[i].X, to[i].Y, to[j].X, to[j].Y
	d := 1. / ((x1-x2)*(x1-x2) + (y1-y2)*(y1-y2))
	s0 := d * ((X1-X2)*(x1-x2) + (Y1-Y2)*(y1-y2))
	s1 := d * ((Y1-Y2)*(x1-x2) - (X1-X2)*(y1-y2))
	s2 := d * ((Y1-Y2)*(x1*y2-x2*y1) - (X1*y2-X2*y1)*(y1-y2) - (X1*x2-X2*x1)*(x1-x2))
	s3 := d * (-(X1-X2)*(x1*y2-x2*y1) - (Y1*x2-Y2*x1)*(x1-x2) - (Y1*y2-Y2*y1)*(y1-y2))
	m := geom.Affine{A: s0, B: -s1, C: s2, D: s1, E: s0, F: s3}
	for _, v := range [...]float64{s0, s1, s2, s3} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return m, false
		}
	}
	return m, true
}

// countInliers is findInliers with Affine2DEstimatorCallback::computeError: the model rounded
// to float32, the squared reprojection error in float32, compared with (float)(100²).
func countInliers(from, to *[5]geom.Pt, m geom.Affine, mask *[5]bool) int {
	a, b, c := float32(m.A), float32(m.B), float32(m.C)
	d, e, f := float32(m.D), float32(m.E), float32(m.F)
	t := float32(ransacThreshold * ransacThreshold)
	good := 0
	for i := range from {
		fx, fy := float32(from[i].X), float32(from[i].Y)
		ex := a*fx + b*fy + c - float32(to[i].X)
		ey := d*fx + e*fy + f - float32(to[i].Y)
		mask[i] = ex*ex+ey*ey <= t
		if mask[i] {
			good++
		}
	}
	return good
}

// ransacUpdateNumIters is cv::RANSACUpdateNumIters: the iterations still needed for
// confidence p when a fraction ep of the points are outliers.
func ransacUpdateNumIters(p, ep float64, modelPoints, maxIters int) int {
	p = min(max(p, 0), 1)
	ep = min(max(ep, 0), 1)
	const dblMin = 0x1p-1022 // DBL_MIN
	num := math.Max(1-p, dblMin)
	denom := 1 - math.Pow(1-ep, float64(modelPoints))
	if denom < dblMin {
		return 0
	}
	num, denom = math.Log(num), math.Log(denom)
	if denom >= 0 || -num >= float64(maxIters)*(-denom) {
		return maxIters
	}
	return int(math.RoundToEven(num / denom))
}

// cvRNG is OpenCV's multiply-with-carry cv::RNG.
type cvRNG uint64

func (r *cvRNG) next() uint32 {
	s := uint64(*r)
	s = uint64(uint32(s))*4164903690 + s>>32
	*r = cvRNG(s)
	return uint32(s)
}

// uniform is RNG::uniform(0, n).
func (r *cvRNG) uniform(n int) int { return int(r.next() % uint32(n)) }

// round32 rounds a point to float32, as OpenCV converts FaceFusion's float64 points.
func round32(p geom.Pt) geom.Pt {
	return geom.Pt{X: float64(float32(p.X)), Y: float64(float32(p.Y))}
}
