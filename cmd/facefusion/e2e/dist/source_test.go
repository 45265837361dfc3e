package dist

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// What rank 0 reads from the sources reaches the other ranks: uniface_256's source crop (the
// first source image, faceless or not, and the first face's five points) and, for face_selector_gender auto, the
// source face's gender, which decides whether the enhancer touches the clip's face at all. 2
// ranks in chunks of 2 give 1 rank's frames; rank 1's frames are those it analyses itself.
func TestSourceAcrossRanks(t *testing.T) {
	dir := clitest.FixtureModels(t)
	work := t.TempDir()
	clip := filepath.Join(work, "clip.mp4")
	clitest.FaceClip(t, clip, 320, 240, 4, "25")
	in := clitest.FrameHashes(t, clip)
	run := func(name string, ranks int, src []string, extra ...string) []string {
		t.Helper()
		out := filepath.Join(work, name+"-"+string(rune('0'+ranks))+".mkv")
		args := append(append([]string{"run", "-s"}, src...), "-t", clip, "-o", out, "--models-dir", dir, "--output-video-encoder", "ffv1")
		args = append(args, extra...)
		var r clitest.Result
		if ranks == 1 {
			r = clitest.Run(t, append(args, "--chunk-frames", "4")...)
		} else {
			r = clitest.Mpirun(t, clitest.HangGuard(t), ranks, append(args, "--chunk-frames", "2")...)
		}
		if r.Code != 0 {
			t.Fatalf("%s, %d rank(s): exit %d: %s", name, ranks, r.Code, r.Stderr)
		}
		return clitest.FrameHashes(t, out)
	}
	changed := func(h []string) int {
		n := 0
		for i := range h {
			if i < len(in) && h[i] != in[i] {
				n++
			}
		}
		return n
	}
	got := map[string][]string{}
	grace, camera := testenv.Sample(t, "grace_hopper.png"), testenv.Sample(t, "camera.png")
	auto := []string{"--processors", "face_enhancer", "--face-detector-model", "scrfd", "--face-selector-mode", "many", "--face-selector-gender", "auto"}
	for _, c := range []struct {
		name string
		src  []string
		args []string
		some bool // the selector keeps the face in some frames, not all
	}{
		{"uniface", []string{grace}, []string{"--face-swapper-model", "uniface_256"}, false},
		// FaceFusion's crop comes from the first source image even when its face is another's.
		{"uniface-faceless-first", []string{testenv.Sample(t, "coffee.png"), grace}, []string{"--face-swapper-model", "uniface_256"}, false},
		{"auto-grace", []string{grace}, auto, true},
		{"auto-camera", []string{camera}, auto, true},
	} {
		one, two := run(c.name, 1, c.src, c.args...), run(c.name, 2, c.src, c.args...)
		got[c.name] = one
		if len(one) != len(in) || !slices.Equal(one, two) {
			t.Errorf("%s: 2 ranks' frames differ from 1 rank's", c.name)
		}
		if n := changed(one); c.some && (n == 0 || n == len(in)) || !c.some && n != len(in) {
			t.Errorf("%s: %d of %d frames changed: want %s", c.name, n, len(in), map[bool]string{true: "some, not all (auto filtering)", false: "all"}[c.some])
		}
	}
	if slices.Equal(got["uniface"], got["uniface-faceless-first"]) {
		t.Errorf("uniface_256 with coffee.png first: the frames of grace_hopper.png alone, want the crop from coffee.png (FaceFusion's first source image)")
	}
}
