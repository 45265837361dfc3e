package dist

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// lip_syncer's voice features come from the whole track (normalised by its peak, its windows
// counted from its first sample), so a rank's frames must get the windows of their time, not of
// their place in the rank's share: 1, 2 and 3 ranks give the same bytes at one chunk size, and
// chunks of 24 and 96 the same decoded frames.
func TestLipSyncAcrossRanks(t *testing.T) {
	t.Parallel() // with the other rank matrices: see main_test.go
	dir := clitest.FixtureModels(t)
	work := t.TempDir()
	clip := filepath.Join(work, "clip.mp4")
	const frames = 72
	clitest.FaceClip(t, clip, 320, 240, frames, "25")
	// A voice whose loudness and pitch change over the track: every frame's window differs, and
	// the track's peak lies in its second half (no rank's share holds it alone).
	voice := filepath.Join(work, "voice.wav")
	src := "aevalsrc=0.2*sin(2*PI*(180+60*t)*t)*(0.3+0.7*abs(sin(2*PI*1.3*t)))*(1+t/3):s=22050:d=3.2"
	if b, err := exec.Command(testenv.Tool(t, "ffmpeg"), "-v", "error", "-f", "lavfi", "-i", src, voice).CombinedOutput(); err != nil {
		t.Fatalf("making the voice: %v %s", err, b)
	}
	in := clitest.FrameHashes(t, clip)
	base := []string{"run", "-s", testenv.Sample(t, "grace_hopper.png"), voice, "-t", clip, "--models-dir", dir,
		"--processors", "lip_syncer", "--output-video-encoder", "ffv1"}
	out := func(name string, ranks, chunk int) string {
		o := filepath.Join(work, name+".mkv")
		args := append(append([]string{}, base...), "-o", o, "--chunk-frames", strconv.Itoa(chunk))
		var r clitest.Result
		if ranks == 1 {
			r = clitest.Run(t, args...)
		} else {
			r = clitest.Mpirun(t, clitest.HangGuard(t), ranks, args...)
		}
		if r.Code != 0 {
			t.Fatalf("%d ranks, chunks of %d: exit %d: %s", ranks, chunk, r.Code, r.Stderr)
		}
		return o
	}
	one := out("one", 1, 24)
	want, err := os.ReadFile(one)
	if err != nil {
		t.Fatal(err)
	}
	for _, ranks := range []int{2, 3} {
		got, err := os.ReadFile(out("ranks"+strconv.Itoa(ranks), ranks, 24))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%d ranks at chunks of 24 differ from 1 rank's bytes", ranks)
		}
	}
	a, b := clitest.FrameHashes(t, one), clitest.FrameHashes(t, out("chunk96", 1, 96))
	if len(a) != frames || len(b) != frames {
		t.Fatalf("%d and %d frames, want %d", len(a), len(b), frames)
	}
	changed := 0
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("frame %d differs between chunks of 24 and 96", i)
		}
		if a[i] != in[i] {
			changed++
		}
	}
	if changed < frames/2 {
		t.Errorf("the lip syncer changed %d of %d frames: it did nothing", changed, frames)
	}
}
