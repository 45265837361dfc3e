// Package face holds what the pipeline knows about one face: the detector's box and keypoints,
// the 68 landmarks, and the fixed 68-point topology (5-point reduction, hull).
package face

import (
	"image"
	"math"

	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// Detection is one face found by a detector, in frame pixel coordinates.
type Detection struct {
	Box   geom.Rect
	Score float64
	// Keypoints of BlazeFace: right eye, left eye, nose, mouth, right ear, left ear
	// (the subject's right and left, i.e. image left and right for a frontal face).
	Keypoints [6]geom.Pt
	// Five are FaceFusion's five points as the detector found them: left eye, right eye (image
	// left and right), nose tip, left and right mouth corner. BlazeFace has no mouth corners;
	// it leaves Five zero and the landmarks supply them.
	Five [5]geom.Pt
}

// Landmarks68 are the iBUG 300-W 68 points: jaw 0–16, brows 17–26, nose 27–35,
// eyes 36–47, mouth 48–67.
type Landmarks68 [68]geom.Pt

// Five reduces 68 landmarks to FaceFusion's 5 points: left eye, right eye (image left/right),
// nose tip, left and right mouth corner.
func (l *Landmarks68) Five() [5]geom.Pt {
	return [5]geom.Pt{geom.Mean(l[36:42]), geom.Mean(l[42:48]), l[30], l[48], l[54]}
}

// Angle is FaceFusion's estimate_face_angle: the direction from jaw point 0 to jaw point 16,
// snapped to the nearest of 0, 90, 180, 270 degrees. FaceFusion applies it to the 68 points
// that its fan_68_5 model infers from the detector's five ('68/5').
func (l *Landmarks68) Angle() int {
	theta := math.Mod(math.Atan2(l[16].Y-l[0].Y, l[16].X-l[0].X)*180/math.Pi+360, 360)
	best, bestD := 0, math.Inf(1)
	for i, a := range [5]float64{0, 90, 180, 270, 360} {
		if d := math.Abs(a - theta); d < bestD {
			best, bestD = i, d
		}
	}
	return (best * 90) % 360
}

// Face is one face as the pipeline knows it: the detection, the 68 landmarks (with the
// landmarker's score: 1 for dlib, 2dfan4's own), and the identity embedding when a recognizer
// ran. Five (in Detection) are the points FaceFusion warps by ('5/68', see facemodel.WarpFive).
type Face struct {
	Detection
	Landmarks     Landmarks68
	LandmarkScore float64
	Embedding     Embedding
	// DetectorFive are the detector's own five points (FaceFusion's '5'), kept when Five
	// becomes the points the crops are warped by; zero from BlazeFace, whose own points are
	// Keypoints. face_debugger's face-landmark-5 draws them.
	DetectorFive [5]geom.Pt
	// Refill marks a face the face tracker made for a frame it was not found in, from its
	// faces either side (FaceFusion's origin 'refill'): face_debugger draws it in orange.
	Refill bool
	// Landmarks68From5 are the 68 points FaceFusion's fan_68_5 infers from DetectorFive (its
	// '68/5'), and Angle the face's turn FaceFusion estimates from them: 0, 90, 180 or 270
	// degrees, the turn its landmarkers undo. Both stay zero with the embedded default.
	Landmarks68From5 Landmarks68
	Angle            int
	// Tone is the face's colour in its frame as the target gave it (on the analysis' box,
	// then on the window's before the processors run), and SteadyTone the same over the time
	// window (temporal.Smoother): the classic swap matches the source to the steady one, so
	// that a codec's keyframe does not make the swapped face's colour jump. Both zero
	// (Weight 0) where unmeasured.
	Tone, SteadyTone Tone
	// Class is FaceFusion's classification of the face (fairface), set where a face selector
	// filter needs it; zero otherwise.
	Class Class
	// Cover is what the classic swap found in front of the face in its frame as the target
	// gave it (nil: nothing; Looked says whether it looked), and Votes the window's covers of
	// the face, which the swap takes a vote over so that what covers the face does not come
	// and go from frame to frame (temporal.Smoother sets them; nil: no vote).
	Cover  *Cover
	Looked bool
	Votes  *Votes
}

// Votes are a face's covers in the Frames frames around it that were looked at (the frames
// where nothing covered it left out).
type Votes struct {
	Covers []*Cover
	Frames int
}

// Cover is a mask of what covers a face in one frame, on the frame's pixel grid (Pix[y·W+x]
// for the pixel Rect.Min+(x, y), 1 covered), with the landmarks it was found on: a vote in
// another frame maps it there by the face's motion between the two. Shade, where not nil, is
// 1 (on the same grid) on the face's skin in a shadow cast across it, which is no cover but
// darker by ShadeFactor (per channel) than the lit skin, for the swap to carry.
type Cover struct {
	Rect        image.Rectangle
	Pix         []uint8
	Landmarks   Landmarks68
	Shade       []uint8
	ShadeFactor [3]float32
}

// Tone is the mask-weighted mean and standard deviation of a face's Y, Cb and Cr (BT.601
// full range, Cb and Cr centred on 0; raster.ColourStats) and the mask's weight.
type Tone struct {
	Mean, Std [3]float64
	Weight    float64
}

// Class is what FaceFusion's face classifier tells of a face: "male" or "female", one of its
// races (white, black, latino, asian, indian, arabic), and the age range [Age[0], Age[1]) as
// Python's range(start, stop) (FaceFusion's ranges leave gaps: 0-1, 3-8, 10-18, …).
type Class struct {
	Gender, Race string
	Age          [2]int
}

// EmbeddingLen is the width of an identity embedding (the recognizer's output).
const EmbeddingLen = 512

// Embedding is a face's identity as FaceFusion keeps it: the recognizer's raw output and the
// same scaled to unit length. Swappers use one or the other (see facemodel.Swapper).
type Embedding struct {
	Raw, Norm [EmbeddingLen]float32
}
