package facemodel

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
)

// SelectorMode is FaceFusion's --face-selector-mode.
type SelectorMode string

const (
	SelectMany      SelectorMode = "many"
	SelectOne       SelectorMode = "one"
	SelectReference SelectorMode = "reference" // FaceFusion's default
)

// SelectorOrder is FaceFusion's --face-selector-order.
type SelectorOrder string

const (
	LeftRight  SelectorOrder = "left-right"
	RightLeft  SelectorOrder = "right-left"
	TopBottom  SelectorOrder = "top-bottom"
	BottomTop  SelectorOrder = "bottom-top"
	SmallLarge SelectorOrder = "small-large"
	LargeSmall SelectorOrder = "large-small" // FaceFusion's default
	BestWorst  SelectorOrder = "best-worst"
	WorstBest  SelectorOrder = "worst-best"
)

// SelectorOrders lists every order in FaceFusion's own sequence.
var SelectorOrders = []SelectorOrder{LeftRight, RightLeft, TopBottom, BottomTop, SmallLarge, LargeSmall, BestWorst, WorstBest}

// Selector is FaceFusion's face selector settings.
type Selector struct {
	Mode              SelectorMode
	Order             SelectorOrder
	ReferencePosition int     // --reference-face-position
	ReferenceDistance float64 // --reference-face-distance
}

// DefaultSelector is FaceFusion 3.8.1's: reference mode, large-small, position 0, 0.3.
func DefaultSelector() Selector {
	return Selector{Mode: SelectReference, Order: LargeSmall, ReferenceDistance: DefaultReferenceDistance}
}

// Check refuses modes and orders FaceFusion does not have.
func (s Selector) Check() error {
	if !slices.Contains([]SelectorMode{SelectMany, SelectOne, SelectReference}, s.Mode) {
		return fmt.Errorf("facemodel: unknown face selector mode %q: use one, many or reference", string(s.Mode))
	}
	if !slices.Contains(SelectorOrders, s.Order) {
		return fmt.Errorf("facemodel: unknown face selector order %q: use one of %v", string(s.Order), SelectorOrders)
	}
	return nil
}

// SortFaces is FaceFusion's sort_faces_by_order: a stable sort by the box's left edge, top
// edge or area, or by the detector score, ascending or descending. It sorts in place and does
// not allocate. An unknown order leaves faces as they are, as FaceFusion does.
func SortFaces(faces []face.Face, order SelectorOrder) {
	if !slices.Contains(SelectorOrders, order) {
		return
	}
	desc := order == RightLeft || order == BottomTop || order == LargeSmall || order == BestWorst
	slices.SortStableFunc(faces, func(a, b face.Face) int {
		if desc {
			return cmp.Compare(sortKey(&b, order), sortKey(&a, order))
		}
		return cmp.Compare(sortKey(&a, order), sortKey(&b, order))
	})
}

// sortKey is the quantity an order sorts by: FaceFusion's get_bounding_box_left, _top,
// _area or get_face_detector_score.
func sortKey(f *face.Face, order SelectorOrder) float64 {
	switch order {
	case LeftRight, RightLeft:
		return f.Box.X0
	case TopBottom, BottomTop:
		return f.Box.Y0
	case SmallLarge, LargeSmall:
		return f.Box.W() * f.Box.H()
	}
	return f.Score
}

// Reference picks the reference identity from the faces of the reference frame: FaceFusion
// sorts them by Order and takes the one at ReferencePosition (clamped to the last). faces is
// sorted in place; ok is false when there is none.
func (s Selector) Reference(faces []face.Face) (ref *face.Face, ok bool) {
	if len(faces) == 0 {
		return nil, false
	}
	SortFaces(faces, s.Order)
	return &faces[min(max(s.ReferencePosition, 0), len(faces)-1)], true
}

// Select appends to dst the indices into targets of the faces to process, as FaceFusion's
// select_faces: many: all, after sorting targets in place by Order; one: the first of those;
// reference: every target closer than ReferenceDistance to ref, in the targets' own order
// (targets are not sorted; none when ref is nil).
func (s Selector) Select(dst []int, targets []face.Face, ref *face.Embedding) []int {
	switch s.Mode {
	case SelectMany, SelectOne:
		SortFaces(targets, s.Order)
		n := len(targets)
		if s.Mode == SelectOne {
			n = min(n, 1)
		}
		for i := range n {
			dst = append(dst, i)
		}
	case SelectReference:
		if ref == nil {
			return dst
		}
		for i := range targets {
			if Distance(&targets[i].Embedding, ref) < s.ReferenceDistance {
				dst = append(dst, i)
			}
		}
	}
	return dst
}

// SourceIdentity is FaceFusion's extract_source_face over several source images: the
// largest face of each image (FaceFusion sorts each image's faces large-small and takes the
// first; ties go to the earlier face), their embeddings averaged. perImage holds each source
// image's faces; images without a face are skipped; ok is false when no image has one.
func SourceIdentity(perImage [][]face.Face) (e face.Embedding, ok bool) {
	var picked []face.Embedding
	for _, faces := range perImage {
		best := -1
		for i := range faces {
			if best < 0 || faces[i].Box.W()*faces[i].Box.H() > faces[best].Box.W()*faces[best].Box.H() {
				best = i
			}
		}
		if best >= 0 {
			picked = append(picked, faces[best].Embedding)
		}
	}
	if len(picked) == 0 {
		return e, false
	}
	return AverageEmbeddings(picked), true
}
