package pipeline

import (
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// passWorker leaves frames untouched (processors = none).
type passWorker struct{ st *Stats }

func (passWorker) Process(*raster.Image) error { return nil }
func (w passWorker) stats() *Stats             { return w.st }

// statsOf is the Stats the workers (all made by one Models) count into; nil when they count
// nowhere.
func statsOf(ws []Worker) *Stats {
	for _, w := range ws {
		if s, ok := w.(interface{ stats() *Stats }); ok {
			return s.stats()
		}
	}
	return nil
}

// faceCounter is a worker that counts the frames in which it selected at least one face for
// the processors (swapped or enhanced). A worker serves many chunks: the count only grows.
type faceCounter interface {
	framesWithFaces() int
}

// faceMarker is a worker that says, for frame i of the batch it processed last, whether it
// selected a face in it: Stream carries the answer with the frame to the sink, so that the
// frames with a face are counted per segment, however the frames of segments share a batch.
type faceMarker interface {
	facedIn(i int) bool
}

// identityMarker is a worker that gives, for frame i of the batch it processed last, the
// identity measure's sums of that frame's faces (a zero Recognizer: it measures none): Stream
// carries them with the frame as it carries faceMarker's answer, so that a segment's record holds
// its own frames' measure and a resumed job's measure covers every attempt's frames.
type identityMarker interface {
	identityIn(i int) lustre.IdentitySums
}

// frameIndexed is a worker that is told which frames it processes (the identity measure takes
// frames at fixed positions of the output): the output index of its Stream's first frame, then
// each batch's frame indices in the Stream.
type frameIndexed interface {
	setFirstFrame(first int)
	setIndices(idx []int)
}

// batchMarks are what a worker says of a batch beside its frames (faceMarker, identityMarker)
// and is told before one (frameIndexed): Stream's and StreamWindow's workers each keep one.
type batchMarks struct {
	marker   faceMarker
	idMarker identityMarker
	indexed  frameIndexed
	at       []int // setIndices' argument, reused
}

func marksOf(wk Worker) *batchMarks {
	m := &batchMarks{}
	m.marker, _ = wk.(faceMarker)
	m.idMarker, _ = wk.(identityMarker)
	m.indexed, _ = wk.(frameIndexed)
	return m
}

// number tells a frameIndexed worker the numbers of the batch's frames: each slot's index less
// skip (the halo frames before the written ones).
func (m *batchMarks) number(slots []*slot, skip int) {
	if m.indexed == nil {
		return
	}
	m.at = m.at[:0]
	for _, s := range slots {
		m.at = append(m.at, s.index-skip)
	}
	m.indexed.setIndices(m.at)
}

// mark gives each slot of the batch just processed what the worker says of its frame.
func (m *batchMarks) mark(slots []*slot) {
	for i, s := range slots {
		s.faced = m.marker != nil && m.marker.facedIn(i)
		s.id = lustre.IdentitySums{}
		if m.idMarker != nil {
			s.id = m.idMarker.identityIn(i)
		}
	}
}

// framesWithFaces is the sum of the workers' counts; call it only while no worker runs.
func framesWithFaces(ws []Worker) int {
	n := 0
	for _, w := range ws {
		if fc, ok := w.(faceCounter); ok {
			n += fc.framesWithFaces()
		}
	}
	return n
}
