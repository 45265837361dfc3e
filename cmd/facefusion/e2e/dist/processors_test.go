package dist

import (
	"path/filepath"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// Every processor combination gives the same frames on 3 ranks as on 1, and batched model
// runs give the same frames as batch 1. (The classic swapper alone across ranks is
// TestDistSwapMatchesOneRank's.)
func TestProcessorCombinationsAcrossRanks(t *testing.T) {
	t.Parallel() // two at a time, after the rest: see main_test.go
	dir := clitest.FixtureModels(t)
	work := t.TempDir()
	clip := filepath.Join(work, "clip.mp4")
	clitest.FaceClip(t, clip, 320, 240, 12, "25")
	src := testenv.Sample(t, "grace_hopper.png")
	combos := map[string][]string{
		"inswapper":           {"--processors", "face_swapper", "--face-swapper-model", "inswapper_128"},
		"enhancer":            {"--processors", "face_enhancer", "--face-enhancer-model", "codeformer"},
		"classic+enhancer":    {"--processors", "face_swapper", "face_enhancer", "--face-enhancer-model", "gpen_bfr_256"},
		"hyperswap+masks+gfp": {"--processors", "face_swapper", "face_enhancer", "--face-swapper-model", "hyperswap_1a_256", "--face-mask-types", "box", "occlusion", "region", "--face-landmarker-model", "2dfan4"},
		"fp16+many+scrfd":     {"--processors", "face_swapper", "--face-swapper-model", "inswapper_128_fp16", "--face-selector-mode", "many", "--face-detector-model", "scrfd"},
		"simswap+pixel-boost": {"--processors", "face_swapper", "--face-swapper-model", "simswap_256", "--face-swapper-pixel-boost", "512x512", "--face-detector-model", "yolo_face"},
	}
	for name, extra := range combos {
		t.Run(name, func(t *testing.T) {
			base := append([]string{"run", "-s", src, "-t", clip, "--models-dir", dir, "--output-video-encoder", "ffv1", "--chunk-frames", "4"}, extra...)
			one := filepath.Join(work, name+"-1.mkv")
			r := clitest.Mpirun(t, clitest.HangGuard(t), 1, append(base, "-o", one)...)
			if r.Code != 0 {
				t.Fatalf("1 rank: exit %d: %s", r.Code, r.Stderr)
			}
			three := filepath.Join(work, name+"-3.mkv")
			r = clitest.Mpirun(t, clitest.HangGuard(t), 3, append(base, "-o", three, "--execution-batch-size", "3")...)
			if r.Code != 0 {
				t.Fatalf("3 ranks: exit %d: %s", r.Code, r.Stderr)
			}
			a, b := clitest.FrameHashes(t, one), clitest.FrameHashes(t, three)
			if len(a) != 12 || len(b) != 12 {
				t.Fatalf("%d and %d frames, want 12", len(a), len(b))
			}
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("frame %d differs between 1 rank (batch 1) and 3 ranks (batch 3)", i)
				}
			}
			if in := clitest.FrameHashes(t, clip); in[5] == a[5] {
				t.Errorf("frame 5 is unchanged: the processors did nothing")
			}
		})
	}
}
