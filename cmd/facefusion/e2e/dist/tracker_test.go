package dist

import (
	"path/filepath"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// FaceFusion's face tracker gives the same frames on 3 ranks in chunks of 3 as on 1 rank in one
// chunk: a frame's faces come from target_frame_amount frames each side, which the halo frames
// each rank decodes around its run supply across chunk and rank borders. Frame 6 is blanked:
// it has no face of its own, so it is swapped only where the tracker refills it from frames 5
// and 7, and 3 ranks (frames 0–3, 4–7, 8–11) refill it with rank 1 alone holding both.
// Frame 4, first of rank 1, is blanked too: its refill needs frame 3, a halo frame of rank 1.
// Trimmed to start at frame 4, the job still refills it from frame 3, outside the trim range,
// as FaceFusion reads a frame's neighbours from the whole video.
func TestTrackerAcrossRanks(t *testing.T) {
	work := t.TempDir()
	face := filepath.Join(work, "face.mp4")
	clitest.FaceClip(t, face, 320, 240, 12, "25")
	clip := filepath.Join(work, "gap.mkv")
	clitest.FFmpeg(t, "-i", face, "-an", "-vf", "drawbox=x=0:y=0:w=iw:h=ih:color=black:t=fill:enable='eq(n,4)+eq(n,6)'", "-c:v", "ffv1", clip)
	in := clitest.FrameHashes(t, clip)
	src := testenv.Sample(t, "grace_hopper.png")
	base := []string{"run", "-s", src, "-t", clip, "--output-video-encoder", "ffv1", "--face-tracker-score", "0.3", "--target-frame-amount", "2"}
	one := filepath.Join(work, "one.mkv")
	if r := clitest.Run(t, append(base, "-o", one, "--chunk-frames", "12")...); r.Code != 0 {
		t.Fatalf("1 rank: exit %d: %s", r.Code, r.Stderr)
	}
	three := filepath.Join(work, "three.mkv")
	if r := clitest.Mpirun(t, clitest.HangGuard(t), 3, append(base, "-o", three, "--chunk-frames", "3")...); r.Code != 0 {
		t.Fatalf("3 ranks: exit %d: %s", r.Code, r.Stderr)
	}
	a, b := clitest.FrameHashes(t, one), clitest.FrameHashes(t, three)
	if len(a) != 12 || len(b) != 12 {
		t.Fatalf("%d and %d frames, want 12", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("frame %d differs between 1 rank in one chunk and 3 ranks in chunks of 3", i)
		}
	}
	for _, i := range []int{4, 6} {
		if a[i] == in[i] {
			t.Errorf("blank frame %d is unchanged: the tracker did not refill its face", i)
		}
	}
	trim := filepath.Join(work, "trim.mkv")
	if r := clitest.Run(t, append(base, "-o", trim, "--trim-frame-start", "4", "--trim-frame-end", "6")...); r.Code != 0 {
		t.Fatalf("trimmed: exit %d: %s", r.Code, r.Stderr)
	}
	if c := clitest.FrameHashes(t, trim); len(c) != 2 || c[0] != a[4] || c[1] != a[5] {
		t.Errorf("trimmed to frames 4 and 5: %v, want the untrimmed run's %v", c, a[4:6])
	}
}
