package pipeline

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/spec"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// BenchmarkStillFaceParts splits a still face's frame-to-frame change, once swapped, into what
// the target itself changes and what the swap adds, on docs/performance.md's still clips (40
// frames, the default window and a wider one). With O(F, L) the swap of target frame F on landmarks L (as the
// window smoothed them), F_t and L_t frame t's:
//   - total: O(F_t, L_t) from frame to frame, the output;
//   - ours: O(F_0, L_t), the target held at its first frame: only our landmarks move, and the
//     alignment and mask with them;
//   - target: O(F_t, L_0), the landmarks held at the first frame's: the target's own change,
//     through the pixels the swap leaves and what it matches to them (colour, seam, occluders).
//
// Each as the mean absolute luma change in the face region, averaged over the frame pairs and
// the largest pair's; "input" is the target's own. Frames are not stamped: a stamp in a corner
// moves BlazeFace's box, and dlib's points with it.
//
//	go test -run '^$' -bench StillFaceParts -benchtime 1x ./internal/pipeline
func BenchmarkStillFaceParts(b *testing.B) {
	k := job.Default().FaceLandmarkSmoothing
	grace, astro := geom.Rect{X0: 100, Y0: 70, X1: 220, Y1: 180}, geom.Rect{X0: 122, Y0: 69, X1: 198, Y1: 144}
	clips := []struct {
		name, sample, crop string
		crf, gop           int
		source             string
		region             geom.Rect
		k                  int // face_landmark_smoothing
	}{
		{"grace-lossless", "grace_hopper.png", "140:120", 0, 12, "astronaut.png", grace, k},
		{"grace-crf23-g50", "grace_hopper.png", "140:120", 23, 50, "astronaut.png", grace, k},
		{"grace-crf30-g12", "grace_hopper.png", "140:120", 30, 12, "astronaut.png", grace, k},
		{"astronaut-crf26-g8", "astronaut.png", "100:20", 26, 8, "grace_hopper.png", astro, k},
		{"grace-crf30-g12-k16", "grace_hopper.png", "140:120", 30, 12, "astronaut.png", grace, 16},
		{"astronaut-crf26-g8-k16", "astronaut.png", "100:20", 26, 8, "grace_hopper.png", astro, 16},
	}
	for _, c := range clips {
		b.Run(c.name, func(b *testing.B) {
			const n = 40
			clip := filepath.Join(b.TempDir(), "still.mp4")
			stillClip(b, clip, c.sample, c.crop, n, c.crf, c.gop)
			for b.Loop() {
				frames, lms, w := stillFrames(b, clip, c.source, n, c.k)
				var total, ours, target []*raster.Image
				for t := range n {
					total = append(total, swapOnto(b, w, frames[t], lms[t]))
					// A face's steady tone belongs to its frame: held with the frame (Apply
					// measures the frame's own).
					f := lms[t]
					f.SteadyTone = lms[0].SteadyTone
					ours = append(ours, swapOnto(b, w, frames[0], f))
					f = lms[0]
					f.SteadyTone = lms[t].SteadyTone
					target = append(target, swapOnto(b, w, frames[t], f))
				}
				for _, s := range []struct {
					name   string
					frames []*raster.Image
				}{{"total", total}, {"ours", ours}, {"target", target}, {"input", frames}} {
					mean, most := lumaStepsOf(s.frames, c.region)
					b.ReportMetric(mean, s.name+"-mean")
					b.ReportMetric(most, s.name+"-max")
				}
			}
		})
	}
}

// stillFrames decodes clip's n frames and the first face of each as a window of k frames each
// side smoothed it
// (one worker, so frames come in order), and that worker, for swapOnto.
func stillFrames(b testing.TB, clip, source string, n, k int) ([]*raster.Image, []face.Face, *modelWorker) {
	b.Helper()
	_, info, m := swapModelsFrom(b, source, clip)
	b.Cleanup(func() { m.Close() })
	ws, err := m.Workers(1)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { CloseWorkers(ws) })
	rec := &orderWorker{modelWorker: ws[0].(*modelWorker)}
	dec, err := video.OpenDecoder(context.Background(), info, 0, n)
	if err != nil {
		b.Fatal(err)
	}
	got, err := StreamWindow(context.Background(), info.Width, info.Height, dec, &frameSink{}, []Worker{rec}, nil, Window{K: k, Still: spec.StillOf(k), Count: n})
	dec.Close()
	if err != nil || got != n || len(rec.smoothed) != n {
		b.Fatalf("wrote %d frames with %d faces, %v", got, len(rec.smoothed), err)
	}
	dec, err = video.OpenDecoder(context.Background(), info, 0, n)
	if err != nil {
		b.Fatal(err)
	}
	defer dec.Close()
	frames := make([]*raster.Image, n)
	for i := range frames {
		frames[i] = raster.New(info.Width, info.Height)
		if err := dec.Next(frames[i].Pix); err != nil {
			b.Fatal(err)
		}
	}
	return frames, rec.smoothed, rec.modelWorker
}

// swapOnto is a copy of frame swapped by w on the face f.
func swapOnto(b *testing.B, w *modelWorker, frame *raster.Image, f face.Face) *raster.Image {
	img := raster.New(frame.W, frame.H)
	copy(img.Pix, frame.Pix)
	if err := w.Apply([]*raster.Image{img}, [][]face.Face{{f}}); err != nil {
		b.Fatal(err)
	}
	out := w.Frame(0)
	if out != img {
		cp := raster.New(out.W, out.H)
		copy(cp.Pix, out.Pix)
		return cp
	}
	return img
}

// orderWorker records the first face of each frame as the window gave it to Apply, in the
// order Apply sees them (in frame order with one worker).
type orderWorker struct {
	*modelWorker
	smoothed []face.Face
}

func (r *orderWorker) Apply(frames []*raster.Image, faces [][]face.Face) error {
	for i := range frames {
		var f face.Face
		if len(faces[i]) > 0 {
			f = faces[i][0]
		}
		r.smoothed = append(r.smoothed, f)
	}
	return r.modelWorker.Apply(frames, faces)
}

// lumaStepsOf is the mean absolute frame-to-frame change of BT.601 luma (as ffmpeg's gray of
// the ffv1 output) inside r, averaged over the frame pairs, and the largest pair's.
func lumaStepsOf(frames []*raster.Image, r geom.Rect) (mean, most float64) {
	luma := func(img *raster.Image, x, y int) float64 {
		p := img.Pix[y*img.Stride+3*x:]
		return math.Round(16 + 0.257*float64(p[0]) + 0.504*float64(p[1]) + 0.098*float64(p[2]))
	}
	x0, y0, x1, y1 := int(r.X0), int(r.Y0), int(r.X1), int(r.Y1)
	for f := 1; f < len(frames); f++ {
		s := 0.0
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				s += math.Abs(luma(frames[f], x, y) - luma(frames[f-1], x, y))
			}
		}
		s /= float64((x1 - x0) * (y1 - y0))
		mean += s / float64(len(frames)-1)
		most = max(most, s)
	}
	return mean, most
}
