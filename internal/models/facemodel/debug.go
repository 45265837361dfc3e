package facemodel

import (
	"fmt"
	"image"
	"math"
	"slices"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// DebuggerItem is one thing FaceFusion's face_debugger processor draws on each selected face
// (its --face-debugger-items).
type DebuggerItem struct {
	Name string
	// Needs68From5 says that the item draws the 68 points fan_68_5 estimates from the
	// detector's five, which run only with FaceFusion's detectors and landmarkers.
	Needs68From5 bool
}

// DebuggerItems are FaceFusion 3.8.1's face_debugger items (its choices.py), in the order it
// draws them. The one list: the job's validation and the drawing both read it.
var DebuggerItems = []DebuggerItem{
	{Name: "bounding-box"},
	{Name: "face-mask"},
	{Name: "face-landmark-5"},
	{Name: "face-landmark-5/68"},
	{Name: "face-landmark-68"},
	{Name: "face-landmark-68/5", Needs68From5: true},
}

// DebuggerItemNames are the names of DebuggerItems; drawable only: those drawn without
// fan_68_5's points.
func DebuggerItemNames(drawable bool) []string {
	var names []string
	for _, it := range DebuggerItems {
		if !drawable || !it.Needs68From5 {
			names = append(names, it.Name)
		}
	}
	return names
}

// LookupDebuggerItem is the item named name; ok is false when FaceFusion has no such item.
func LookupDebuggerItem(name string) (it DebuggerItem, ok bool) {
	i := slices.IndexFunc(DebuggerItems, func(it DebuggerItem) bool { return it.Name == name })
	if i < 0 {
		return it, false
	}
	return DebuggerItems[i], true
}

// CheckDebuggerItems refuses a name that is not a face_debugger item, and one that needs
// fan_68_5's points when the job's models give none (fan68From5 false: the embedded blazeface
// or dlib_68), naming it, why and what can be drawn.
func CheckDebuggerItems(items []string, fan68From5 bool) error {
	for _, name := range items {
		it, ok := LookupDebuggerItem(name)
		switch {
		case !ok:
			return fmt.Errorf("%q is not one of %s", name, strings.Join(DebuggerItemNames(false), ", "))
		case it.Needs68From5 && !fan68From5:
			return fmt.Errorf("%s cannot be drawn: it draws the 68 points FaceFusion's fan_68_5 model estimates from the detector's five, which run only with FaceFusion's detectors and landmarkers, not blazeface or dlib_68; choose those, or drop it (drawn with these: %s)",
				name, strings.Join(DebuggerItemNames(true), ", "))
		}
	}
	if len(items) == 0 {
		return fmt.Errorf("give at least one of %s", strings.Join(DebuggerItemNames(false), ", "))
	}
	return nil
}

// FaceFusion's debugger colours (its BGR tuples, here as RGB).
var (
	debugRed      = raster.RGB{R: 255}                 // the box, the detector's points
	debugLightRed = raster.RGB{R: 255, G: 100, B: 100} // the box's top edge: the face's upright side
	debugGreen    = raster.RGB{G: 255}                 // the landmarker's points, the mask
	debugCyan     = raster.RGB{G: 255, B: 255}         // the same when the landmarker fell back; fan_68_5's points
	debugOrange   = raster.RGB{R: 255, G: 165}         // every point and the mask of a face the tracker refilled
)

// DebugCrop is the side of the crop the mask is drawn from: FaceFusion's arcface_128 at 512.
const DebugCrop = 512

const debugCrop = DebugCrop

// Debugger draws FaceFusion's face_debugger items on frames. It keeps scratch buffers between
// calls, so it is not safe for concurrent use: make one per worker.
type Debugger struct {
	items    map[string]bool
	padding  [4]int
	mask     []float32 // the crop's box mask, made once
	mask8    []uint8   // the box mask as FaceFusion warps it back: 8-bit, truncated
	maskm8   []uint8   // the same of the masker's mask
	inside   []uint8
	ws       align.MaskWorkspace
	contours raster.ContourFinder
	masker   CropMasker    // the mask types beyond the box; nil: the box mask alone
	crop     *raster.Image // the arcface_128 crop the masker reads
}

// CropMasker makes FaceFusion's crop mask (its face_mask_types, the box unblurred) of a crop
// of the frame: landmarks are the face's 68 points in the frame, toCrop the frame-to-crop
// map. The result is valid until the next call.
type CropMasker interface {
	Mask(crop *raster.Image, landmarks *[68]geom.Pt, toCrop geom.Affine) ([]float32, error)
}

// UseMasker makes face-mask outline m's masks instead of the box mask alone: FaceFusion's
// draw_face_mask runs every type of face_mask_types on the crop of the frame as drawn so far.
func (d *Debugger) UseMasker(m CropMasker) {
	d.masker = m
	if d.crop == nil {
		d.crop = raster.New(debugCrop, debugCrop)
	}
}

// NewDebugger checks items' names (CheckDebuggerItems; whether the models give fan_68_5's
// points is the job's to check) and prepares the box mask for FaceFusion's
// --face-mask-padding (top, right, bottom, left, in percent): the face-mask item's mask
// unless UseMasker gives one.
func NewDebugger(items []string, padding [4]int) (*Debugger, error) {
	if err := CheckDebuggerItems(items, true); err != nil {
		return nil, err
	}
	d := &Debugger{items: map[string]bool{}, padding: padding, mask: make([]float32, debugCrop*debugCrop), mask8: make([]uint8, debugCrop*debugCrop)}
	for _, it := range items {
		d.items[it] = true
	}
	// FaceFusion draws the mask from create_box_mask with no blur.
	align.BoxMask(d.mask, debugCrop, debugCrop, 0, padding, &d.ws)
	for i, v := range d.mask {
		d.mask8[i] = uint8(min(1, max(0, v)) * 255) // numpy's astype(uint8) truncates
	}
	return d, nil
}

// DebugScale is FaceFusion's calculate_scale: the stroke width and point radius for a frame
// h pixels high, round(h/270) (Python's rounding, half to even) within 1..10.
func DebugScale(h int) int {
	return max(1, min(10, int(math.RoundToEven(float64(h)/270))))
}

// Draw paints the items on img for face f in FaceFusion's order (box, mask, then the points),
// with OpenCV's strokes and discs as FaceFusion calls them. Points and boxes are truncated to
// whole pixels, as FaceFusion casts them. An error is the masker's.
func (d *Debugger) Draw(img *raster.Image, f *face.Face) error {
	t := DebugScale(img.H)
	fallback := f.Five == f.DetectorFive // the landmarker fell back to the detector's five
	landmarkColour, pointColour, landmark68Colour, estimateColour := debugGreen, debugRed, debugGreen, debugCyan
	if fallback {
		landmarkColour = debugCyan
	}
	if f.Landmarks == f.Landmarks68From5 { // no landmarker's points: fan_68_5's stand in
		landmark68Colour = debugCyan
	}
	if f.Refill {
		landmarkColour, pointColour, landmark68Colour, estimateColour = debugOrange, debugOrange, debugOrange, debugOrange
	}
	if d.items["bounding-box"] {
		x0, y0, x1, y1 := int(f.Box.X0), int(f.Box.Y0), int(f.Box.X1), int(f.Box.Y1)
		img.StrokeRect(x0, y0, x1, y1, t, debugRed)
		img.Line(image.Pt(x0, y0), image.Pt(x1, y0), t+1, debugLightRed) // FaceFusion's angle 0: the top is up
	}
	if d.items["face-mask"] {
		if err := d.drawMask(img, f, t, landmarkColour); err != nil {
			return err
		}
	}
	if d.items["face-landmark-5"] {
		for _, p := range d.detectorPoints(f) {
			img.FillCircle(int(p.X), int(p.Y), t, pointColour)
		}
	}
	if d.items["face-landmark-5/68"] && f.Five != [5]geom.Pt{} {
		for _, p := range f.Five {
			img.FillCircle(int(p.X), int(p.Y), t, landmarkColour)
		}
	}
	if d.items["face-landmark-68"] && f.Landmarks != [68]geom.Pt{} {
		for _, p := range f.Landmarks {
			img.FillCircle(int(p.X), int(p.Y), t, landmark68Colour)
		}
	}
	if d.items["face-landmark-68/5"] && f.Landmarks68From5 != [68]geom.Pt{} {
		for _, p := range f.Landmarks68From5 {
			img.FillCircle(int(p.X), int(p.Y), t, estimateColour)
		}
	}
	return nil
}

// detectorPoints are the detector's own points: its five, or BlazeFace's keypoints (it has
// no five). Empty when it gave none, as FaceFusion skips an all-zero '5'.
func (d *Debugger) detectorPoints(f *face.Face) []geom.Pt {
	if f.DetectorFive != [5]geom.Pt{} {
		return f.DetectorFive[:]
	}
	if f.Keypoints != [6]geom.Pt{} {
		return f.Keypoints[:]
	}
	return nil
}

// drawMask outlines where the mask of the face's arcface_128 crop lands in the frame, as
// FaceFusion's draw_face_mask: the 8-bit crop mask warped back (bilinear, rounded), kept
// above 100, and the borders of what is kept (cv2.findContours) drawn t pixels thick.
func (d *Debugger) drawMask(img *raster.Image, f *face.Face, t int, c raster.RGB) error {
	toCrop := align.Estimate(f.Five, align.ArcFace128, debugCrop)
	toFrame, ok := toCrop.Invert()
	if !ok {
		return nil
	}
	mask8 := d.mask8
	if d.masker != nil {
		align.WarpCrop(d.crop, img, toCrop)
		m, err := d.masker.Mask(d.crop, (*[68]geom.Pt)(&f.Landmarks), toCrop)
		if err != nil {
			return err
		}
		mask8 = d.inside8(m)
	}
	// The frame pixels the crop can reach: its corners, a pixel beyond it, mapped back,
	// with a pixel of margin that stays outside.
	r := image.Rectangle{Min: image.Pt(math.MaxInt32, math.MaxInt32), Max: image.Pt(math.MinInt32, math.MinInt32)}
	for _, q := range [4]geom.Pt{{X: -1, Y: -1}, {X: debugCrop + 1, Y: -1}, {X: -1, Y: debugCrop + 1}, {X: debugCrop + 1, Y: debugCrop + 1}} {
		p := toFrame.Apply(q)
		r.Min.X, r.Min.Y = min(r.Min.X, int(math.Floor(p.X))-1), min(r.Min.Y, int(math.Floor(p.Y))-1)
		r.Max.X, r.Max.Y = max(r.Max.X, int(math.Ceil(p.X))+2), max(r.Max.Y, int(math.Ceil(p.Y))+2)
	}
	r = r.Intersect(image.Rect(0, 0, img.W, img.H))
	if r.Empty() {
		return nil
	}
	w, h := r.Dx(), r.Dy()
	if cap(d.inside) < w*h {
		d.inside = make([]uint8, w*h)
	}
	d.inside = d.inside[:w*h]
	for y := range h {
		for x := range w {
			p := toCrop.Apply(geom.Pt{X: float64(r.Min.X + x), Y: float64(r.Min.Y + y)})
			d.inside[y*w+x] = 0
			if math.RoundToEven(sample(mask8, p.X, p.Y)) > 100 { // cv2.threshold(…, 100, 255, THRESH_BINARY)
				d.inside[y*w+x] = 1
			}
		}
	}
	img.DrawContours(d.contours.Find(d.inside, w, h), r.Min, t, c)
	return nil
}

// inside8 is the crop mask m as FaceFusion warps it back: clipped, ×255, truncated to 8 bits.
func (d *Debugger) inside8(m []float32) []uint8 {
	if d.maskm8 == nil {
		d.maskm8 = make([]uint8, debugCrop*debugCrop)
	}
	for i, v := range m[:debugCrop*debugCrop] {
		d.maskm8[i] = uint8(min(1, max(0, v)) * 255)
	}
	return d.maskm8
}

// sample is the 8-bit crop mask m at (x, y), bilinear in float64, zero outside the crop
// (OpenCV's constant border).
func sample(m []uint8, x, y float64) float64 {
	fx, fy := math.Floor(x), math.Floor(y)
	ix, iy := int(fx), int(fy)
	ax, ay := x-fx, y-fy
	at := func(i, j int) float64 {
		if i < 0 || j < 0 || i >= debugCrop || j >= debugCrop {
			return 0
		}
		return float64(m[j*debugCrop+i])
	}
	top := at(ix, iy)*(1-ax) + at(ix+1, iy)*ax
	bottom := at(ix, iy+1)*(1-ax) + at(ix+1, iy+1)*ax
	return top*(1-ay) + bottom*ay
}
