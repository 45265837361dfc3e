package pipeline

import (
	"context"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/spec"
	"github.com/facefusion-hpc/facefusion/internal/swap"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// keepSink holds every frame written.
type keepSink struct {
	mu     sync.Mutex
	frames [][]byte
}

func (s *keepSink) Write(f []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.frames = append(s.frames, append([]byte(nil), f...))
	return nil
}

// On a grainy close-up of grace_hopper (the close-up clip through ffmpeg's temporal noise, as a
// camera's grain gives), the occluder tests find a patch about her glasses on some frames and
// not on the next: one frame shows the target's face there, the next the swap. Voted over the
// window's seven frames the finds hold. The measure: inside the face (pixels the swap changes
// on most frames), those kept as the target had them (within 3 levels, with their 3×3
// neighbours) on one frame and not on the next, or the other way, averaged over the frame pairs.
func TestCoverVoteHoldsFindsOnAGrainyCloseUp(t *testing.T) {
	testenv.Full(t, "swaps a real clip through the real models, twice")
	const n = 40
	clip := filepath.Join(t.TempDir(), "grainy.mp4")
	cmd := exec.Command(testenv.Tool(t, "ffmpeg"), "-nostdin", "-loglevel", "error", "-y", "-i", testenv.CloseUpClipFrames(t, "grace_hopper.png", n),
		"-vf", "noise=alls=12:allf=t,format=yuv420p", "-c:v", "libx264", "-preset", "veryfast", "-crf", "18", clip)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("making %s: %v\n%s", clip, err, out)
	}
	_, info, m := swapModelsFrom(t, "astronaut.png", clip)
	defer m.Close()
	target := make([][]byte, n)
	dec, err := video.OpenDecoder(context.Background(), info, 0, n)
	if err != nil {
		t.Fatal(err)
	}
	for i := range target {
		img := raster.New(info.Width, info.Height)
		if err := dec.Next(img.Bytes()); err != nil {
			t.Fatal(err)
		}
		target[i] = img.Bytes()
	}
	dec.Close()
	swapped := func(covers int) [][]byte {
		ws, err := m.Workers(2)
		if err != nil {
			t.Fatal(err)
		}
		defer CloseWorkers(ws)
		dec, err := video.OpenDecoder(context.Background(), info, 0, n)
		if err != nil {
			t.Fatal(err)
		}
		defer dec.Close()
		const k = 8
		sink := &keepSink{}
		if got, err := StreamWindow(context.Background(), info.Width, info.Height, dec, sink, ws, nil, Window{K: k, Still: spec.StillOf(k), Covers: covers, Count: n}); err != nil || got != n {
			t.Fatalf("covers %d: wrote %d frames, %v", covers, got, err)
		}
		return sink.frames
	}
	alone, voted := swapped(0), swapped(swap.CoverVote)
	// The face: pixels the per-frame swap changes by more than 12 levels on most frames.
	px := info.Width * info.Height
	inFace := make([]bool, px)
	area := 0
	for p := range px {
		c := 0
		for f := range n {
			if diff(alone[f], target[f], p) > 12 {
				c++
			}
		}
		if inFace[p] = 2*c > n; inFace[p] {
			area++
		}
	}
	// kept is frame f's pixels kept as the target had them, with their 3×3 neighbours (a grainy
	// swap matches the target by chance at single pixels).
	kept := func(out [][]byte, f int) []bool {
		k := make([]bool, px)
		w := info.Width
		for p := range px {
			x, y := p%w, p/w
			if !inFace[p] || x == 0 || y == 0 || x == w-1 || y == info.Height-1 {
				continue
			}
			k[p] = true
			for dy := -1; dy <= 1 && k[p]; dy++ {
				for dx := -1; dx <= 1; dx++ {
					if diff(out[f], target[f], p+dy*w+dx) > 3 {
						k[p] = false
						break
					}
				}
			}
		}
		return k
	}
	flicker := func(out [][]byte) float64 {
		total := 0
		last := kept(out, 0)
		for f := 1; f < n; f++ {
			now := kept(out, f)
			for p := range px {
				if now[p] != last[p] {
					total++
				}
			}
			last = now
		}
		return float64(total) / (n - 1)
	}
	before, after := flicker(alone), flicker(voted)
	t.Logf("grainy close-up, %d frames: %.0f px of the face's %d change between kept and swapped a frame pair, each frame alone; %.0f voted over %d frames each side", n, before, area, after, swap.CoverVote)
	if before < 0.01*float64(area) {
		t.Fatalf("each frame alone: %.0f px of %d change a frame pair: the clip no longer flickers, so the test does not test", before, area)
	}
	if after > before/4 {
		t.Errorf("voted: %.0f px of the face change between kept and swapped a frame pair, alone %.0f: want at most a quarter", after, before)
	}
}

// diff is the largest channel difference of pixel p between two RGB frames.
func diff(a, b []byte, p int) int {
	d := 0
	for c := range 3 {
		d = max(d, absInt(int(a[3*p+c])-int(b[3*p+c])))
	}
	return d
}

func absInt(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
