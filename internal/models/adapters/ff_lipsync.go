package adapters

import (
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/audio"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// lipCrop is the side of the ffhq_512 crop FaceFusion's lip syncer works in.
const lipCrop = 512

// LipSyncer is FaceFusion's lip syncers (wav2lip_96, wav2lip_gan_96, edtalk_256) on an engine
// (the rank's shared one where the session config has a set), one face a run: sync_lip's crop,
// mask, model call and paste.
type LipSyncer struct {
	model  *catalog.Model
	tmpl   align.Template
	eng    *infer.Engine
	weight float64
	crop   *raster.Image
	box    *raster.Image // wav2lip: the mouth's box; edtalk: the crop; at the model's size
	back   *raster.Image
	mask   []float32
	occ    *masker   // the occlusion mask of the crop; nil without occlusion
	both   []float32 // mask's minimum with occ's
	ws     align.MaskWorkspace
	cv     raster.CVScratch
	voice  []float32
	target []float32
	out    []float32
}

// lowerFace is "lower-face"'s index in align.MaskAreas: wav2lip's area mask.
var lowerFace = slices.IndexFunc(align.MaskAreas, func(a align.MaskArea) bool { return a.Name == "lower-face" })

// NewLipSyncer opens lip syncer name from cfg.ModelsDir with --lip-syncer-weight weight.
// Of mask, edtalk's box mask takes the blur and padding; where its types name occlusion, the
// crop's occlusion mask (mask.Occluder's, the swapper's masker) is taken too, as sync_lip
// takes the minimum of create_occlusion_mask's and the model's own mask. Other types are not
// sync_lip's.
func NewLipSyncer(name string, cfg infer.SessionConfig, weight float64, mask MaskOptions) (*LipSyncer, error) {
	m, err := catalog.Select(catalog.LipSyncer, name)
	if err != nil {
		return nil, err
	}
	var occ *masker
	if slices.Contains(mask.Types, "occlusion") {
		// At the job's batch size, as the other processors open the occluders they share.
		o := MaskOptions{Types: []string{"occlusion"}, Occluder: mask.Occluder}
		if occ, err = newMasker(o, lipCrop, 1, true, cfg); err != nil {
			return nil, err
		}
	}
	// One face at a time, as FaceFusion's loop; the rank's workers share one session of the
	// model (cfg.Engines), each with its own buffers.
	cfg.MaxBatch = 1
	eng, err := infer.OpenEngine(m.Spec(), cfg)
	if err != nil {
		if occ != nil {
			occ.Close()
		}
		return nil, err
	}
	n := m.Size * m.Size
	l := &LipSyncer{model: m, tmpl: align.Templates[m.Template], eng: eng, weight: weight,
		crop: raster.New(lipCrop, lipCrop), box: raster.New(m.Size, m.Size), back: raster.New(lipCrop, lipCrop),
		mask: make([]float32, lipCrop*lipCrop), voice: make([]float32, audio.MelFilters*audio.WindowLength),
		target: make([]float32, int(m.Want.Inputs[1].Shape[1])*n), out: make([]float32, 3*n), occ: occ}
	if occ != nil {
		l.both = make([]float32, lipCrop*lipCrop)
	}
	if m.SyncType() == catalog.EDTalk {
		// The box mask depends on the crop's size alone: made once.
		align.BoxMask(l.mask, lipCrop, lipCrop, mask.Blur, mask.Padding, &l.ws)
	}
	return l, nil
}

// Close lets the engines go (shared ones stay with their set).
func (l *LipSyncer) Close() error {
	err := l.eng.Close()
	if l.occ != nil {
		err = joinErrs([]error{err, l.occ.Close()})
	}
	return err
}

// Sync is sync_lip for one face of frame (its five points, FaceFusion's 5/68, and its 68) with
// voice (nil: FaceFusion's empty window): the ffhq_512 crop, its occlusion mask where asked,
// the model's face and mask on it, and the crop pasted through the masks' minimum.
func (l *LipSyncer) Sync(frame *raster.Image, five [5]geom.Pt, lm *[68]geom.Pt, voice *audio.Window) error {
	m := align.Estimate(five, l.tmpl, lipCrop)
	align.WarpCrop(l.crop, frame, m)
	if l.occ != nil {
		// From the crop as cut, before the model redraws it (create_occlusion_mask's input).
		if err := l.occ.before([]*raster.Image{l.crop}); err != nil {
			return err
		}
	}
	typ := l.model.SyncType()
	facemodel.VoiceInput(l.voice, voice, typ, l.weight)
	if typ == catalog.EDTalk {
		if err := l.edtalk(); err != nil {
			return err
		}
	} else if ok, err := l.wav2lip(lm, m); !ok || err != nil {
		return err
	}
	mask := l.mask
	if l.occ != nil {
		// numpy.minimum.reduce of the crop masks: the model's own and the occlusion mask.
		copy(l.both, l.mask)
		align.MinInto(l.both, l.occ.masks[0])
		mask = l.both
	}
	align.PasteBack(frame, l.back, mask, m)
	return nil
}

// edtalk is sync_lip's edtalk branch on l.crop into l.back (the box mask is made once): the
// crop shrunk to the model's size (INTER_AREA), RGB / 255, the model with the weight, its
// output × 255 truncated and grown back to the crop (INTER_CUBIC).
func (l *LipSyncer) edtalk() error {
	l.cv.ResizeArea(l.box, l.crop)
	facemodel.EDTalkTarget(l.target, l.box)
	if err := l.run(); err != nil {
		return err
	}
	facemodel.LipSyncOutput(l.box, l.out, catalog.EDTalk)
	l.cv.ResizeCubic8(l.back, l.box)
	return nil
}

// wav2lip is sync_lip's wav2lip branch on l.crop (m: the frame→crop map) into l.back and
// l.mask: the lower face's area mask, the mouth's box (the 68 points' bounds in the crop)
// warped to the model's size, the model on it, the box warped back into the crop. False for a
// face of no extent, which FaceFusion's warp would fail on: the frame is left alone.
func (l *LipSyncer) wav2lip(lm *[68]geom.Pt, m geom.Affine) (bool, error) {
	align.AreaMask(l.mask, lipCrop, lipCrop, lm, m, []int{lowerFace}, &l.ws)
	toBox := boxMap(lm, m, l.model.Size)
	warpConstant(l.box, l.crop, toBox)
	facemodel.Wav2LipTarget(l.target, l.box)
	if err := l.run(); err != nil {
		return false, err
	}
	facemodel.LipSyncOutput(l.box, l.out, catalog.Wav2Lip)
	back, ok := toBox.Invert()
	if !ok {
		return false, nil
	}
	// cv2.warpAffine(box, invert(area_matrix), (512, 512), BORDER_REPLICATE): WarpCrop takes
	// the frame→crop map, here the box→crop one.
	align.WarpCrop(l.back, l.box, back)
	return true, nil
}

// run runs the voice and the target (and edtalk's weight, float32 as FaceFusion's
// numpy.array([weight]).astype(numpy.float32)) through one claim of the model into l.out.
func (l *LipSyncer) run() error {
	c, err := l.eng.Claim(1)
	if err != nil {
		return err
	}
	defer c.Release()
	copy(c.In(0, 0).Float32(), l.voice)
	copy(c.In(1, 0).Float32(), l.target)
	if l.model.SyncType() == catalog.EDTalk {
		c.Input("weight", 0).Float32()[0] = float32(l.weight)
	}
	if err := c.Run(); err != nil {
		return err
	}
	copy(l.out, c.Output(0, 0).Float32())
	return nil
}

// boxMap is warp_face_by_bounding_box's map: the 68 points moved into the crop (float32, as
// cv2.transform moves FaceFusion's float32 points), their bounds (create_bounding_box), and
// the map of the bounds' corners onto a size × size box (cv2.getAffineTransform of the three
// corners, float32 points).
func boxMap(lm *[68]geom.Pt, m geom.Affine, size int) geom.Affine {
	a := [6]float32{float32(m.A), float32(m.B), float32(m.C), float32(m.D), float32(m.E), float32(m.F)}
	x1, y1 := float32(math.Inf(1)), float32(math.Inf(1))
	x2, y2 := float32(math.Inf(-1)), float32(math.Inf(-1))
	for _, p := range lm {
		x, y := float32(p.X), float32(p.Y)
		cx := float32(float32(a[0]*x)+float32(a[1]*y)) + a[2]
		cy := float32(float32(a[3]*x)+float32(a[4]*y)) + a[5]
		x1, x2, y1, y2 = min(x1, cx), max(x2, cx), min(y1, cy), max(y2, cy)
	}
	sx := float64(size) / (float64(x2) - float64(x1))
	sy := float64(size) / (float64(y2) - float64(y1))
	return geom.Affine{A: sx, C: -float64(x1) * sx, E: sy, F: -float64(y1) * sy}
}

// warpConstant is cv2.warpAffine(src, m, dst's size) with its default border (zeros outside
// src) and bilinear samples, rounded half to even: warp_face_by_bounding_box's warp (its
// INTER_AREA is INTER_LINEAR to warpAffine).
func warpConstant(dst, src *raster.Image, m geom.Affine) {
	inv, ok := m.Invert()
	if !ok {
		clear(dst.Pix)
		return
	}
	at := func(x, y, c int) float64 {
		if x < 0 || y < 0 || x >= src.W || y >= src.H {
			return 0
		}
		return float64(src.Pix[y*src.Stride+3*x+c])
	}
	for y := 0; y < dst.H; y++ {
		for x := 0; x < dst.W; x++ {
			u := inv.A*float64(x) + inv.B*float64(y) + inv.C
			v := inv.D*float64(x) + inv.E*float64(y) + inv.F
			x0, y0 := math.Floor(u), math.Floor(v)
			ax, ay := u-x0, v-y0
			ix, iy := int(x0), int(y0)
			for c := 0; c < 3; c++ {
				t := at(ix, iy, c)*(1-ax) + at(ix+1, iy, c)*ax
				b := at(ix, iy+1, c)*(1-ax) + at(ix+1, iy+1, c)*ax
				dst.Pix[y*dst.Stride+3*x+c] = uint8(min(max(math.RoundToEven(t*(1-ay)+b*ay), 0), 255))
			}
		}
	}
}
