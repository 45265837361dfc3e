package adapters

import (
	"cmp"
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// This file is the pure half of BlazeFace: anchors, raw-tensor decoding and weighted NMS, in
// plain Go so it is tested without the runtime.

// blazeAnchors lays out MediaPipe's SSD anchors for an input of size pixels. Consecutive layers
// with the same stride share one grid, each contributing two anchors per cell (MediaPipe's
// "fixed anchor size" with aspect ratio 1 and an interpolated scale), so strides 8,16,16,16 on
// a 128 input give 16×16×2 then 8×8×6 = 896 anchors. Cells run row-major, anchors within a
// cell innermost; centres are normalised to [0,1].
func blazeAnchors(size int, strides []int) []geom.Pt {
	var anchors []geom.Pt
	for i := 0; i < len(strides); {
		j := i
		for j < len(strides) && strides[j] == strides[i] {
			j++
		}
		perCell := 2 * (j - i)
		grid := (size + strides[i] - 1) / strides[i]
		for y := 0; y < grid; y++ {
			for x := 0; x < grid; x++ {
				c := geom.Pt{X: (float64(x) + 0.5) / float64(grid), Y: (float64(y) + 0.5) / float64(grid)}
				for k := 0; k < perCell; k++ {
					anchors = append(anchors, c)
				}
			}
		}
		i = j
	}
	return anchors
}

// blazeCoords is the number of regression values per anchor: box centre and size, then six
// keypoints (right eye, left eye, nose, mouth, right ear, left ear).
const blazeCoords = 16

// scoreClip bounds raw logits before the sigmoid, as MediaPipe does, so a wild value cannot
// overflow exp.
const scoreClip = 100

// decodeBlaze appends to dst every anchor whose sigmoid score is at least minScore. scores holds
// one raw logit per anchor, boxes blazeCoords raw values per anchor; size is the model's input
// size in pixels (the regression unit). Results are in normalised input coordinates.
func decodeBlaze(dst []face.Detection, anchors []geom.Pt, scores, boxes []float32, size, minScore float64) []face.Detection {
	// Compare logits instead of scores: one sigmoid per kept anchor rather than per anchor.
	minLogit := math.Inf(-1)
	if minScore > 0 {
		if minScore >= 1 {
			return dst
		}
		minLogit = math.Log(minScore / (1 - minScore))
	}
	for i, a := range anchors {
		raw := math.Max(-scoreClip, math.Min(scoreClip, float64(scores[i])))
		if raw < minLogit || math.IsNaN(raw) {
			continue
		}
		score := 1 / (1 + math.Exp(-raw))
		if score < minScore { // the logit test rounds; keep the documented rule exact
			continue
		}
		r := boxes[i*blazeCoords : (i+1)*blazeCoords]
		cx, cy := float64(r[0])/size+a.X, float64(r[1])/size+a.Y
		w, h := float64(r[2])/size, float64(r[3])/size
		d := face.Detection{
			Box:   geom.Rect{X0: cx - w/2, Y0: cy - h/2, X1: cx + w/2, Y1: cy + h/2},
			Score: score,
		}
		for k := range d.Keypoints {
			d.Keypoints[k] = geom.Pt{X: float64(r[4+2*k])/size + a.X, Y: float64(r[5+2*k])/size + a.Y}
		}
		dst = append(dst, d)
	}
	return dst
}

// nmsIoU is the overlap above which two detections are the same face (MediaPipe's
// min_suppression_threshold for BlazeFace).
const nmsIoU = 0.3

// weightedNMS merges overlapping candidates the way MediaPipe's WEIGHTED suppression does: the
// best remaining candidate gathers every remaining one that overlaps it by more than iou, and the
// cluster's box and keypoints are averaged weighted by score; the merged detection keeps the best
// score. cands is reordered and consumed; results are appended to dst in descending score order.
// It allocates nothing when dst has room.
func weightedNMS(dst, cands []face.Detection, iou float64) []face.Detection {
	slices.SortFunc(cands, func(a, b face.Detection) int { return cmp.Compare(b.Score, a.Score) })
	rest := cands
	for len(rest) > 0 {
		top := rest[0]
		var sum float64
		members := 0
		var box geom.Rect
		var kps [6]geom.Pt
		// Partition rest into the cluster (accumulated) and the survivors (moved forward in
		// order, so the next top is again the best remaining).
		n := 0
		for _, c := range rest {
			if top.Box.IoU(c.Box) > iou {
				s := c.Score
				sum += s
				members++
				box.X0 += s * c.Box.X0
				box.Y0 += s * c.Box.Y0
				box.X1 += s * c.Box.X1
				box.Y1 += s * c.Box.Y1
				for k := range kps {
					kps[k] = kps[k].Add(c.Keypoints[k].Scale(s))
				}
				continue
			}
			rest[n] = c
			n++
		}
		// A lone member keeps its exact values rather than a rounded self-average.
		if members > 1 && sum > 0 {
			inv := 1 / sum
			top.Box = geom.Rect{X0: box.X0 * inv, Y0: box.Y0 * inv, X1: box.X1 * inv, Y1: box.Y1 * inv}
			for k := range kps {
				top.Keypoints[k] = kps[k].Scale(inv)
			}
		}
		// A degenerate top (empty box: IoU with itself is 0) is kept as is and removed alone.
		if n == len(rest) {
			n--
			copy(rest, rest[1:])
		}
		dst = append(dst, top)
		rest = rest[:n]
	}
	return dst
}
