// Package processors is what FaceFusion's processors (processors/modules/NAME) have in common:
// the interfaces a worker runs them through, what it hands them, and the registry of their names.
package processors

import (
	"time"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Processor is one of FaceFusion's processors opened for one worker. It is also a
// FaceProcessor or a FrameProcessor, which says what of a batch it is given.
type Processor interface {
	// ChangesFaces says whether the processor changes the faces' pixels: the identity measure
	// reads the faces after the last one that does (face_debugger only draws over them).
	ChangesFaces() bool
	// Close lets the processor's sessions go.
	Close() error
}

// FaceProcessor is a processor of the selected faces of a batch (face_swapper, face_enhancer,
// face_debugger; later age_modifier, expression_restorer, face_editor, deep_swapper): it
// changes b.Faces' frames in place, every face of the batch in one call so that its model
// batches them.
type FaceProcessor interface {
	Processor
	ProcessFaces(b *Batch) error
}

// FrameProcessor is a processor of whole frames (later frame_enhancer, frame_colorizer,
// background_remover): it changes b.Frames in place, whether or not a face was selected in them.
type FrameProcessor interface {
	Processor
	ProcessFrames(b *Batch) error
}

// Run runs p on b through the interface p has.
func Run(p Processor, b *Batch) error {
	switch p := p.(type) {
	case FaceProcessor:
		return p.ProcessFaces(b)
	case FrameProcessor:
		return p.ProcessFrames(b)
	}
	return nil
}

// Batch is what a worker hands its processors: consecutive frames of the target and the faces
// its selector picked in them. Processors run one after another on the same Batch, each seeing
// the frames as the previous one left them.
type Batch struct {
	Frames []*raster.Image
	// Indices[k] is Frames[k]'s index from the first frame of the output (0 for an image, and
	// where the worker was not told). A processor that reads the target's audio (lip_syncer)
	// finds frame k's slice of sound at (trim_frame_start + Indices[k]) / fps.
	Indices []int
	// Faces are the selected faces of every frame, in frame order.
	Faces []Face
	// Originals[k] is Frames[k] as the target gave it, before any processor ran (FaceFusion's
	// target_vision_frame, which expression_restorer reads the original expression from):
	// filled only when a step reads it (OriginalReader), and then only for frames with a
	// selected face; nil otherwise.
	Originals []*raster.Image
}

// OriginalReader is a processor that reads Batch.Originals.
type OriginalReader interface {
	ReadsOriginals() bool
}

// Face is one selected face of a Batch.
type Face struct {
	Frame *raster.Image // the frame it is in, one of Batch.Frames
	At    int           // its frame's place in Batch.Frames
	// Face is the analyser's face (box, points, embedding where the job computes them);
	// processors read it and never change it.
	Face *face.Face
}

// Stage is the stage of the worker's stats a processor's time and faces count in.
type Stage int

// The stages processors count in.
const (
	StageSwap       Stage = iota // the face swapper's time and faces swapped
	StageEnhance                 // the face enhancer's time and faces enhanced
	StageExpression              // the expression restorer's time and faces restored
)

// Stats is where processors report their work: the worker's stage times and face counts.
type Stats interface {
	// Done counts faces faces in stage and the time from start to now.
	Done(stage Stage, start time.Time, faces int)
}
