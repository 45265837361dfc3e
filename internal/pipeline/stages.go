package pipeline

import (
	"slices"
	"sync/atomic"
	"time"
)

// Stage is one step a frame goes through in a rank's pipeline.
type Stage int

// The stages, in the order a frame meets them. StageNames is the one list of their names (the
// run report's keys and the metrics' stage label).
const (
	StageDecode       Stage = iota // the decoder's read loop: waiting on ffmpeg's pipe for the next frame
	StageDetect                    // the face detector (and, in reference mode, the recognizer's embeddings)
	StageLandmarks                 // the landmarker
	StageSwap                      // the face swapper
	StageEnhance                   // the face enhancer
	StageFrameEnhance              // the frame enhancer (its tiles, model runs and blend)
	StageAge                       // the age modifier
	StageDeepSwap                  // the deep swapper
	StageExpression                // the expression restorer
	StageFaceEditor                // the face editor
	StageLipSync                   // the lip syncer
	StageIdentity                  // the identity measure (its recognizer and landmarker runs)
	StageEncode                    // the encoder's write loop: handing a frame to ffmpeg's pipe
	numStages
)

// StageNames are the stages' names, indexed by Stage.
var StageNames = [numStages]string{"decode", "detect", "landmarks", "swap", "enhance", "frame_enhance", "age_modifier", "deep_swapper", "expression_restorer", "face_editor", "lip_syncer", "identity", "encode"}

// ProcessorStage reports whether stage name is one processor's own (face_swapper's swap to
// lip_syncer's): it runs only where the job names that processor.
func ProcessorStage(name string) bool {
	i := slices.Index(StageNames[:], name)
	return i >= int(StageSwap) && i <= int(StageLipSync)
}

// Stats are a rank's counts and the busy time of each stage, added to by the decoder, every
// worker and the encoder at once: atomics, no lock in the frame path. Stages run in goroutines
// that overlap (decode, the workers and encode at the same time, one worker per thread), so the
// seconds of the stages add up to more than the wall time: each says how long that stage was
// busy, summed over the goroutines that ran it.
type Stats struct {
	busy  [numStages]atomic.Int64 // nanoseconds
	faces [numFaceCounts]atomic.Int64
}

// faceCount names a count of faces.
type faceCount int

const (
	facesFound faceCount = iota
	facesSwapped
	facesEnhanced
	facesAgeModified
	facesDeepSwapped
	facesExpressionRestored
	facesEdited
	facesLipSynced
	numFaceCounts
	noFaces faceCount = -1 // a stage that counts no faces
)

// since adds the time from start to now to stage st. A nil Stats counts nothing.
func (s *Stats) since(st Stage, start time.Time) {
	if s != nil {
		s.busy[st].Add(int64(time.Since(start)))
	}
}

// add adds k faces to count c. A nil Stats counts nothing.
func (s *Stats) add(c faceCount, k int) {
	if s != nil && k != 0 {
		s.faces[c].Add(int64(k))
	}
}

// StatsSnapshot is what Stats held when it was read.
type StatsSnapshot struct {
	Seconds       map[string]float64 // by StageNames
	FacesFound    int                // faces the detector found (above the score)
	FacesSwapped  int                // faces the swapper changed
	FacesEnhanced int                // faces the enhancer changed
	// FacesAgeModified are the faces the age modifier changed.
	FacesAgeModified int
	// FacesDeepSwapped are the faces the deep swapper changed.
	FacesDeepSwapped int
	// FacesExpressionRestored are the faces expression_restorer changed.
	FacesExpressionRestored int
	// FacesEdited are the faces face_editor changed.
	FacesEdited int
	// FacesLipSynced are the faces the lip syncer synced.
	FacesLipSynced int
}

// Snapshot reads the counts; call it when no frame is in flight for exact totals.
func (s *Stats) Snapshot() StatsSnapshot {
	r := StatsSnapshot{Seconds: make(map[string]float64, numStages)}
	for i, name := range StageNames {
		r.Seconds[name] = time.Duration(s.busy[i].Load()).Seconds()
	}
	r.FacesFound, r.FacesSwapped, r.FacesEnhanced = int(s.faces[facesFound].Load()), int(s.faces[facesSwapped].Load()), int(s.faces[facesEnhanced].Load())
	r.FacesAgeModified = int(s.faces[facesAgeModified].Load())
	r.FacesDeepSwapped = int(s.faces[facesDeepSwapped].Load())
	r.FacesExpressionRestored = int(s.faces[facesExpressionRestored].Load())
	r.FacesEdited = int(s.faces[facesEdited].Load())
	r.FacesLipSynced = int(s.faces[facesLipSynced].Load())
	return r
}

// timedSource times a FrameSource's reads as the decode stage.
type timedSource struct {
	src FrameSource
	st  *Stats
}

func (t timedSource) Next(buf []byte) error {
	start := time.Now()
	err := t.src.Next(buf)
	t.st.since(StageDecode, start)
	return err
}
