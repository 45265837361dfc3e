package landmark

import (
	"math"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// predictReference is Predict written the slow, literal way, step for step after dlib's
// shape_predictor::operator(): a fresh feature vector per cascade, helpers for each pixel
// lookup, a tree walk through explicit child links. It allocates and is slow on purpose; it is
// the twin that Predict's flat-array fast path is checked against.
func (p *Predictor) predictReference(img *raster.Image, box geom.Rect, out *face.Landmarks68) {
	type vec struct{ x, y float32 }
	current := make([]vec, numParts)
	for i := range current {
		current[i] = vec{p.initial[2*i], p.initial[2*i+1]}
	}
	for c := 0; c < p.cascades; c++ {
		// find_tform_between_shapes(initial, current), 2×2 part, cast to float.
		to := make([]geom.Pt, numParts)
		for i, v := range current {
			to[i] = geom.Pt{X: float64(v.x), Y: float64(v.y)}
		}
		tf := geom.Similarity(p.initialPts[:], to)
		m := [2][2]float32{{float32(tf.A), float32(tf.B)}, {float32(tf.D), float32(tf.E)}}

		// extract_feature_pixel_values.
		features := make([]float32, p.features)
		for i := range features {
			anchor := current[p.anchor[c*p.features+i]]
			delta := vec{p.deltas[2*(c*p.features+i)], p.deltas[2*(c*p.features+i)+1]}
			rx := float32(m[0][0]*delta.x) + float32(m[0][1]*delta.y)
			ry := float32(m[1][0]*delta.x) + float32(m[1][1]*delta.y)
			x, y := toImagePixel(box, rx+anchor.x, ry+anchor.y)
			features[i] = intensity(img, x, y)
		}

		// Each tree adds the leaf its walk ends in.
		for t := 0; t < p.trees; t++ {
			tree := c*p.trees + t
			node := 0
			for node < p.nsplits {
				s := p.splits[tree*p.nsplits+node]
				if features[s.a]-features[s.b] > s.thresh {
					node = leftChild(node)
				} else {
					node = rightChild(node)
				}
			}
			leaf := p.leaves[(tree*(p.nsplits+1)+node-p.nsplits)*2*numParts:]
			for k := range current {
				current[k].x += leaf[2*k]
				current[k].y += leaf[2*k+1]
			}
		}
	}
	for i, v := range current {
		out[i] = geom.Pt{
			X: box.X0 + float64(v.x)*(box.X1-box.X0),
			Y: box.Y0 + float64(v.y)*(box.Y1-box.Y0),
		}
	}
}

func leftChild(i int) int  { return 2*i + 1 }
func rightChild(i int) int { return 2*i + 2 }

// toImagePixel maps a box-normalised point to the nearest pixel, rounding halves up as dlib's
// point conversion does.
func toImagePixel(box geom.Rect, x, y float32) (int, int) {
	px := box.X0 + float64(x)*(box.X1-box.X0)
	py := box.Y0 + float64(y)*(box.Y1-box.Y0)
	return int(math.Floor(px + 0.5)), int(math.Floor(py + 0.5))
}

// intensity is dlib's grey level of an RGB pixel, and 0 off the image.
func intensity(img *raster.Image, x, y int) float32 {
	if x < 0 || y < 0 || x >= img.W || y >= img.H {
		return 0
	}
	r, g, b := img.At(x, y)
	return float32((int(r) + int(g) + int(b)) / 3)
}
