package swap

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"unsafe"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// orderFace is a target for TestSwapperCarriesNothingFromFaceToFace: a photo, painted, and its
// landmarks.
type orderFace struct {
	name string
	img  *raster.Image
	lm   face.Landmarks68
}

// orderPainted is img with c painted over the face with landmarks lm, as occlusionRun paints it.
func orderPainted(img *raster.Image, lm *face.Landmarks68, c occCase) *raster.Image {
	b := geom.Bounds(lm[:])
	size := math.Max(b.W(), b.H())
	rng := rand.New(rand.NewPCG(7, 7))
	out := img.Clone()
	for y := range img.H {
		for x := range img.W {
			if c.shape.inside(lm, size, float64(x), float64(y)) {
				col := c.tex.colour(c.hue, x, y, rng)
				out.Set(x, y, col.R, col.G, col.B)
			}
		}
	}
	return out
}

// orderFaces are the astronaut's face as a source and TestSwapperCarriesNothingFromFaceToFace's
// targets.
func orderFaces(t *testing.T) (*Source, []orderFace) {
	p := photos(t)
	src, err := NewSource(p.src, &p.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	flat := occTextures[0]
	tan := raster.RGB{R: 196, G: 154, B: 108}
	grace, astro := p.dst, p.src
	shaded, _ := shadowed(grace, &p.dstLm, shadowCases[0])
	faces := []orderFace{
		{"grace bare", grace, p.dstLm},
		{"grace, a pencil of her hue between the lips", orderPainted(grace, &p.dstLm, occCase{shape: pencilAcrossLips, tex: flat, hue: hoSkinOf(grace, &p.dstLm)}), p.dstLm},
		{"astronaut, a forearm of her hue across the mouth", orderPainted(astro, &p.srcLm, occCase{shape: lcShapes[1], tex: flat, hue: hoSkinOf(astro, &p.srcLm)}), p.srcLm},
		{"grace, a knitted mitten on the cheek", orderPainted(grace, &p.dstLm, occCase{shape: knitShapes[0], tex: knitTextures()[1], hue: tan}), p.dstLm},
		{"grace, half in shadow", shaded, p.dstLm},
		{"astronaut bare", astro, p.srcLm},
		{"grace, a cotton pad on an eye", orderPainted(grace, &p.dstLm, occCase{shape: ecShapes[2], tex: flat, hue: tan}), p.dstLm},
		{"astronaut, a pencil of her hue between the lips", orderPainted(astro, &p.srcLm, occCase{shape: pencilAcrossLips, tex: flat, hue: hoSkinOf(astro, &p.srcLm)}), p.srcLm},
	}
	return src, faces
}

// A Swapper carries nothing from one face to the next: one Swapper that swaps faces of two
// sizes (a large face and a small one), bare and with covers that the band, lattice, eye-cover,
// mouth and shadow rules find, forwards and then backwards, gives every face the swap and the
// cover (FindCover) a fresh Swapper gives it. A rank's engine swaps whatever frames its chunk
// holds, so otherwise the output would depend on the rank count and the chunk size.
func TestSwapperCarriesNothingFromFaceToFace(t *testing.T) {
	fullTier(t, "swaps 24 faces")
	src, faces := orderFaces(t)
	swap := func(s *Swapper, f *orderFace) (*raster.Image, *face.Cover) {
		c := s.FindCover(f.img, &f.lm)
		out := f.img.Clone()
		s.Apply(out, &f.lm)
		return out, c
	}
	want := make([]*raster.Image, len(faces))
	covers := make([]*face.Cover, len(faces))
	for i := range faces {
		want[i], covers[i] = swap(NewSwapper(src, DefaultOptions()), &faces[i])
	}
	s := NewSwapper(src, DefaultOptions())
	order := make([]int, 0, 2*len(faces))
	for i := range faces {
		order = append(order, i)
	}
	for i := range faces {
		order = append(order, len(faces)-1-i)
	}
	for k, i := range order {
		out, c := swap(s, &faces[i])
		if !slices.Equal(out.Pix, want[i].Pix) {
			t.Errorf("%s, swapped %d faces after a fresh Swapper: differs from a fresh Swapper's swap", faces[i].name, k)
		}
		if !sameCover(c, covers[i]) {
			t.Errorf("%s, swapped %d faces after a fresh Swapper: its cover differs from a fresh Swapper's", faces[i].name, k)
		}
	}
}

// A Swapper reads no scratch that its own face has not written: one whose every buffer holds
// garbage after it swapped a large face swaps each face, and finds its cover, as a fresh one.
func TestSwapperReadsNoStaleScratch(t *testing.T) {
	fullTier(t, "swaps 56 faces")
	src, faces := orderFaces(t)
	for i := range faces {
		f := &faces[i]
		want := f.img.Clone()
		fresh := NewSwapper(src, DefaultOptions())
		cover := fresh.FindCover(f.img, &f.lm)
		fresh.Apply(want, &f.lm)
		for _, v := range []float64{0.7, -1, 3} {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s, scratch poisoned with %v: panic: %v", f.name, v, r)
					}
				}()
				s := NewSwapper(src, DefaultOptions())
				s.Apply(faces[3].img.Clone(), &faces[3].lm) // the buffers sized, as a face before leaves them
				poisonScratch(s, v)
				c := s.FindCover(f.img, &f.lm)
				poisonScratch(s, v)
				out := f.img.Clone()
				s.Apply(out, &f.lm)
				if !sameCover(c, cover) {
					t.Errorf("%s, scratch poisoned with %v: its cover differs from a fresh Swapper's", f.name, v)
				}
				if !slices.Equal(out.Pix, want.Pix) {
					t.Errorf("%s, scratch poisoned with %v: the swap differs from a fresh Swapper's", f.name, v)
				}
			}()
		}
	}
}

// sameCover reports whether a and b are the same cover, bit for bit.
func sameCover(a, b *face.Cover) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Rect == b.Rect && a.Landmarks == b.Landmarks && a.ShadeFactor == b.ShadeFactor &&
		slices.Equal(a.Pix, b.Pix) && slices.Equal(a.Shade, b.Shade)
}

// poisonScratch writes v into every element, up to its capacity, of every slice of numbers or
// booleans that s holds (in its fields, their structs and arrays), as another face's swap
// might have left them; it leaves pointers (the source, the votes' covers) and the blurs'
// kernels alone.
func poisonScratch(s *Swapper, v float64) {
	poisonValue(reflect.ValueOf(s).Elem(), v)
}

func poisonValue(f reflect.Value, v float64) {
	if !f.CanSet() {
		f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
	}
	switch f.Kind() {
	case reflect.Struct:
		for i := range f.NumField() {
			if f.Type() == reflect.TypeFor[raster.Blur]() && f.Type().Field(i).Name == "kernel" {
				continue // the kernel of the sigma it notes: not scratch
			}
			poisonValue(f.Field(i), v)
		}
	case reflect.Array:
		for i := range f.Len() {
			poisonValue(f.Index(i), v)
		}
	case reflect.Slice:
		if f.Type().Elem().Kind() == reflect.Pointer {
			return
		}
		full := f.Slice(0, f.Cap())
		for i := range full.Len() {
			poisonElem(full.Index(i), v)
		}
	}
}

// poisonElem writes v into e, a slice's element: a number, a boolean, or a struct or array of
// them (recursively; nested slices are poisoned whole).
func poisonElem(e reflect.Value, v float64) {
	switch e.Kind() {
	case reflect.Float32, reflect.Float64:
		e.SetFloat(v)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.SetInt(int64(v))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		e.SetUint(uint64(math.Abs(v)))
	case reflect.Bool:
		e.SetBool(v != 0)
	case reflect.Struct:
		for i := range e.NumField() {
			f := e.Field(i)
			poisonElem(reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem(), v)
		}
	case reflect.Array:
		for i := range e.Len() {
			poisonElem(e.Index(i), v)
		}
	case reflect.Slice:
		poisonValue(e, v)
	}
}
