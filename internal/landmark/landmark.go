// Package landmark places the 68 iBUG face landmarks inside a face box with dlib's shape
// predictor (an ensemble of regression trees), read from dlib's own .dat file in pure Go.
//
// The evaluation follows dlib's shape_predictor operation for operation, in the same float32
// and float64 precision, so the points agree with dlib's C++ output (which rounds them to
// whole pixels) to within half a pixel.
package landmark

import (
	"math"
	"sync"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// numParts is the number of landmarks face.Landmarks68 holds; Load rejects other models.
const numParts = 68

// split is one internal tree node: go left when feature[a] − feature[b] > thresh. A feature is
// a whole grey level, so that is when the difference, a whole number, exceeds cut = ⌊thresh⌋:
// the fast walk takes the way from the sign of an integer rather than from a branch.
type split struct {
	a, b   int32
	thresh float32
	cut    int32
}

// splitCut is cut for thresh, clamped far outside the ±255 a difference can be (a NaN
// threshold sends every pixel right, as in dlib).
func splitCut(thresh float32) int32 {
	f := math.Floor(float64(thresh))
	switch {
	case !(f < 1<<20):
		return 1 << 20
	case f < -1<<20:
		return -1 << 20
	}
	return int32(f)
}

// Predictor is a loaded shape predictor. It is read-only after Load, so one Predictor serves
// any number of goroutines.
type Predictor struct {
	// initial is the mean shape x0,y0,x1,y1,… in box-normalised coordinates.
	initial [2 * numParts]float32
	// initialPts is initial as points, for the per-cascade similarity fit.
	initialPts [numParts]geom.Pt

	cascades int
	trees    int // per cascade
	nsplits  int // per tree (2^depth − 1); every tree has nsplits+1 leaves
	features int // feature pixels per cascade

	splits []split    // cascade, tree, node
	leaves []float32  // cascade, tree, leaf, 2·numParts offsets
	anchor []int32    // cascade, feature: the landmark each feature pixel hangs from
	deltas []float32  // cascade, feature, (dx, dy) from the anchor in mean-shape units
	pool   *sync.Pool // *workspace
}

// workspace is one goroutine's scratch for Predict; pooled so steady-state calls do not
// allocate.
type workspace struct {
	shape [2 * numParts]float32
	cur   [numParts]geom.Pt
	// each box's leaves in the cascade at hand (offsets into leaves), and PredictMean's pairs
	// of leaves where a box parts from the first
	offs         [MaxBoxes][]int32
	parted, from []int32
	// each box's features (grey levels), and PredictMean's first box's shape then the others'
	// differences from it
	feats  [MaxBoxes][]int32
	shapes [MaxBoxes][2 * numParts]float32
}

func (p *Predictor) newWorkspace() *workspace {
	ws := &workspace{parted: make([]int32, p.trees), from: make([]int32, p.trees)}
	for b := range ws.offs {
		ws.offs[b] = make([]int32, p.trees)
		ws.feats[b] = make([]int32, p.features)
	}
	return ws
}

// MeanShape is the predictor's starting shape, normalised to the unit box: (0,0) is the box's
// top-left corner and (1,1) its bottom-right.
func (p *Predictor) MeanShape() face.Landmarks68 {
	return p.initialPts
}

// Predict places the 68 landmarks of the face in box and writes them, in image pixels, to out.
// box follows dlib's rectangle: normalised (0,0) maps to (X0,Y0) and (1,1) to (X1,Y1), so a
// dlib rectangle(l, t, r, b) is geom.Rect{l, t, r, b}. Feature pixels falling outside the image
// read as black, as in dlib. Safe for concurrent use; does not allocate in steady state.
func (p *Predictor) Predict(img *raster.Image, box geom.Rect, out *face.Landmarks68) {
	ws := p.pool.Get().(*workspace)
	p.predict(ws, img, box, out)
	p.pool.Put(ws)
}

func (p *Predictor) predict(ws *workspace, img *raster.Image, box geom.Rect, out *face.Landmarks68) {
	shape := &ws.shape
	*shape = p.initial
	feat := ws.feats[0]
	bw, bh := box.X1-box.X0, box.Y1-box.Y0
	for c := 0; c < p.cascades; c++ {
		p.readFeatures(ws, img, box, c, shape, feat)
		addLeaves(shape, p.leaves, p.walk(c, feat, ws.offs[0]))
	}
	for i := range out {
		out[i] = geom.Pt{X: float64(shape[2*i])*bw + box.X0, Y: float64(shape[2*i+1])*bh + box.Y0}
	}
}

// walk writes to offs the leaf (its offset in leaves) that each of cascade c's trees reaches
// for the features feat, and returns offs.
func (p *Predictor) walk(c int, feat []int32, offs []int32) []int32 {
	nleaves := p.nsplits + 1
	first := c * p.trees
	offs = offs[:p.trees]
	for t := range offs {
		nodes := p.splits[(first+t)*p.nsplits : (first+t+1)*p.nsplits]
		i := 0
		for i < len(nodes) {
			n := &nodes[i]
			// Arithmetic, not a branch (the way a feature pair goes is a coin toss for the
			// branch predictor): cut − difference is negative, its sign −1, to go left.
			i = 2*i + 2 + int((n.cut-(feat[n.a]-feat[n.b]))>>31)
		}
		offs[t] = int32(((first+t)*nleaves + i - len(nodes)) * leafLen)
	}
	return offs
}

// MaxBoxes is the most boxes PredictMean takes.
const MaxBoxes = 4

// PredictMean writes to out the mean of Predict's landmarks over boxes (1 to MaxBoxes). dlib's
// trees compare single pixels, so a shift of the box by a fraction of a pixel, or a codec's
// change of a level or two, can send the whole shape a few pixels away; the mean over boxes a
// pixel apart is a far steadier function of the image. It costs less than a Predict a box: the
// boxes' shapes are kept as the first box's plus a difference, and a tree adds to a difference
// only where the boxes reach different leaves.
func (p *Predictor) PredictMean(img *raster.Image, boxes []geom.Rect, out *face.Landmarks68) {
	if len(boxes) == 1 {
		p.Predict(img, boxes[0], out)
		return
	}
	if len(boxes) == 0 || len(boxes) > MaxBoxes {
		panic("landmark: PredictMean takes 1 to MaxBoxes boxes")
	}
	ws := p.pool.Get().(*workspace)
	defer p.pool.Put(ws)
	n := len(boxes)
	base := &ws.shapes[0]
	*base = p.initial
	for b := 1; b < n; b++ {
		ws.shapes[b] = [2 * numParts]float32{} // the differences from base
	}
	for c := 0; c < p.cascades; c++ {
		for b := range n {
			shape := base
			if b > 0 {
				ws.shape = *base
				for k := range ws.shape {
					ws.shape[k] += ws.shapes[b][k]
				}
				shape = &ws.shape
			}
			p.readFeatures(ws, img, boxes[b], c, shape, ws.feats[b])
			p.walk(c, ws.feats[b], ws.offs[b])
		}
		first := ws.offs[0]
		addLeaves(base, p.leaves, first)
		// A box's difference grows only by the trees where it reached another leaf.
		for b := 1; b < n; b++ {
			m := 0
			for t, o := range ws.offs[b] {
				if o != first[t] {
					ws.parted[m], ws.from[m] = o, first[t]
					m++
				}
			}
			addDiffs(&ws.shapes[b], p.leaves, ws.parted[:m], ws.from[:m])
		}
	}
	inv := 1 / float64(n)
	for i := range out {
		var x, y float64
		for b, box := range boxes {
			sx, sy := float64(base[2*i]), float64(base[2*i+1])
			if b > 0 {
				sx += float64(ws.shapes[b][2*i])
				sy += float64(ws.shapes[b][2*i+1])
			}
			x += sx*(box.X1-box.X0) + box.X0
			y += sy*(box.Y1-box.Y0) + box.Y0
		}
		out[i] = geom.Pt{X: x * inv, Y: y * inv}
	}
}

// readFeatures reads cascade c's feature pixels of img into feat, for shape (box-normalised) in box.
func (p *Predictor) readFeatures(ws *workspace, img *raster.Image, box geom.Rect, c int, shape *[2 * numParts]float32, feat []int32) {
	bw, bh := box.X1-box.X0, box.Y1-box.Y0
	// dlib fits the similarity in double precision and then uses its 2×2 part in float.
	for i := range ws.cur {
		ws.cur[i] = geom.Pt{X: float64(shape[2*i]), Y: float64(shape[2*i+1])}
	}
	m := geom.Similarity(p.initialPts[:], ws.cur[:])
	m00, m01, m10, m11 := float32(m.A), float32(m.B), float32(m.D), float32(m.E)

	anchor := p.anchor[c*p.features : (c+1)*p.features]
	deltas := p.deltas[2*c*p.features : 2*(c+1)*p.features]
	for i, a := range anchor {
		dx, dy := deltas[2*i], deltas[2*i+1]
		// Each product is rounded to float32 on its own, as dlib's float matrix code does;
		// the explicit conversions also stop the compiler from fusing them into an FMA.
		nx := float32(m00*dx) + float32(m01*dy) + shape[2*a]
		ny := float32(m10*dx) + float32(m11*dy) + shape[2*a+1]
		x := math.Floor(float64(nx)*bw + box.X0 + 0.5)
		y := math.Floor(float64(ny)*bh + box.Y0 + 0.5)
		if x >= 0 && y >= 0 && x < float64(img.W) && y < float64(img.H) {
			o := int(y)*img.Stride + 3*int(x)
			px := img.Pix[o : o+3 : o+3]
			feat[i] = int32((uint(px[0]) + uint(px[1]) + uint(px[2])) / 3)
		} else {
			feat[i] = 0
		}
	}
}
