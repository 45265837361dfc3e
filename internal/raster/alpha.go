package raster

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
)

// SavePNGAlpha writes img with alpha as an 8-bit RGBA PNG (a lossless temp file).
func (m *Image) SavePNGAlpha(path string, alpha *Alpha) error {
	if alpha == nil || alpha.W != m.W || alpha.H != m.H {
		return fmt.Errorf("%s: an alpha plane of another size than the %dx%d image", path, m.W, m.H)
	}
	out := image.NewNRGBA(image.Rect(0, 0, m.W, m.H))
	for y := 0; y < m.H; y++ {
		for x := 0; x < m.W; x++ {
			o := y*out.Stride + 4*x
			copy(out.Pix[o:o+3], m.Pix[y*m.Stride+3*x:])
			out.Pix[o+3] = alpha.Pix[y*alpha.W+x]
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, out); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Alpha is an image's alpha plane: one byte a pixel, straight (not premultiplied), row by row.
type Alpha struct {
	W, H int
	Pix  []uint8
}

// LoadAlpha is the alpha plane of the PNG or JPEG file at path, or nil where every pixel is
// opaque: FaceFusion reads an image target with its alpha (cv2.IMREAD_UNCHANGED) and writes it
// back beside the processed colours.
func LoadAlpha(path string) (*Alpha, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff {
		return nil, nil // JPEG has no alpha
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable PNG or JPEG image: %w", path, err)
	}
	if o, ok := img.(interface{ Opaque() bool }); ok && o.Opaque() {
		return nil, nil
	}
	b := img.Bounds()
	alpha := make([]uint8, b.Dx()*b.Dy())
	opaque := true
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			a := color.NRGBAModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA).A
			alpha[y*b.Dx()+x] = a
			opaque = opaque && a == 255
		}
	}
	if opaque {
		return nil, nil
	}
	return &Alpha{W: b.Dx(), H: b.Dy(), Pix: alpha}, nil
}

// ResizeAlpha is a resized to w×h as cv2.resize does a one-channel mask (INTER_LINEAR; each
// channel of the RGB kernel is that arithmetic); nil, or a at that size already, is returned
// as it is.
func ResizeAlpha(a *Alpha, w, h int) *Alpha {
	if a == nil || a.W == w && a.H == h {
		return a
	}
	src := New(a.W, a.H)
	for i, v := range a.Pix[:a.W*a.H] {
		src.Pix[3*i], src.Pix[3*i+1], src.Pix[3*i+2] = v, v, v
	}
	dst := New(w, h)
	var rz Resizer
	rz.Resize(dst, dst.Bounds(), src)
	out := &Alpha{W: w, H: h, Pix: make([]uint8, w*h)}
	for i := range out.Pix {
		out.Pix[i] = dst.Pix[3*i]
	}
	return out
}
