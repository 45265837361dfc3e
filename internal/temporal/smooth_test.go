package temporal

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
)

// defaultK is face_landmark_smoothing's default, from its one home (configs/default.toml).
var defaultK = job.Default().FaceLandmarkSmoothing

// shape is a face whose 68 points, five points, keypoints and box sit around centre c.
func shape(c geom.Pt, size float64) face.Face {
	var f face.Face
	for k := range f.Landmarks {
		a := float64(k) * 2 * math.Pi / 68
		f.Landmarks[k] = geom.Pt{X: c.X + size/3*math.Cos(a), Y: c.Y + size/3*math.Sin(3*a)}
	}
	f.Five = f.Landmarks.Five()
	f.DetectorFive = f.Five
	for k := range f.Keypoints {
		f.Keypoints[k] = f.Landmarks[k*11]
	}
	f.Box = geom.Rect{X0: c.X - size/2, Y0: c.Y - size/2, X1: c.X + size/2, Y1: c.Y + size/2}
	f.Score = 0.9
	return f
}

// coords lists every smoothed coordinate of f.
func coords(f *face.Face) []float64 {
	out := []float64{f.Box.X0, f.Box.Y0, f.Box.X1, f.Box.Y1}
	for _, ps := range [][]geom.Pt{f.Landmarks[:], f.Five[:], f.DetectorFive[:], f.Keypoints[:]} {
		for _, p := range ps {
			out = append(out, p.X, p.Y)
		}
	}
	return out
}

// smoothAll smooths every frame of video (one face list per frame), checking that no frame
// outside [0, len(video)−1] and none outside t's window is asked for.
func smoothAll(t *testing.T, k int, video [][]face.Face) [][]face.Face {
	t.Helper()
	sm := Smoother{K: k}
	out := make([][]face.Face, len(video))
	for f := range video {
		out[f] = sm.Smooth(nil, f, 0, len(video)-1, func(s int) []face.Face {
			if s < 0 || s >= len(video) || s < f-k || s > f+k {
				t.Fatalf("frame %d's window asked for frame %d", f, s)
			}
			return video[s]
		})
	}
	return out
}

func noisy(rng *rand.Rand, f face.Face, sigma float64) face.Face {
	for k := range f.Landmarks {
		f.Landmarks[k].X += sigma * rng.NormFloat64()
		f.Landmarks[k].Y += sigma * rng.NormFloat64()
	}
	f.Five = f.Landmarks.Five()
	return f
}

// meanStep is the mean absolute frame-to-frame change of the 68 landmarks of face 0, and the
// largest.
func meanStep(v [][]face.Face) (mean, most float64) {
	n := 0
	for f := 1; f < len(v); f++ {
		for k := range v[f][0].Landmarks {
			d := math.Hypot(v[f][0].Landmarks[k].X-v[f-1][0].Landmarks[k].X, v[f][0].Landmarks[k].Y-v[f-1][0].Landmarks[k].Y)
			mean += d
			most = max(most, d)
			n++
		}
	}
	return mean / float64(n), most
}

// A still face whose landmarks move by noise alone comes out nearly still: at the default
// window, the mean and the largest frame-to-frame change fall below a tenth of the input's (the
// first and last frames' windows, clipped, included), and the smoothed points sit nearer the
// true shape than the noisy ones.
func TestStillFaceHoldsStill(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	truth := shape(geom.Pt{X: 200, Y: 150}, 120)
	video := make([][]face.Face, 120)
	for f := range video {
		video[f] = []face.Face{noisy(rng, truth, 0.5)}
	}
	out := smoothAll(t, defaultK, video)
	inMean, inMax := meanStep(video)
	outMean, outMax := meanStep(out)
	t.Logf("K=%d: frame-to-frame change mean %.3f → %.3f px, max %.3f → %.3f px", defaultK, inMean, outMean, inMax, outMax)
	if outMean > inMean/10 || outMax > inMax/10 {
		t.Errorf("still face: frame-to-frame change mean %.3f → %.3f px, max %.3f → %.3f px: want below 1/10 of the input's", inMean, outMean, inMax, outMax)
	}
	var errIn, errOut float64
	for f := range video {
		for k := range truth.Landmarks {
			errIn += math.Hypot(video[f][0].Landmarks[k].X-truth.Landmarks[k].X, video[f][0].Landmarks[k].Y-truth.Landmarks[k].Y)
			errOut += math.Hypot(out[f][0].Landmarks[k].X-truth.Landmarks[k].X, out[f][0].Landmarks[k].Y-truth.Landmarks[k].Y)
		}
	}
	if errOut > errIn/2 {
		t.Errorf("still face: error against the true shape %.1f → %.1f: want at most half", errIn, errOut)
	}
	// Off: frames as they are.
	off := smoothAll(t, 0, video)
	for f := range video {
		if off[f][0] != video[f][0] {
			t.Fatalf("K=0 changed frame %d", f)
		}
	}
}

// A still face whose landmarks jump on one frame (dlib's cascade on a keyframe, or on a hand
// passing by) holds still on every other frame: the jump, 3 % of the face's width, is left out
// of its neighbours' means (OutlierSpread) instead of moving each of them by a tenth of a pixel
// as it enters and leaves their windows (a plain weighted mean moves them up to 0.29 px).
func TestOneFrameJumpLeavesTheOthersStill(t *testing.T) {
	truth := shape(geom.Pt{X: 200, Y: 150}, 120)
	video := make([][]face.Face, 40)
	for f := range video {
		video[f] = []face.Face{truth}
	}
	jump := truth
	for k := range jump.Landmarks {
		jump.Landmarks[k].X += 0.03 * 120
	}
	video[20] = []face.Face{jump}
	out := smoothAll(t, defaultK, video)
	worst := 0.0
	for f := range out {
		if f == 20 {
			continue
		}
		for k := range truth.Landmarks {
			worst = max(worst, math.Abs(out[f][0].Landmarks[k].X-truth.Landmarks[k].X))
		}
	}
	t.Logf("a 3.6 px jump on frame 20 moves the other frames by at most %.4f px", worst)
	if worst > 0.01 {
		t.Errorf("a one-frame jump moved the other frames by up to %.4f px (want ≤ 0.01)", worst)
	}
}

// A face in constant motion comes out where it is, to rounding, in every frame, the first and
// last included (the window clipped at the video's ends is still a line fit): no lag.
func TestLinearMotionNoLag(t *testing.T) {
	video := make([][]face.Face, 40)
	for f := range video {
		video[f] = []face.Face{shape(geom.Pt{X: 100 + 3.5*float64(f), Y: 120 - 1.25*float64(f)}, 100)}
	}
	for _, k := range []int{1, 4, defaultK, job.MaxLandmarkSmoothing} {
		out := smoothAll(t, k, video)
		for f := range video {
			want, got := coords(&video[f][0]), coords(&out[f][0])
			for i := range want {
				if math.Abs(want[i]-got[i]) > 1e-9 {
					t.Fatalf("K=%d, frame %d, coordinate %d: %.6f, want %.6f (lag)", k, f, i, got[i], want[i])
				}
			}
		}
	}
}

// A face that accelerates smoothly (x = a·t²/2, a = 0.2 px/frame², reaching 8 px/frame) is
// followed within 0.01 px in every frame, the clipped windows at the ends included (the local
// quadratic fits such a path exactly; a local line would lag by a/2·Σw·d²/Σw, about 0.36 px at
// K = 4), and its second difference stays within 0.01 px of the input's a.
func TestAcceleratingMotion(t *testing.T) {
	const a = 0.2
	video := make([][]face.Face, 40)
	pos := func(f int) float64 { return 50 + a*float64(f*f)/2 }
	for f := range video {
		video[f] = []face.Face{shape(geom.Pt{X: pos(f), Y: 150}, 100)}
	}
	out := smoothAll(t, defaultK, video)
	worst, worstD2 := 0.0, 0.0
	for f := range video {
		worst = max(worst, math.Abs(out[f][0].Landmarks[30].X-video[f][0].Landmarks[30].X))
	}
	for f := 1; f < len(video)-1; f++ {
		d2 := out[f+1][0].Landmarks[30].X - 2*out[f][0].Landmarks[30].X + out[f-1][0].Landmarks[30].X
		worstD2 = max(worstD2, math.Abs(d2))
	}
	t.Logf("accelerating: largest error %.3f px, largest second difference %.3f px (input %.3f)", worst, worstD2, a)
	if worst > 0.01 {
		t.Errorf("accelerating face: smoothed points up to %.3f px off, want ≤ 0.01", worst)
	}
	if worstD2 > a+0.01 {
		t.Errorf("accelerating face: second difference up to %.3f px, want ≤ %.2f (the input's %.2f + 0.01)", worstD2, a+0.01, a)
	}
}

// Two faces that cross (one moving right, one left, the second 40 px lower) keep their own
// tracks, whatever order the detector lists them in: each comes out on its own line.
func TestCrossingFacesKeepTheirTracks(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	video := make([][]face.Face, 41)
	ida := make([]int, len(video)) // where face A sits in frame f's list
	for f := range video {
		a := shape(geom.Pt{X: 100 + 5*float64(f), Y: 150}, 100)
		b := shape(geom.Pt{X: 300 - 5*float64(f), Y: 190}, 100)
		if rng.Intn(2) == 0 {
			video[f], ida[f] = []face.Face{a, b}, 0
		} else {
			video[f], ida[f] = []face.Face{b, a}, 1
		}
	}
	out := smoothAll(t, defaultK, video)
	for f := range video {
		for i := range video[f] {
			if d := math.Abs(out[f][i].Box.Center().X - video[f][i].Box.Center().X); d > 1e-9 {
				who := "A"
				if i != ida[f] {
					who = "B"
				}
				t.Fatalf("frame %d: face %s smoothed %.3f px off its track (mixed with the other face)", f, who, d)
			}
		}
	}
	// Match itself: each face of a frame is linked once.
	links := Match(nil, video[20], video[21])
	if links[0] == links[1] || links[0] < 0 || links[1] < 0 {
		t.Fatalf("links %v", links)
	}
}

// A face missing from a frame ends its window there: the frames beyond are not averaged in.
func TestWindowStopsAtAGap(t *testing.T) {
	video := make([][]face.Face, 9)
	for f := range video {
		video[f] = []face.Face{shape(geom.Pt{X: 200, Y: 150}, 100)}
	}
	video[5] = nil
	video[7][0] = shape(geom.Pt{X: 210, Y: 150}, 100) // would pull frame 4 right if reached
	out := smoothAll(t, 4, video)
	if got := out[4][0].Box.Center().X; math.Abs(got-200) > 1e-9 {
		t.Fatalf("frame 4: centre %.3f, want 200: frames past the gap were used", got)
	}
}

// The window ends at the video's ends as it does inside it: the same frame smoothed as part of a
// longer or a shorter video, or with frames outside lo..hi that differ, gives the same bits.
func TestWindowClippedAtTheEnds(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	video := make([][]face.Face, 30)
	for f := range video {
		video[f] = []face.Face{noisy(rng, shape(geom.Pt{X: 200 + float64(f), Y: 150}, 100), 0.5)}
	}
	sm := Smoother{K: defaultK}
	for _, t0 := range []int{10, 11, 13, 20} {
		lo, hi := 10, 20
		got := sm.Smooth(nil, t0, lo, hi, func(s int) []face.Face {
			if s < lo || s > hi {
				t.Fatalf("frame %d asked for, outside [%d, %d]", s, lo, hi)
			}
			return video[s]
		})
		sub := smoothAll(t, defaultK, video[lo:hi+1])
		if got[0] != sub[t0-lo][0] {
			t.Fatalf("frame %d: smoothing within [%d, %d] differs from smoothing the cut video", t0, lo, hi)
		}
	}
}

func BenchmarkSmooth(b *testing.B) {
	for _, still := range []int{0, 2 * defaultK} { // the pipeline's: a still face's wider window
		b.Run(fmt.Sprintf("still-%d", still), func(b *testing.B) {
			rng := rand.New(rand.NewSource(1))
			h := max(defaultK, still)
			video := make([][]face.Face, 2*h+1)
			for f := range video {
				video[f] = []face.Face{noisy(rng, shape(geom.Pt{X: 200, Y: 150}, 120), 0.5)}
			}
			sm := Smoother{K: defaultK, Still: still}
			var dst []face.Face
			b.ReportAllocs()
			for b.Loop() {
				dst = sm.Smooth(dst[:0], h, 0, len(video)-1, func(s int) []face.Face { return video[s] })
			}
		})
	}
}

// A face that moves (a slow sway, up to 4 px/frame) with noisy landmarks is followed without
// lag (its centroid, away from the clipped ends, within 0.15 px of the true one on average) and
// with far less jitter: the landmarks' second difference falls under an eighth of the input's.
func TestMovingFaceLessJitter(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	video, truth := make([][]face.Face, 80), make([]face.Face, 80)
	for f := range video {
		truth[f] = shape(geom.Pt{X: 200 + 100*math.Sin(float64(f)/25), Y: 150}, 120)
		video[f] = []face.Face{noisy(rng, truth[f], 0.5)}
	}
	out := smoothAll(t, defaultK, video)
	d2 := func(v [][]face.Face) float64 {
		sum, n := 0.0, 0
		for f := 1; f < len(v)-1; f++ {
			for k := range v[f][0].Landmarks {
				x := v[f+1][0].Landmarks[k].X - 2*v[f][0].Landmarks[k].X + v[f-1][0].Landmarks[k].X
				y := v[f+1][0].Landmarks[k].Y - 2*v[f][0].Landmarks[k].Y + v[f-1][0].Landmarks[k].Y
				sum += x*x + y*y
				n++
			}
		}
		return math.Sqrt(sum / float64(n))
	}
	lag := 0.0
	for f := defaultK; f < len(video)-defaultK; f++ {
		lag += geom.Mean(out[f][0].Landmarks[:]).X - geom.Mean(truth[f].Landmarks[:]).X
	}
	lag /= float64(len(video) - 2*defaultK)
	in, got := d2(video), d2(out)
	t.Logf("moving face: second difference RMS %.3f → %.3f px; mean centroid offset %.3f px", in, got, lag)
	if got > in/8 {
		t.Errorf("moving face: second difference RMS %.3f → %.3f px, want under an eighth", in, got)
	}
	if math.Abs(lag) > 0.15 {
		t.Errorf("moving face: smoothed centroid %.3f px from the true one on average (lag)", lag)
	}
}

// A face's tone (its colour, face.Face.Tone) is smoothed over the window with it: on a still
// face a keyframe's jump of the tone is spread over the window, and a change of light at a
// steady pace (a face walking into shadow, while it moves) is followed exactly in every frame,
// the clipped windows at the video's ends included: no lag.
func TestToneFollowsLightAndHoldsKeyframes(t *testing.T) {
	tone := func(y, s float64) face.Tone {
		return face.Tone{Mean: [3]float64{y, -20, 30}, Std: [3]float64{s, 3, 4}, Weight: 5000}
	}
	// Walking into shadow: 0.8 levels darker a frame, the spread shrinking, the face moving.
	video := make([][]face.Face, 40)
	for f := range video {
		video[f] = []face.Face{shape(geom.Pt{X: 100 + 3*float64(f), Y: 120}, 100)}
		video[f][0].Tone = tone(160-0.8*float64(f), 40-0.2*float64(f))
	}
	for _, k := range []int{1, defaultK, job.MaxLandmarkSmoothing} {
		out := smoothAll(t, k, video)
		for f := range video {
			got, want := out[f][0].SteadyTone, video[f][0].Tone
			if math.Abs(got.Mean[0]-want.Mean[0]) > 1e-9 || math.Abs(got.Std[0]-want.Std[0]) > 1e-9 || math.Abs(got.Mean[2]-want.Mean[2]) > 1e-9 {
				t.Fatalf("K=%d, frame %d: steady tone Y %.6f spread %.6f, want %.6f %.6f (lag)", k, f, got.Mean[0], got.Std[0], want.Mean[0], want.Std[0])
			}
		}
	}
	// A still face whose tone steps by 0.6 at a keyframe (frame 20): the steady tone moves by
	// at most a fifth of it from frame to frame.
	for f := range video {
		video[f] = []face.Face{shape(geom.Pt{X: 100, Y: 120}, 100)}
		video[f][0].Tone = tone(150, 40)
		if f >= 20 {
			video[f][0].Tone = tone(150.6, 40)
		}
	}
	out := smoothAll(t, defaultK, video)
	for f := 1; f < len(video); f++ {
		if d := math.Abs(out[f][0].SteadyTone.Mean[0] - out[f-1][0].SteadyTone.Mean[0]); d > 0.6/5 {
			t.Fatalf("frame %d: the steady tone steps by %.3f (the keyframe's 0.6 not spread)", f, d)
		}
	}
	// A frame without a tone (no classic swap measured it) leaves the window's unmeasured.
	video[5][0].Tone = face.Tone{}
	if out := smoothAll(t, defaultK, video); out[3][0].SteadyTone.Weight != 0 {
		t.Fatal("a window with an unmeasured frame got a steady tone")
	}
}

// smoothStill is smoothAll with the wider window of a still face, still frames each side.
func smoothStill(k, still int, video [][]face.Face) [][]face.Face {
	sm := Smoother{K: k, Still: still}
	out := make([][]face.Face, len(video))
	for f := range video {
		out[f] = sm.Smooth(nil, f, 0, len(video)-1, func(s int) []face.Face { return video[s] })
	}
	return out
}

// A still face whose points step to a new place at every keyframe (dlib on a lossy clip: 0.5–0.9
// px, held until the next keyframe) drifts as the window spreads each step: over twice the
// frames (Still = 2K) the drift is about half, frame to frame. A face that moves (at a steady
// speed, or accelerating) is smoothed bit for bit as over K alone: the wider window adds no lag.
func TestStillWindowHalvesAStillFacesDrift(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	truth := shape(geom.Pt{X: 200, Y: 150}, 120)
	video := make([][]face.Face, 96)
	var at face.Face // each point's place since the last keyframe, every 12 frames
	for f := range video {
		if f%12 == 0 {
			at = noisy(rng, truth, 0.6)
		}
		video[f] = []face.Face{noisy(rng, at, 0.03)}
	}
	narrowMean, narrowMax := meanStep(smoothAll(t, defaultK, video))
	wideMean, wideMax := meanStep(smoothStill(defaultK, 2*defaultK, video))
	t.Logf("still face, keyframe steps: smoothed change a frame mean %.4f px, largest %.4f over K; %.4f, %.4f over 2K", narrowMean, narrowMax, wideMean, wideMax)
	if wideMean > 0.65*narrowMean || wideMax > 0.75*narrowMax {
		t.Errorf("still face: the wider window's drift mean %.4f, largest %.4f px against %.4f, %.4f over K: want about half", wideMean, wideMax, narrowMean, narrowMax)
	}
	for name, at := range map[string]func(f int) geom.Pt{
		"steady":       func(f int) geom.Pt { return geom.Pt{X: 100 + 3.5*float64(f), Y: 120 - 1.25*float64(f)} },
		"accelerating": func(f int) geom.Pt { return geom.Pt{X: 100 + 0.1*float64(f*f), Y: 120} },
		"swaying":      func(f int) geom.Pt { return geom.Pt{X: 200 + 6*math.Sin(float64(f)/5), Y: 120} },
	} {
		for f := range video {
			video[f] = []face.Face{noisy(rng, shape(at(f), 100), 0.2)}
		}
		narrow, wide := smoothAll(t, defaultK, video), smoothStill(defaultK, 2*defaultK, video)
		for f := range video {
			if a, b := coords(&narrow[f][0]), coords(&wide[f][0]); !slices.Equal(a, b) {
				t.Fatalf("%s face, frame %d: the wider window moved the points (lag)", name, f)
			}
		}
	}
}

// A still face on a lossy clip: its points step to a new place at each keyframe (every g frames)
// and hold exactly between. The mean over the wider window spreads each step over the frames
// the window slides through; its total change (summed over the frames, each frame's mean over
// the 68 points) must stay well under the steps' own: at most 0.50 of it at g = 12 and 0.285 at
// g = 8 (stillWeight's 0.46 and 0.26; the tricube's, before it, 0.54 and 0.31), and no point
// may move by more than a fifteenth of the largest step in one frame (the change spread over
// the frames, not gathered into jumps).
func TestStillMeanDriftsLittleOverKeyframeSteps(t *testing.T) {
	truth := shape(geom.Pt{X: 200, Y: 150}, 120)
	for _, c := range []struct {
		g    int
		most float64
	}{{12, 0.50}, {8, 0.285}} {
		rng := rand.New(rand.NewSource(5))
		video := make([][]face.Face, 480)
		var at face.Face
		for f := range video {
			if f%c.g == 0 {
				at = noisy(rng, truth, 0.6)
			}
			video[f] = []face.Face{at}
		}
		inMean, inMax := meanStep(video)
		outMean, outMax := meanStep(smoothStill(defaultK, 2*defaultK, video))
		t.Logf("g = %d: total change %.3f of the steps', a point's largest a frame %.4f px (steps' %.4f)", c.g, outMean/inMean, outMax, inMax)
		if outMean > c.most*inMean || outMax > inMax/15 {
			t.Errorf("g = %d: total change %.3f of the steps' (want ≤ %.3f), a point's largest a frame %.4f px (want ≤ %.4f)", c.g, outMean/inMean, c.most, outMax, inMax/15)
		}
	}
}
