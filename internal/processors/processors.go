// Package processors is what FaceFusion's processors (processors/modules/NAME) have in common:
// the interfaces a worker runs them through, what it hands them, and the registry of their names.
package processors

import (
	"time"

	"github.com/facefusion-hpc/facefusion/internal/audio"
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
// face_debugger, age_modifier, deep_swapper, expression_restorer, face_editor, …): it
// changes b.Faces' frames in place, every face of the batch in one call so that its model
// batches them.
type FaceProcessor interface {
	Processor
	ProcessFaces(b *Batch) error
}

// FrameProcessor is a processor of whole frames (frame_enhancer; later frame_colorizer,
// background_remover): it changes b.Frames, whether or not a face was selected in them. One that
// changes a frame's size (frame_enhancer) puts a new image in its place in b.Frames and in the
// Frame of b.Faces that were on it; the faces' points stay in the old frame's pixels.
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

	// Alphas[k] is Frames[k]'s alpha plane as the processors leave it (FaceFusion's
	// temp_vision_mask: background_remover's mask), nil or short where none was made (opaque).
	// A processor that masks takes the minimum with what is there, as FaceFusion does; the
	// worker empties it for each batch.
	Alphas []*raster.Alpha
	// Out, where set, are buffers for a processor that replaces Frames[k] with a larger frame
	// (frame_enhancer) to write frame k into when it has the new size and is not Frames[k]
	// itself; otherwise the processor makes one. The stream's frames in flight keep theirs.
	Out []*raster.Image
	// Originals[k] is Frames[k] as the target gave it, before any processor ran (FaceFusion's
	// target_vision_frame, which expression_restorer reads the original expression from):
	// filled only when a step reads it (OriginalReader), and then only for frames with a
	// selected face; nil otherwise.
	Originals []*raster.Image
}

// FaceAnalyser is a processor that looks at each face of a time window's frames (halo frames
// included) once the window has smoothed it, in its frame as the target gave it, and notes on
// the face what it found there for the window to gather: the classic swap's covers.
type FaceAnalyser interface {
	AnalyseFace(frame *raster.Image, f *face.Face)
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

// VoiceFrames are the source audio's features by output frame (audio.Track): Frame fills w
// with frame i's window and reports whether it has one (FaceFusion's empty window when not).
type VoiceFrames interface {
	Frame(i int, w *audio.Window) bool
}

// Stage is the stage of the worker's stats a processor's time and faces count in.
type Stage int

// The stages processors count in.
const (
	StageSwap    Stage = iota // the face swapper's time and faces swapped
	StageEnhance              // the face enhancer's time and faces enhanced
	// StageFrameEnhance is the frame enhancer's time and frames upscaled.
	StageFrameEnhance
	StageAge        // the age modifier's time and faces it changed
	StageDeepSwap   // the deep swapper's time and faces it swapped
	StageLipSync    // the lip syncer's time and faces synced
	StageExpression // the expression restorer's time and faces restored
	StageFaceEditor // the face editor's time and faces edited
)

// Stats is where processors report their work: the worker's stage times and face counts.
type Stats interface {
	// Done counts faces faces in stage and the time from start to now.
	Done(stage Stage, start time.Time, faces int)
}
