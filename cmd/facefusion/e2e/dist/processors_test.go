package dist

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// Every processor combination gives the same frames on 2 ranks as on 1, and batched model
// runs give the same frames as batch 1. (The classic swapper alone across ranks is
// TestDistSwapMatchesOneRank's.) Each model and option runs across ranks in one combination:
// codeformer with inswapper (formerly an enhancer-only run: a run without a source shares no
// source analysis, as every pass-through across ranks does), gpen_bfr_256 with simswap
// (formerly with the classic swapper, whose chaining into an enhancer the other two
// swapper+enhancer combinations run too), expression_restorer after hyperswap (its
// originals kept per worker, whatever the rank or batch), face_editor after hyperswap on 3
// ranks; batch 1 against batch 3 for each model is also
// internal/models/adapters' (TestSwapperBatchEqualsSingle, TestEnhancerBatchEqualsSingle). 6 frames in chunks of 4 over 2 ranks (3 frames each, one
// batch of 3): rank 1 sends rank 0 frame 3 of chunk 0 and encodes chunk 1, so the processors'
// frames cross ranks inside a chunk, and each rank's landmark window is fed by halo frames.
// The reference is 1 rank started alone (as a user runs it), not under mpirun, in one chunk of
// 6: the processes each run starts (an encoder a chunk), not the frames, are what this test
// costs, and a rank's frames do not depend on where its chunks are cut (TestDistSwapMatchesOneRank).
func TestProcessorCombinationsAcrossRanks(t *testing.T) {
	t.Parallel() // two at a time, after the rest: see main_test.go
	dir := clitest.FixtureModels(t)
	work := t.TempDir()
	clip := filepath.Join(work, "clip.mp4")
	clitest.FaceClip(t, clip, 320, 240, 6, "25")
	in := clitest.FrameHashes(t, clip)
	src := testenv.Sample(t, "grace_hopper.png")
	combos := map[string][]string{
		"inswapper+codeformer": {"--processors", "face_swapper", "face_enhancer", "--face-swapper-model", "inswapper_128", "--face-enhancer-model", "codeformer"},
		"hyperswap+masks+gfp":  {"--processors", "face_swapper", "face_enhancer", "--face-swapper-model", "hyperswap_1a_256", "--face-mask-types", "box", "occlusion", "region", "--face-landmarker-model", "2dfan4"},
		"hyperswap+expression": {"--processors", "face_swapper", "expression_restorer", "--face-swapper-model", "hyperswap_1a_256", "--expression-restorer-factor", "100", "--expression-restorer-areas", "lower-face"},
		// face_editor after the swapper on 3 ranks, its six LivePortrait files shared by the
		// workers: sliders of both signs, both retargeters and the head.
		"hyperswap+editor@3": {"--processors", "face_swapper", "face_editor", "--face-swapper-model", "hyperswap_1a_256",
			"--face-editor-mouth-smile", "1.0", "--face-editor-eye-open-ratio", "-0.5", "--face-editor-lip-open-ratio", "0.75", "--face-editor-head-yaw", "-0.4"},
		"fp16+many+scrfd": {"--processors", "face_swapper", "--face-swapper-model", "inswapper_128_fp16", "--face-selector-mode", "many", "--face-detector-model", "scrfd"},
		// deep_swapper's batched model (no morph input) before fran, one face a run.
		"deep+age@3": {"--processors", "deep_swapper", "age_modifier", "--deep-swapper-model", "druuzil/christian_bale_320", "--age-modifier-direction", "60",
			"--face-detector-model", "scrfd", "--face-selector-mode", "many"},
		"simswap+pixel-boost+gpen": {"--processors", "face_swapper", "face_enhancer", "--face-swapper-model", "simswap_256", "--face-swapper-pixel-boost", "512x512", "--face-detector-model", "yolo_face",
			"--face-enhancer-model", "gpen_bfr_256"},
		// The whole-frame processors, alone and after the swapper, on 3 ranks (2 frames each).
		"colorizer@3":           {"--processors", "frame_colorizer", "--frame-colorizer-model", "deoldify", "--frame-colorizer-size", "192x192"},
		"inswapper+colorizer@3": {"--processors", "face_swapper", "frame_colorizer", "--face-swapper-model", "inswapper_128", "--frame-colorizer-model", "ddcolor"},
		"colorizer+remover@3": {"--processors", "frame_colorizer", "background_remover", "--frame-colorizer-model", "ddcolor_artistic",
			"--background-remover-model", "u2net_cloth", "--background-remover-fill-color", "0", "255", "0", "200", "--background-remover-despill-color", "0", "255", "0", "90"},
		// frame_enhancer's tiles batched by 3 against 1, its ×4 frames (the encoder's input)
		// sent between ranks and scaled to the output's ×2.
		"frame-enhancer+inswapper@3": {"--processors", "frame_enhancer", "face_swapper", "--face-swapper-model", "inswapper_128",
			"--frame-enhancer-model", "real_web_photo_x4", "--output-video-scale", "2"},
	}
	for name, extra := range combos {
		ranks := 2
		if strings.HasSuffix(name, "@3") {
			ranks = 3
		}
		t.Run(name, func(t *testing.T) {
			base := append([]string{"run", "-s", src, "-t", clip, "--models-dir", dir, "--output-video-encoder", "ffv1"}, extra...)
			one := filepath.Join(work, name+"-1.mkv")
			r := clitest.Run(t, append(base, "-o", one, "--chunk-frames", "6")...)
			if r.Code != 0 {
				t.Fatalf("1 rank: exit %d: %s", r.Code, r.Stderr)
			}
			two := filepath.Join(work, name+"-n.mkv")
			r = clitest.Mpirun(t, clitest.HangGuard(t), ranks, append(base, "-o", two, "--chunk-frames", "4", "--execution-batch-size", "3")...)
			if r.Code != 0 {
				t.Fatalf("%d ranks: exit %d: %s", ranks, r.Code, r.Stderr)
			}
			a, b := clitest.FrameHashes(t, one), clitest.FrameHashes(t, two)
			if len(a) != 6 || len(b) != 6 {
				t.Fatalf("%d and %d frames, want 6", len(a), len(b))
			}
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("frame %d differs between 1 rank (batch 1) and %d ranks (batch 3)", i, ranks)
				}
			}
			if in[5] == a[5] {
				t.Errorf("frame 5 is unchanged: the processors did nothing")
			}
		})
	}
}
