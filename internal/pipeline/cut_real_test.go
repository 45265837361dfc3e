package pipeline

import (
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/spec"
	"github.com/facefusion-hpc/facefusion/internal/temporal"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// cutClip writes a 214×160 clip of 2n frames: n of astronaut.png's face, then a hard cut to n of
// grace_hopper.png's, each a 150 px close-up in the same place (the smoother's boxes overlap
// fully across the cut).
func cutClip(t *testing.T, path string, n int) {
	t.Helper()
	shot := func(in int, crop string) string {
		return fmt.Sprintf("[%d:v]crop=%s,scale=150:150,pad=214:160:32:5,setsar=1,fps=25,trim=end_frame=%d", in, crop, n)
	}
	cmd := exec.Command(testenv.Tool(t, "ffmpeg"), "-nostdin", "-loglevel", "error", "-y",
		"-loop", "1", "-i", testenv.Sample(t, "astronaut.png"), "-loop", "1", "-i", testenv.Sample(t, "grace_hopper.png"),
		"-filter_complex", shot(0, "200:200:126:32")+"[a];"+shot(1, "300:300:116:93")+"[g];[a][g]concat=n=2:v=1,format=yuv420p[v]",
		"-map", "[v]", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "18", path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("making %s: %v\n%s", path, err, out)
	}
}

// facesWorker records, by frame (stampedSource's number), the first face as analysed (what
// face_landmark_smoothing = 0 uses) and as the window stage smoothed it.
type facesWorker struct {
	*modelWorker
	mu            *sync.Mutex
	raw, smoothed map[int]face.Face
}

func (r facesWorker) Analyse(img *raster.Image, dst []face.Face) ([]face.Face, error) {
	n := len(dst)
	dst, err := r.modelWorker.Analyse(img, dst)
	if err == nil && len(dst) > n {
		r.mu.Lock()
		r.raw[int(img.Pix[0])|int(img.Pix[1])<<8] = dst[n]
		r.mu.Unlock()
	}
	return dst, err
}

func (r facesWorker) Apply(frames []*raster.Image, faces [][]face.Face) error {
	r.mu.Lock()
	for i, img := range frames {
		if len(faces[i]) > 0 {
			r.smoothed[int(img.Pix[0])|int(img.Pix[1])<<8] = faces[i][0]
		}
	}
	r.mu.Unlock()
	return r.modelWorker.Apply(frames, faces)
}

// A hard cut between two close-ups in the same place ends the window: every frame's landmarks are
// those of its shot alone smoothed (bit for bit), where a window across the cut moves the points
// of the frames next to it towards the other person's (measured: by up to 5.7 px and 5.5 px),
// and within each shot the
// landmarks are still smoothed: they step less than half as far as analysed, frame to frame
// (measured: 0.34 px against 6.2 px, 0.96 px against 38 px, summed over the shot).
func TestCutEndsTheWindow(t *testing.T) {
	testenv.Full(t, "swaps a real clip with a cut through the real models")
	clip := filepath.Join(t.TempDir(), "cut.mp4")
	const half, k = 10, 8
	const n = 2 * half
	cutClip(t, clip, half)
	var mu sync.Mutex
	raw, smoothed := map[int]face.Face{}, map[int]face.Face{}
	streamClip(t, clip, n, k, func(w *modelWorker) Worker { return facesWorker{w, &mu, raw, smoothed} })
	if len(raw) != n || len(smoothed) != n {
		t.Fatalf("a face in %d frames as analysed, %d as smoothed, want %d", len(raw), len(smoothed), n)
	}
	apart := func(a, b face.Face) float64 { // the largest distance of a point of the 68
		d := 0.0
		for i := range a.Landmarks {
			d = max(d, math.Hypot(a.Landmarks[i].X-b.Landmarks[i].X, a.Landmarks[i].Y-b.Landmarks[i].Y))
		}
		return d
	}
	// Each frame's smoothed face is its shot's alone: the smoother run on the analysed faces
	// with the window clipped to the shot gives the same bits. Run across the cut, it moves the
	// frames next to it.
	var alone, across temporal.Smoother
	alone.K, across.K = k, k
	alone.Still, across.Still = spec.StillOf(k), spec.StillOf(k)
	analysed := func(s int) []face.Face { return []face.Face{raw[s]} }
	for f := 0; f < n; f++ {
		lo, hi := 0, half-1
		if f >= half {
			lo, hi = half, n-1
		}
		want := alone.Smooth(nil, f, lo, hi, analysed)[0]
		mixed := across.Smooth(nil, f, 0, n-1, analysed)[0]
		t.Logf("frame %2d: smoothed points at most %.2f px from analysed; smoothed across the cut, %.2f px from its shot's", f, apart(raw[f], smoothed[f]), apart(want, mixed))
		if d := apart(want, smoothed[f]); d != 0 {
			t.Errorf("frame %d: a smoothed point %.3g px from its place smoothed within the shot: the window reached across the cut", f, d)
		}
		if (f == half-1 || f == half) && apart(want, mixed) < 2 {
			t.Errorf("frame %d, next to the cut: smoothed across it, the points move %.2f px (want ≥ 2): the clip does not test the cut", f, apart(want, mixed))
		}
	}
	for _, shot := range [][2]int{{0, half}, {half, n}} {
		stepRaw, stepSmoothed := 0.0, 0.0
		for f := shot[0] + 1; f < shot[1]; f++ {
			stepRaw += apart(raw[f-1], raw[f])
			stepSmoothed += apart(smoothed[f-1], smoothed[f])
		}
		t.Logf("frames %d–%d: largest point step, summed: %.2f px analysed, %.2f px smoothed", shot[0], shot[1]-1, stepRaw, stepSmoothed)
		if stepSmoothed >= stepRaw/2 {
			t.Errorf("frames %d–%d: smoothed points step %.2f px in all, analysed %.2f px: want under half: the shot is not smoothed", shot[0], shot[1]-1, stepSmoothed, stepRaw)
		}
	}
}
