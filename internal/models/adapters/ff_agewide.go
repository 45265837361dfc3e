package adapters

import (
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// wideCrop is styleganex_age's part of modify_age: the wider crop the model also takes and
// whose aged version, four times its side, is what is pasted back.
type wideCrop struct {
	tmpl    align.Template
	size    int
	scale   float64
	paste   int
	box     []float32 // the box mask at the wide crop's size
	occ     *masker   // the occlusion mask of the face crop; nil without occlusion
	occWide []float32
	small   []float32 // the wide crop's mask
	mask    []float32 // small, resized to paste×paste
	crop    *raster.Image
	out     *raster.Image // the model's output as 8 bits (its side)
	pasted  *raster.Image // paste×paste
	ws      align.MaskWorkspace
	cv      raster.CVScratch
	colour  facemodel.ColorMatcher
}

func newWideCrop(m *catalog.Model, mask MaskOptions, cfg infer.SessionConfig) (*wideCrop, error) {
	w := &wideCrop{tmpl: align.Templates[m.WideTemplate], size: m.WideSize, scale: m.WideScale, paste: m.PasteSize,
		crop: raster.New(m.WideSize, m.WideSize), pasted: raster.New(m.PasteSize, m.PasteSize)}
	side := int(m.Want.Outputs[0].Shape[2])
	w.out = raster.New(side, side)
	w.box = make([]float32, w.size*w.size)
	align.BoxMask(w.box, w.size, w.size, mask.Blur, [4]int{}, &w.ws)
	w.small, w.mask = make([]float32, w.size*w.size), make([]float32, w.paste*w.paste)
	if slices.Contains(mask.Types, "occlusion") {
		occ := MaskOptions{Types: []string{"occlusion"}, Occluder: mask.Occluder}
		var err error
		if w.occ, err = newMasker(occ, m.Size, 1, true, cfg); err != nil {
			return nil, err
		}
		w.occWide = make([]float32, w.size*w.size)
	}
	return w, nil
}

func (w *wideCrop) close() error {
	if w.occ != nil {
		return w.occ.Close()
	}
	return nil
}

// StyleGANExDirection is styleganex_age's 'direction' for --age-modifier-direction d:
// numpy.interp(d, [−100, 100], [2.5, −2.5]) as float32.
func StyleGANExDirection(d int) float32 {
	if d >= 100 {
		return -2.5
	}
	slope := (-2.5 - 2.5) / (100.0 - -100.0)
	return float32(slope*(float64(d) - -100) + 2.5)
}

// modify runs styleganex_age on a.crop (the face, cut at m) and the wide crop around it.
func (w *wideCrop) modify(a *AgeModifier, it FaceRef, m geom.Affine) (AgeResult, error) {
	var five [5]geom.Pt // scale_face_landmark_5: about the nose tip
	for i, p := range it.Five {
		five[i] = geom.Pt{X: (p.X-it.Five[2].X)*w.scale + it.Five[2].X, Y: (p.Y-it.Five[2].Y)*w.scale + it.Five[2].Y}
	}
	mw := align.Estimate(five, w.tmpl, w.size)
	align.WarpCrop(w.crop, it.Frame, mw)
	mask := w.small
	copy(mask, w.box)
	if w.occ != nil {
		if err := w.occ.before([]*raster.Image{a.crop}); err != nil {
			return AgeResult{}, err
		}
		// FaceFusion moves the face crop's mask by merge_matrix([extend, invert(affine)]):
		// the wide crop's map, then the face crop's inverse, as it composes them.
		inv, _ := facemodel.InvertAffine(m)
		warpMask(w.occWide, w.size, w.occ.masks[0], a.model.Size, mw.Then(inv))
		align.MinInto(mask, w.occWide)
	}
	align.Clip01(mask)
	if err := w.run(a); err != nil {
		return AgeResult{}, err
	}
	w.cv.ResizeArea(w.pasted, w.out)
	w.colour.Match(w.crop, w.pasted)
	align.ResizeMask(w.mask, w.paste, w.paste, mask, w.size, w.size, false, &w.ws)
	k := float64(a.model.Size*4) / float64(w.size) // FaceFusion's extend_affine_matrix *= …
	pm := geom.Affine{A: mw.A * k, B: mw.B * k, C: mw.C * k, D: mw.D * k, E: mw.E * k, F: mw.F * k}
	return AgeResult{Crop: w.pasted, Mask: w.mask, Map: pm}, nil
}

// run runs the model on the face and wide crops; its output, as normalize_extend_frame makes
// it 8 bits (clipped to [−1, 1], (v + 1)/2 · 255 in float32, truncated), goes to w.out.
func (w *wideCrop) run(a *AgeModifier) error {
	l, err := a.eng.Claim(1)
	if err != nil {
		return err
	}
	defer l.Release()
	facemodel.TensorFromImage(l.Input("target", 0).Float32(), a.crop, a.model.Norm)
	facemodel.TensorFromImage(l.Input("target_with_background", 0).Float32(), w.crop, a.model.Norm)
	l.Input("direction", 0).Float32()[0] = StyleGANExDirection(a.direction)
	if err := l.Run(); err != nil {
		return err
	}
	out := l.Output(0, 0).Float32()
	hw := w.out.W * w.out.H
	for c := range 3 {
		plane := out[c*hw:][:hw]
		for i, v := range plane {
			v = (min(1, max(-1, v)) + 1) / 2
			w.out.Pix[3*i+c] = uint8(float32(v * 255))
		}
	}
	return nil
}

// warpMask is cv2.warpAffine of the sw×sw float mask src by m (source → destination) into the
// dw×dw dst, bilinear, zero outside, in float64 (the oracle's float warp; OpenCV 5's).
func warpMask(dst []float32, dw int, src []float32, sw int, m geom.Affine) {
	inv, _ := facemodel.InvertAffine(m)
	at := func(x, y int) float64 {
		if x < 0 || y < 0 || x >= sw || y >= sw {
			return 0
		}
		return float64(src[y*sw+x])
	}
	for y := range dw {
		for x := range dw {
			sx := inv.A*float64(x) + inv.B*float64(y) + inv.C
			sy := inv.D*float64(x) + inv.E*float64(y) + inv.F
			x0, y0 := int(math.Floor(sx)), int(math.Floor(sy))
			fx, fy := sx-float64(x0), sy-float64(y0)
			top := at(x0, y0)*(1-fx) + at(x0+1, y0)*fx
			bottom := at(x0, y0+1)*(1-fx) + at(x0+1, y0+1)*fx
			dst[y*dw+x] = float32(top*(1-fy) + bottom*fy)
		}
	}
}
