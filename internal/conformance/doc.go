// Package conformance proves, in `make test`, that facefusion gives FaceFusion 3.8.1's faces and
// frames: every case of cases/*.toml runs through FaceFusion's own, unmodified code (the oracle
// in ../shared/reference, run by oracle/driver.py in two long-lived Python processes that share
// the cases) and through our binary, two cases at a time beside them, with the same flags, inputs
// and model files, and the outputs are compared with the tolerances. The inputs are made
// and the outputs compared on every core; the log says each side's wall and CPU seconds, and the
// inputs' and comparisons' wall seconds. The figures of every case go into docs/conformance.md
// (go test ./internal/conformance -update rewrites its table; a normal run fails when it is
// stale).
//
// # Case files
//
// cases/*.toml hold [[case]] tables; each helper keeps its own file (cases/<area>.toml). Keys:
//
//	name       unique over every file, kebab-case (a-z, 0-9, -)
//	covers     FaceFusion's option keys this case proves, as key=value for a choice
//	           (face_detector_model=scrfd) or the key alone for a number (face_mask_blur);
//	           each key must be one of FaceFusion's (see coverage.go)
//	compare    faces: the faces found and selected, box, scores, points, angle, classes;
//	           image: the output image of an image target;
//	           video: the output frames of a short lossless clip made from target
//	target     a file in .cache/samples (an image; a video case pans it into a clip)
//	transform  optional, applied to the target before both sides: mirror, rotate90,
//	           rotate180, rotate270 (counter-clockwise), dark (every value ×0.25, rounded
//	           down), pair (the image at 5/8 beside itself at 1/2, bottom-aligned on black:
//	           two faces of different size, place and score), twin (the image beside its
//	           mirror: a frame the detectors shrink), crop:x,y,w,h or jpeg:Q (image cases:
//	           the image written as a 4:2:0 JPEG by ffmpeg at -q:v Q, 2 to 31, a .jpg target)
//	source     a file in .cache/samples; required by image and video cases; a faces case
//	           may give one (the selector's auto reads the source's face)
//	extra_sources
//	           optional, further files of .cache/samples given after source in -s
//	source_transform
//	           optional, applied to the source before both sides, as transform is
//	args       FaceFusion flags, given identically to FaceFusion and to our binary (the
//	           suite gives -s, -t and -o itself: args never holds a path flag)
//	frames     video cases only: the clip's length (default 3, at most 10)
//	gap        video cases only: a frame of the clip (from 0) made black, a face dropping
//	           out for a frame (the tracker's refill)
//	voice      seconds (0 to 10) of a generated voice track, given after the sources in -s:
//	           lip_syncer's source audio (inputs.go's makeVoice)
//	cause      only where a tolerance cannot be met (yet): the cause and the measured number;
//	           the case may then exceed the tolerance, and its figures are still recorded
//
// An unknown key, a duplicate name, an unknown compare or transform, a missing sample or a
// path flag in args is refused with the file and the case named.
//
// # Tolerances
//
// faces: the same count; boxes, scores and five points within 1e-3 px (or score units), 68
// points within 2e-3 px; angle, gender, age range and race equal. image and video: max abs
// difference at most 1 grey level over the whole image and FaceFusion's first face box (video:
// every frame, the same count). PSNR is recorded, not judged.
//
// # Running
//
// The oracle needs Debian's python3 (or $FFREF_PYTHON, as for need.sh and run-facefusion) with
// python3-opencv, python3-scipy, python3-tqdm, python3-psutil and python3-onnx (make test
// installs them), ffmpeg, gcc, the real
// ../shared/models/scrfd_2.5g.onnx and ../shared/reference beside the checkout; a missing piece
// fails the test with what to do. -cases NAME,NAME runs some cases only (the docs check is then
// skipped, and said so); -keep DIR keeps every input, output and diff image in DIR (a new or
// empty folder, which the suite marks, or one it marked before: each run empties its in, out
// and models, so a folder the suite did not make is refused).
package conformance
