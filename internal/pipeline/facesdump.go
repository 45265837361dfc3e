package pipeline

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// FacesDump is what `facefusion faces` prints: the faces of an image target as the job finds
// them, in face_selector_order, and which of them the job's selector picks. Its fields are the
// FaceFusion oracle's (faces.py), so that one comparison reads both.
type FacesDump struct {
	Image string     `json:"image"`
	Shape [3]int     `json:"shape"` // height, width, channels
	Faces []FaceDump `json:"faces"`
	// Selected are indices into Faces, in the order the processors take them.
	Selected []int `json:"selected"`
}

// FaceDump is one face. Gender, age and race are fairface's, as FaceFusion's classifier tells
// them (FaceFusion classifies every face; the embedded BlazeFace detector's jobs do not).
type FaceDump struct {
	BoundingBox     [4]float64    `json:"bounding_box"`
	DetectorScore   float64       `json:"detector_score"`
	LandmarkerScore float64       `json:"landmarker_score"`
	Angle           int           `json:"angle"`
	Landmark5       [5][2]float64 `json:"landmark_5"`
	Landmark5From68 [5][2]float64 `json:"landmark_5_68"`
	Landmark68      [][2]float64  `json:"landmark_68"`
	EmbeddingNorm   []float64     `json:"embedding_norm_head,omitempty"`
	Embedding       []float64     `json:"embedding_head,omitempty"`
	Gender          *string       `json:"gender,omitempty"`
	Age             []int         `json:"age,omitempty"`
	Race            *string       `json:"race,omitempty"`
}

// FindFaces analyses cfg's target image with cfg's detector, landmarker, classifier and
// recognizer, and selects as the job would: in reference mode the reference face is the
// target's own (an image target's reference frame); the sources, when given, are read as the
// job reads them (the selector's auto takes their face's gender and race). The models' warnings
// go to log.
func FindFaces(cfg job.Config, log *logging.Logger) (*FacesDump, error) {
	if !cfg.FindsFaces() {
		return nil, fault.AsUsage(fmt.Errorf("faces: the processors find no faces (--processors %s): name a face processor, e.g. face_swapper", strings.Join(cfg.Processors, " ")))
	}
	img, err := raster.Load(cfg.TargetPath)
	if err != nil {
		return nil, fault.AsInput(fmt.Errorf("target %w: give a readable PNG or JPEG", err))
	}
	m, err := LoadModels(cfg, log)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	if len(cfg.SourcePaths) > 0 {
		// The sources as the job reads them: the selector's auto takes their face's class.
		if _, _, err := m.Analyse(context.Background(), nil); err != nil {
			return nil, err
		}
	}
	a, err := m.newAnalyser(true)
	if err != nil {
		return nil, err
	}
	defer a.close()
	if a.cls == nil && cfg.FaceDetectorModel != "blazeface" {
		// FaceFusion's create_faces classifies every face it finds, whatever selects them.
		if a.cls, err = adapters.NewClassifier(m.sessionConfig(facemodel.FairFace.Name)); err != nil {
			return nil, fault.AsEnvironment(err)
		}
	}
	found, err := a.analyse(img)
	if err != nil {
		return nil, fault.AsInternal(fmt.Errorf("target %s: %w", cfg.TargetPath, err))
	}
	detected := slices.Clone(found) // the detector's order: reference mode matches in it
	sorted := slices.Clone(found)
	sel := selector(cfg, m.SourceClass())
	facemodel.SortFaces(sorted, sel.Order)
	// FaceFusion's sort_and_filter_faces: the class filters drop faces from the list itself.
	sorted = slices.DeleteFunc(sorted, func(f face.Face) bool { return !sel.Keeps(&f) })

	var ref *face.Embedding
	if sel.Mode == facemodel.SelectReference {
		if r, ok := sel.Reference(slices.Clone(found)); ok {
			e := r.Embedding
			ref = &e
		}
	}
	d := &FacesDump{Image: cfg.TargetPath, Shape: [3]int{img.H, img.W, 3}, Faces: []FaceDump{}, Selected: []int{}}
	for i := range sorted {
		d.Faces = append(d.Faces, dumpFace(&sorted[i]))
	}
	for _, i := range sel.Select(nil, detected, ref) {
		d.Selected = append(d.Selected, slices.IndexFunc(sorted, func(f face.Face) bool {
			return f.Box == detected[i].Box && f.Score == detected[i].Score
		}))
	}
	return d, nil
}

func dumpFace(f *face.Face) FaceDump {
	pt := func(p geom.Pt) [2]float64 { return [2]float64{round6(p.X), round6(p.Y)} }
	d := FaceDump{
		BoundingBox:     [4]float64{round6(f.Box.X0), round6(f.Box.Y0), round6(f.Box.X1), round6(f.Box.Y1)},
		DetectorScore:   f.Score,
		LandmarkerScore: f.LandmarkScore,
		Angle:           f.Angle,
	}
	for i := range 5 {
		d.Landmark5[i] = pt(f.DetectorFive[i])
		d.Landmark5From68[i] = pt(f.Five[i])
	}
	for _, p := range f.Landmarks {
		d.Landmark68 = append(d.Landmark68, pt(p))
	}
	if c := f.Class; c.Gender != "" {
		d.Gender, d.Race, d.Age = &c.Gender, &c.Race, []int{c.Age[0], c.Age[1]}
	}
	var zero face.Embedding
	if f.Embedding != zero {
		for i := range 6 {
			d.EmbeddingNorm = append(d.EmbeddingNorm, round6(float64(f.Embedding.Norm[i])))
			d.Embedding = append(d.Embedding, round6(float64(f.Embedding.Raw[i])))
		}
	}
	return d
}

// round6 rounds as the oracle prints (numpy's round(6)).
func round6(v float64) float64 { return math.RoundToEven(v*1e6) / 1e6 }
