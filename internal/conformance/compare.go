package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Tolerances (the issue's).
const (
	tolBox     = 1e-3 // px, and score units for the detector's and landmarker's scores
	tolFive    = 1e-3 // px, the detector's five points
	tol68      = 2e-3 // px, the 68 points and the five made from them (their means)
	tolPixel   = 1    // grey levels, whole image and face box
	tolEmbHead = 1e-3 // the first values of the raw and unit embeddings
)

// facesJSON is faces.py's (and facefusion faces') JSON, the fields compared.
type facesJSON struct {
	Shape    []int      `json:"shape"`
	Faces    []faceJSON `json:"faces"`
	Selected []int      `json:"selected"`
}

type faceJSON struct {
	BoundingBox     []float64   `json:"bounding_box"`
	DetectorScore   float64     `json:"detector_score"`
	LandmarkerScore float64     `json:"landmarker_score"`
	Angle           int         `json:"angle"`
	Landmark5       [][]float64 `json:"landmark_5"`
	Landmark5From68 [][]float64 `json:"landmark_5_68"`
	Landmark68      [][]float64 `json:"landmark_68"`
	EmbeddingNorm   []float64   `json:"embedding_norm_head"`
	Embedding       []float64   `json:"embedding_head"`
	Gender          *string     `json:"gender"`
	Age             []int       `json:"age"`
	Race            *string     `json:"race"`
}

// Figures are a case's measured differences, FaceFusion's output against ours.
type Figures struct {
	// faces
	Faces     [2]int  // FaceFusion's count, ours
	Box       float64 // box and scores, max abs
	Five      float64 // detector's five points, px
	Five68    float64 // five from 68, px
	Points68  float64 // 68 points, px
	Embedding float64 // embedding heads, max abs (NaN: neither side has one; +Inf: ours lacks FaceFusion's)
	Angle     bool    // every angle equal
	Classes   string  // "equal", "differ", "missing" (ours lacks FaceFusion's) or "none" (neither has any)
	Selection bool    // the same faces selected, in the same order

	// image and video (video: the worst frame)
	Frames     [2]int
	Size       string // "size WxH vs WxH" where the frames' sizes differ (nothing else is measured then)
	Whole      pixelStats
	Face       pixelStats
	FaceBox    [4]int // FaceFusion's first face, empty when it found none
	WorstFrame int
}

type pixelStats struct {
	MaxAbs int
	PSNR   float64 // +Inf when equal
}

// within says whether f meets the tolerances of compare, and if not, why.
func (f *Figures) within(compare string) (bool, string) {
	var why []string
	switch compare {
	case CompareFaces:
		if f.Faces[0] != f.Faces[1] {
			why = append(why, fmt.Sprintf("faces %d (FaceFusion) vs %d", f.Faces[0], f.Faces[1]))
			break
		}
		if f.Box > tolBox {
			why = append(why, fmt.Sprintf("box/score %.3g > %g", f.Box, tolBox))
		}
		if f.Five > tolFive {
			why = append(why, fmt.Sprintf("5 points %.3g px > %g", f.Five, tolFive))
		}
		if f.Five68 > tol68 {
			why = append(why, fmt.Sprintf("5/68 points %.3g px > %g", f.Five68, tol68))
		}
		if f.Points68 > tol68 {
			why = append(why, fmt.Sprintf("68 points %.3g px > %g", f.Points68, tol68))
		}
		if math.IsInf(f.Embedding, 1) {
			why = append(why, "embedding missing (FaceFusion has one, ours none)")
		} else if f.Embedding > tolEmbHead {
			why = append(why, fmt.Sprintf("embedding %.3g > %g", f.Embedding, tolEmbHead))
		}
		if !f.Angle {
			why = append(why, "angle differs")
		}
		switch f.Classes {
		case "differ":
			why = append(why, "gender/age/race differ")
		case "missing":
			why = append(why, "gender/age/race missing (FaceFusion classified the faces, ours not)")
		}
		if !f.Selection {
			why = append(why, "selection differs")
		}
	default:
		if f.Frames[0] != f.Frames[1] {
			why = append(why, fmt.Sprintf("frames %d (FaceFusion) vs %d", f.Frames[0], f.Frames[1]))
			break
		}
		if f.Size != "" {
			why = append(why, f.Size)
			break
		}
		if f.Whole.MaxAbs > tolPixel {
			why = append(why, fmt.Sprintf("whole max abs %d > %d", f.Whole.MaxAbs, tolPixel))
		}
		if f.Face.MaxAbs > tolPixel {
			why = append(why, fmt.Sprintf("face box max abs %d > %d", f.Face.MaxAbs, tolPixel))
		}
	}
	return len(why) == 0, strings.Join(why, "; ")
}

func readFaces(path string) (*facesJSON, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f facesJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &f, nil
}

func maxAbs(a, b []float64, m float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

func maxAbs2(a, b [][]float64, m float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	for i := range a {
		m = maxAbs(a[i], b[i], m)
	}
	return m
}

// compareFaces measures ours against FaceFusion's, face by face in order.
func compareFaces(ff, ours *facesJSON) Figures {
	f := Figures{Faces: [2]int{len(ff.Faces), len(ours.Faces)}, Angle: true, Classes: "equal",
		Selection: slices.Equal(ff.Selected, ours.Selected)}
	for i := range min(len(ff.Faces), len(ours.Faces)) {
		a, b := &ff.Faces[i], &ours.Faces[i]
		f.Box = maxAbs(a.BoundingBox, b.BoundingBox, f.Box)
		f.Box = maxAbs([]float64{a.DetectorScore, a.LandmarkerScore}, []float64{b.DetectorScore, b.LandmarkerScore}, f.Box)
		f.Five = maxAbs2(a.Landmark5, b.Landmark5, f.Five)
		f.Five68 = maxAbs2(a.Landmark5From68, b.Landmark5From68, f.Five68)
		f.Points68 = maxAbs2(a.Landmark68, b.Landmark68, f.Points68)
		switch {
		case len(a.Embedding) == 0 && len(b.Embedding) == 0:
			f.Embedding = math.NaN()
		case len(a.Embedding) > 0 && len(b.Embedding) == 0:
			f.Embedding = math.Inf(1) // FaceFusion has one and ours none: fails the tolerance
		case !math.IsNaN(f.Embedding):
			f.Embedding = maxAbs(append(slices.Clone(a.Embedding), a.EmbeddingNorm...), append(slices.Clone(b.Embedding), b.EmbeddingNorm...), f.Embedding)
		}
		f.Angle = f.Angle && a.Angle == b.Angle
		f.Classes = worseClasses(f.Classes, classesOf(a, b))
	}
	return f
}

// classesOf compares one face's gender, age and race: "equal", "differ", "missing" (FaceFusion
// classified the face and ours did not: FaceFusion's create_faces always does) or "none"
// (neither side did).
func classesOf(a, b *faceJSON) string {
	ffHas, oursHas := a.Gender != nil || a.Race != nil || a.Age != nil, b.Gender != nil || b.Race != nil || b.Age != nil
	switch {
	case !ffHas && !oursHas:
		return "none"
	case ffHas && !oursHas:
		return "missing"
	case a.Gender == nil || b.Gender == nil || *a.Gender != *b.Gender || a.Race == nil || b.Race == nil || *a.Race != *b.Race || !slices.Equal(a.Age, b.Age):
		return "differ"
	}
	return "equal"
}

// worseClasses is the worse of two faces' class verdicts.
func worseClasses(x, y string) string {
	rank := map[string]int{"equal": 0, "none": 1, "differ": 2, "missing": 3}
	if rank[y] > rank[x] {
		return y
	}
	return x
}

// frameRGB is one frame as packed RGB bytes.
type frameRGB struct {
	w, h int
	pix  []uint8
}

func readPNG(path string) (frameRGB, error) {
	img, err := raster.Load(path)
	if err != nil {
		return frameRGB{}, err
	}
	return frameRGB{img.W, img.H, img.Bytes()}, nil
}

// readFrames decodes every video frame of path as rgb24 with ffmpeg.
func readFrames(path string) ([]frameRGB, error) {
	probe, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height", "-of", "csv=p=0", path).Output()
	if err != nil {
		return nil, fmt.Errorf("ffprobe %s: %v", path, err)
	}
	var w, h int
	if _, err := fmt.Sscanf(strings.TrimSpace(string(probe)), "%d,%d", &w, &h); err != nil {
		return nil, fmt.Errorf("ffprobe %s: %q", path, probe)
	}
	var out, errb bytes.Buffer
	cmd := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0:v:0", "-f", "rawvideo", "-pix_fmt", "rgb24", "-")
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("decoding %s: %v: %s", path, err, errb.String())
	}
	size := w * h * 3
	if out.Len()%size != 0 {
		return nil, fmt.Errorf("decoding %s: %d bytes is not a whole number of %dx%d frames", path, out.Len(), w, h)
	}
	var frames []frameRGB
	for b := out.Bytes(); len(b) > 0; b = b[size:] {
		frames = append(frames, frameRGB{w, h, b[:size]})
	}
	return frames, nil
}

// stats compares a and b over the rectangle r (x0, y0, x1, y1).
func stats(a, b frameRGB, r [4]int) pixelStats {
	var sq float64
	var n, mx int
	for y := r[1]; y < r[3]; y++ {
		for x := r[0]; x < r[2]; x++ {
			for c := range 3 {
				i := (y*a.w+x)*3 + c
				d := int(a.pix[i]) - int(b.pix[i])
				if d < 0 {
					d = -d
				}
				mx = max(mx, d)
				sq += float64(d * d)
				n++
			}
		}
	}
	p := math.Inf(1)
	if sq > 0 {
		p = 10 * math.Log10(255*255/(sq/float64(n)))
	}
	return pixelStats{MaxAbs: mx, PSNR: p}
}

// faceBox is FaceFusion's first face's box, floored and ceiled into the frame (compare.py's).
func faceBox(ff *facesJSON, w, h int) ([4]int, bool) {
	if ff == nil || len(ff.Faces) == 0 {
		return [4]int{}, false
	}
	b := ff.Faces[0].BoundingBox
	r := [4]int{max(int(math.Floor(b[0])), 0), max(int(math.Floor(b[1])), 0), min(int(math.Ceil(b[2])), w), min(int(math.Ceil(b[3])), h)}
	return r, r[2] > r[0] && r[3] > r[1]
}

// comparePixels measures ours against FaceFusion's frame by frame; the worst frame (by whole
// max abs, then face) gives the figures. diff, when not "", gets |ff − ours|×10 of that frame.
func comparePixels(ff, ours []frameRGB, faces *facesJSON, diff string) (Figures, error) {
	f := Figures{Frames: [2]int{len(ff), len(ours)}, Whole: pixelStats{PSNR: math.Inf(1)}, Face: pixelStats{PSNR: math.Inf(1)}}
	if len(ff) != len(ours) || len(ff) == 0 {
		return f, nil
	}
	for i := range ff {
		a, b := ff[i], ours[i]
		if a.w != b.w || a.h != b.h {
			// A divergence like any other: a case with a cause records it.
			f.Size = fmt.Sprintf("size %dx%d vs %dx%d", a.w, a.h, b.w, b.h)
			return f, nil
		}
		whole := stats(a, b, [4]int{0, 0, a.w, a.h})
		face := pixelStats{PSNR: math.Inf(1)}
		box, ok := faceBox(faces, a.w, a.h)
		if ok {
			face = stats(a, b, box)
		}
		if i == 0 || whole.MaxAbs > f.Whole.MaxAbs || whole.MaxAbs == f.Whole.MaxAbs && whole.PSNR < f.Whole.PSNR {
			f.Whole, f.Face, f.FaceBox, f.WorstFrame = whole, face, box, i
		}
	}
	if diff != "" {
		a, b := ff[f.WorstFrame], ours[f.WorstFrame]
		d := image.NewGray(image.Rect(0, 0, a.w, a.h))
		for p := range a.w * a.h {
			m := 0
			for c := range 3 {
				m = max(m, int(a.pix[p*3+c])-int(b.pix[p*3+c]), int(b.pix[p*3+c])-int(a.pix[p*3+c]))
			}
			d.Pix[p] = uint8(min(255, m*10))
		}
		file, err := os.Create(diff)
		if err != nil {
			return f, err
		}
		if err := png.Encode(file, d); err != nil {
			file.Close()
			return f, err
		}
		if err := file.Close(); err != nil {
			return f, err
		}
	}
	return f, nil
}

// text is the figures as the docs table prints them: the precision the staleness check holds.
func (f *Figures) text(compare string) string {
	switch compare {
	case CompareFaces:
		if f.Faces[0] != f.Faces[1] {
			return fmt.Sprintf("faces %d vs %d (ours)", f.Faces[0], f.Faces[1])
		}
		s := fmt.Sprintf("%d faces; box/score %s, 5 pt %s px, 5/68 %s px, 68 pt %s px", f.Faces[0], num(f.Box), num(f.Five), num(f.Five68), num(f.Points68))
		switch {
		case math.IsNaN(f.Embedding):
			s += ", embedding n/a"
		case math.IsInf(f.Embedding, 1):
			s += ", embedding missing"
		default:
			s += ", embedding " + num(f.Embedding)
		}
		s += "; angle " + same(f.Angle) + ", selection " + same(f.Selection) + ", classes " + f.Classes
		return s
	}
	s := ""
	if compare == CompareVideo {
		s = fmt.Sprintf("%d frames; ", f.Frames[0])
		if f.Frames[0] != f.Frames[1] {
			return fmt.Sprintf("frames %d vs %d (ours)", f.Frames[0], f.Frames[1])
		}
	}
	if f.Size != "" {
		return s + f.Size + " (ours)"
	}
	s += fmt.Sprintf("whole max %d, %s dB", f.Whole.MaxAbs, db(f.Whole.PSNR))
	if f.FaceBox != [4]int{} {
		s += fmt.Sprintf("; face max %d, %s dB", f.Face.MaxAbs, db(f.Face.PSNR))
	} else {
		s += "; no face box"
	}
	return s
}

// num prints a difference to two significant digits (0 as 0).
func num(v float64) string {
	if v == 0 {
		return "0"
	}
	return fmt.Sprintf("%.2g", v)
}

func db(v float64) string {
	if math.IsInf(v, 1) {
		return "∞"
	}
	return fmt.Sprintf("%.1f", v)
}

func same(ok bool) string {
	if ok {
		return "="
	}
	return "≠"
}

// alphaDiffers is "" where the image outputs at a and b carry the same alpha (none, or planes
// within 1 of each other: background_remover's mask), else what differs.
func alphaDiffers(a, b string) string {
	fa, err1 := raster.LoadAlpha(a)
	fb, err2 := raster.LoadAlpha(b)
	switch {
	case err1 != nil || err2 != nil:
		return fmt.Sprintf("reading the outputs' alpha: %v, %v", err1, err2)
	case (fa == nil) != (fb == nil):
		return fmt.Sprintf("alpha: FaceFusion's output has one %v, ours %v", fa != nil, fb != nil)
	case fa == nil:
		return ""
	case fa.W != fb.W || fa.H != fb.H:
		return fmt.Sprintf("alpha: %dx%d, ours %dx%d", fa.W, fa.H, fb.W, fb.H)
	}
	worst := 0
	for i, v := range fa.Pix {
		worst = max(worst, int(v)-int(fb.Pix[i]), int(fb.Pix[i])-int(v))
	}
	if worst > 1 {
		return fmt.Sprintf("alpha max abs %d > 1", worst)
	}
	return ""
}
