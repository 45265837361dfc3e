package lustre

import "math"

// IdentitySums are a rank's share of the identity measure (the run report's identity: how much
// the swapped faces look like the source), and a chunk's record of it in the manifest: the
// similarities summed, so that rank 0 adds the ranks (or the chunks) up before it divides
// (report.Means). Each similarity is added as a fixed-point integer (IdentityFixed: billionths),
// so the sums are exact and the same in whatever order the faces and ranks are added.
type IdentitySums struct {
	Recognizer string `json:"recognizer"`
	Every      int    `json:"every"`
	Faces      int    `json:"faces"`
	After      int64  `json:"after_sum_e9"`
	Before     int64  `json:"before_sum_e9"`
	ToTarget   int64  `json:"to_target_sum_e9"`
}

// IdentityScale is the fixed point of IdentitySums: a similarity of 1 adds this much.
const IdentityScale = 1e9

// IdentityFixed is a similarity in IdentitySums' fixed point.
func IdentityFixed(similarity float64) int64 { return int64(math.Round(similarity * IdentityScale)) }

// Add adds o's faces to s (a zero s takes o's recognizer).
func (s *IdentitySums) Add(o IdentitySums) {
	if s.Recognizer == "" {
		s.Recognizer, s.Every = o.Recognizer, o.Every
	}
	s.Faces += o.Faces
	s.After += o.After
	s.Before += o.Before
	s.ToTarget += o.ToTarget
}
