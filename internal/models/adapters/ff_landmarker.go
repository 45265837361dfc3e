package adapters

import (
	"fmt"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// FaceLandmarker is FaceFusion's face landmarker (face_landmarker.py) on engines, one face per
// run: fan_68_5 for the face angle, then 2dfan4, peppa_wutz or both on the crop turned upright
// by that angle.
type FaceLandmarker struct {
	est, fan4, peppa *infer.Engine
}

// NewFaceLandmarker opens fan_68_5 and the landmarkers model (2dfan4, peppa_wutz or many)
// names; cfg gives each model's session configuration by its name.
func NewFaceLandmarker(model string, cfg func(name string) infer.SessionConfig) (*FaceLandmarker, error) {
	names, ok := facemodel.LandmarkerModels(model)
	if !ok {
		return nil, fmt.Errorf("face landmarker model %q: not one of FaceFusion's (2dfan4, peppa_wutz, many)", model)
	}
	l := new(FaceLandmarker)
	open := func(name string) (*infer.Engine, error) {
		c := cfg(name)
		c.MaxBatch = 1
		return openModel(name, c)
	}
	var err error
	if l.est, err = open(facemodel.Fan68From5.Name); err != nil {
		return nil, err
	}
	for _, name := range names {
		e, err := open(name)
		if err != nil {
			l.Close()
			return nil, err
		}
		if name == facemodel.FAN4.Name {
			l.fan4 = e
		} else {
			l.peppa = e
		}
	}
	return l, nil
}

// Landmark completes f from its detection as FaceFusion's create_faces does: the 68 points
// fan_68_5 estimates from the detector's five and the face angle from them, then, when
// threshold (--face-landmarker-score) is above 0, the landmarker's 68 points and score on the
// crop turned by that angle; f.Five becomes the 68 points' five when the score beats threshold.
// Without a landmarker run the 68 points are fan_68_5's, with score 0. A face without the
// detector's five (BlazeFace's) has angle 0 and always gets the landmarker's points.
func (l *FaceLandmarker) Landmark(img *raster.Image, f *face.Face, threshold float64) error {
	if l.est == nil {
		return fmt.Errorf("face landmarker: Landmark after Close")
	}
	// BlazeFace (the embedded detector) gives no five points: no angle to estimate, and the
	// landmarker runs whatever the threshold, since nothing else would give the face points.
	detected := f.DetectorFive != [5]geom.Pt{}
	f.Landmarks68From5, f.Angle = face.Landmarks68{}, 0
	if detected {
		if err := l.estimate(f); err != nil {
			return err
		}
		f.Angle = f.Landmarks68From5.Angle()
	}
	f.Landmarks, f.LandmarkScore = f.Landmarks68From5, 0
	if threshold > 0 || !detected {
		var fan4, peppa face.Landmarks68
		var s4, sp float64
		var err error
		if l.fan4 != nil {
			if s4, err = l.run2DFAN4(img, f, &fan4); err != nil {
				return err
			}
		}
		if l.peppa != nil {
			if sp, err = l.runPeppa(img, f, &peppa); err != nil {
				return err
			}
		}
		var p4, pp *face.Landmarks68
		if l.fan4 != nil {
			p4 = &fan4
		}
		if l.peppa != nil {
			pp = &peppa
		}
		// With no pick (see PickLandmarks) FaceFusion's face has no 68 points; fan_68_5's stay.
		if pick, score := facemodel.PickLandmarks(p4, s4, pp, sp); pick != nil {
			f.Landmarks, f.LandmarkScore = *pick, score
		}
	}
	f.Five = facemodel.WarpFive(f.DetectorFive, &f.Landmarks, f.LandmarkScore, threshold)
	return nil
}

func (l *FaceLandmarker) estimate(f *face.Face) error {
	ls, err := l.est.Claim(1)
	if err != nil {
		return err
	}
	defer ls.Release()
	m := facemodel.Prepare68From5(ls.In(0, 0).Float32(), f.DetectorFive)
	if err := ls.Run(); err != nil {
		return err
	}
	if err := facemodel.Decode68From5(&f.Landmarks68From5, ls.Output(0, 0).Float32(), m); err != nil {
		return fmt.Errorf("model fan_68_5 %s: %w", l.est.Path(), err)
	}
	return nil
}

func (l *FaceLandmarker) run2DFAN4(img *raster.Image, f *face.Face, out *face.Landmarks68) (float64, error) {
	ls, err := l.fan4.Claim(1)
	if err != nil {
		return 0, err
	}
	defer ls.Release()
	m, err := facemodel.PrepareFAN4(ls.In(0, 0).Float32(), img, f.Box, f.Angle)
	if err != nil {
		return 0, err
	}
	if err := ls.Run(); err != nil {
		return 0, err
	}
	score, err := facemodel.DecodeFAN4(out, ls.Output(0, 0).Float32(), ls.Output(1, 0).Float32(), m)
	if err != nil {
		return 0, fmt.Errorf("model 2dfan4 %s: %w", l.fan4.Path(), err)
	}
	return score, nil
}

func (l *FaceLandmarker) runPeppa(img *raster.Image, f *face.Face, out *face.Landmarks68) (float64, error) {
	ls, err := l.peppa.Claim(1)
	if err != nil {
		return 0, err
	}
	defer ls.Release()
	m, err := facemodel.PreparePeppa(ls.In(0, 0).Float32(), img, f.Box, f.Angle)
	if err != nil {
		return 0, err
	}
	if err := ls.Run(); err != nil {
		return 0, err
	}
	score, err := facemodel.DecodePeppa(out, ls.Output(0, 0).Float32(), m)
	if err != nil {
		return 0, fmt.Errorf("model peppa_wutz %s: %w", l.peppa.Path(), err)
	}
	return score, nil
}

// Close lets the engines go (closing those that are the landmarker's own).
func (l *FaceLandmarker) Close() error {
	var first error
	for _, e := range []**infer.Engine{&l.est, &l.fan4, &l.peppa} {
		if *e != nil {
			if err := (*e).Close(); err != nil && first == nil {
				first = err
			}
			*e = nil
		}
	}
	return first
}
