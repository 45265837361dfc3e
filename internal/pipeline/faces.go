package pipeline

import (
	"fmt"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// FaceReport is the log line of a finished job in which faces frames of frames had a face a
// face processor worked on (swapped, enhanced, aged, lip-synced or drawn): the count, or for none a warning, since the output
// is then the target re-encoded and a job that exits 0 must not hide that. With
// fail_if_no_face, none is an input error instead, and the caller writes no output. "" when no
// processor works on faces.
func FaceReport(cfg job.Config, faces, frames int) (string, error) {
	if !cfg.FindsFaces() {
		return "", nil
	}
	verb := "swapped"
	switch {
	case cfg.Swaps():
	case cfg.DeepSwaps():
		verb = "swapped by deep_swapper"
	case cfg.Enhances():
		verb = "enhanced"
	case cfg.ModifiesAge():
		verb = "changed by age_modifier"
	case cfg.LipSyncs():
		verb = "lip-synced"
	case cfg.RestoresExpression():
		verb = "given its expression back"
	case cfg.EditsFaces():
		verb = "edited by face_editor"
	default:
		verb = "drawn by face_debugger"
	}
	if faces > 0 {
		return fmt.Sprintf("a face was %s in %d of %d frames", verb, faces, frames), nil
	}
	where := fmt.Sprintf("any of the %d frames of %s", frames, cfg.TargetPath)
	if video.IsImagePath(cfg.TargetPath) {
		where = "the image " + cfg.TargetPath
	}
	found, fix := "no face was found", "lower --face-detector-score or check the target"
	if cfg.FaceSelectorMode == "reference" {
		found, fix = "no face like the reference face was found", "raise --reference-face-distance, lower --face-detector-score, or check --reference-frame-number"
	}
	found = fmt.Sprintf("%s in %s (detector score ≥ %g)", found, where, cfg.FaceDetectorScore)
	if cfg.FailIfNoFace {
		return "", fault.AsInput(fmt.Errorf("%s: nothing was written to the output path (--fail-if-no-face); %s", found, fix))
	}
	return fmt.Sprintf("%s%s: the output is the target unchanged; %s", FaceWarning, found, fix), nil
}

// FaceWarning starts FaceReport's line when no face was found: the log prints it as a warning.
const FaceWarning = "warning: "
