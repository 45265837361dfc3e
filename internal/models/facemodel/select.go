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
	// The filters after ordering (--face-selector-gender, -race: "" none, "auto" the source
	// face's; --face-selector-age-start, -end: none when both are 0). They read Face.Class.
	Gender, Race     string
	AgeStart, AgeEnd int
	// Source is the class of the largest source face, which auto stands for (nil: none, and
	// auto filters nothing).
	Source *face.Class
}

// Classifies reports whether a filter reads the faces' classes: only then is the classifier run.
func (s Selector) Classifies() bool {
	return s.Gender != "" || s.Race != "" || s.AgeStart != 0 || s.AgeEnd != 0
}

// Keeps is FaceFusion's filter_faces_by_gender, _by_race and _by_age for one face: the gender
// and race (auto resolved to the source face's; a value that is not a gender or race, such as
// an unresolved auto, filters nothing) must match, and the face's age range must share a year
// with range(AgeStart, AgeEnd).
func (s Selector) Keeps(f *face.Face) bool {
	gender, race := s.Gender, s.Race
	if s.Source != nil {
		if gender == "auto" {
			gender = s.Source.Gender
		}
		if race == "auto" {
			race = s.Source.Race
		}
	}
	if slices.Contains(Genders, gender) && f.Class.Gender != gender {
		return false
	}
	if slices.Contains(Races, race) && f.Class.Race != race {
		return false
	}
	if s.AgeStart != 0 || s.AgeEnd != 0 {
		if max(f.Class.Age[0], s.AgeStart) >= min(f.Class.Age[1], s.AgeEnd) {
			return false
		}
	}
	return true
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
// sorts them by Order, filters them (Keeps) and takes the one at ReferencePosition (clamped to
// the last). faces is reordered in place, the kept first; ok is false when none is kept.
func (s Selector) Reference(faces []face.Face) (ref *face.Face, ok bool) {
	if len(faces) == 0 {
		return nil, false
	}
	SortFaces(faces, s.Order)
	kept := 0
	for i := range faces {
		if s.Keeps(&faces[i]) {
			faces[kept], faces[i] = faces[i], faces[kept]
			kept++
		}
	}
	if kept == 0 {
		return nil, false
	}
	return &faces[min(max(s.ReferencePosition, 0), kept-1)], true
}

// Select appends to dst the indices into targets of the faces to process, as FaceFusion's
// select_faces: many: all that the filters keep (Keeps), after sorting targets in place by
// Order; one: the first of those;
// reference: every target closer than ReferenceDistance to ref, in the targets' own order
// (targets are not sorted; none when ref is nil).
func (s Selector) Select(dst []int, targets []face.Face, ref *face.Embedding) []int {
	switch s.Mode {
	case SelectMany, SelectOne:
		SortFaces(targets, s.Order)
		for i := range targets {
			if !s.Keeps(&targets[i]) {
				continue
			}
			dst = append(dst, i)
			if s.Mode == SelectOne {
				break
			}
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
