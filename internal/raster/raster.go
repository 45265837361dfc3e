// Package raster is the frame type of the pipeline: 8-bit interleaved RGB, the layout ffmpeg's
// rgb24 rawvideo delivers, so decoded frames are used in place without conversion.
package raster

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
)

// Image is an 8-bit RGB image; the sample at (x, y), channel c is Pix[y*Stride+3*x+c].
type Image struct {
	Pix    []uint8
	Stride int
	W, H   int
}

// New allocates a black w×h image.
func New(w, h int) *Image {
	return &Image{Pix: make([]uint8, w*h*3), Stride: w * 3, W: w, H: h}
}

// Wrap uses buf (at least w*h*3 bytes, packed rows) as a w×h image without copying.
func Wrap(buf []uint8, w, h int) *Image {
	return &Image{Pix: buf[:w*h*3], Stride: w * 3, W: w, H: h}
}

// Bytes is the packed RGB buffer of the image (rows are always packed here).
func (m *Image) Bytes() []uint8 { return m.Pix[:m.H*m.Stride] }

// Clone returns a deep copy.
func (m *Image) Clone() *Image {
	c := &Image{Pix: make([]uint8, len(m.Pix)), Stride: m.Stride, W: m.W, H: m.H}
	copy(c.Pix, m.Pix)
	return c
}

// At returns the RGB sample at (x, y); the caller keeps x, y inside the image.
func (m *Image) At(x, y int) (r, g, b uint8) {
	i := y*m.Stride + 3*x
	return m.Pix[i], m.Pix[i+1], m.Pix[i+2]
}

// Set writes the RGB sample at (x, y).
func (m *Image) Set(x, y int, r, g, b uint8) {
	i := y*m.Stride + 3*x
	m.Pix[i], m.Pix[i+1], m.Pix[i+2] = r, g, b
}

// FromImage converts any image.Image to RGB (alpha is dropped).
func FromImage(src image.Image) *Image {
	b := src.Bounds()
	m := New(b.Dx(), b.Dy())
	for y := 0; y < m.H; y++ {
		for x := 0; x < m.W; x++ {
			c := color.NRGBAModel.Convert(src.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA)
			m.Set(x, y, c.R, c.G, c.B)
		}
	}
	return m
}

// ToImage returns an image.RGBA copy, for encoding with the standard library.
func (m *Image) ToImage() *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, m.W, m.H))
	for y := 0; y < m.H; y++ {
		for x := 0; x < m.W; x++ {
			r, g, b := m.At(x, y)
			o := y*out.Stride + 4*x
			out.Pix[o], out.Pix[o+1], out.Pix[o+2], out.Pix[o+3] = r, g, b, 255
		}
	}
	return out
}

// decodeJPEG is the JPEG decoder package internal/jpeg registers (libjpeg through cgo): raster
// itself stays pure Go, and a program that reads JPEG files imports internal/jpeg.
var decodeJPEG func([]byte) (*Image, error)

// RegisterJPEG gives Load its JPEG decoder (internal/jpeg's init).
func RegisterJPEG(decode func([]byte) (*Image, error)) { decodeJPEG = decode }

// Load decodes a JPEG or PNG file as FaceFusion's cv2.imread(path, IMREAD_COLOR) does: the
// format by its signature, not its name; JPEG through libjpeg (internal/jpeg); PNG with 16-bit
// samples cut to their high byte (libpng's strip_16), palettes and grey expanded, alpha dropped.
func Load(path string) (*Image, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff {
		if decodeJPEG == nil {
			return nil, fmt.Errorf("%s: a JPEG image, and this program has no JPEG decoder (it must import internal/jpeg)", path)
		}
		img, err := decodeJPEG(data)
		if err != nil {
			return nil, fmt.Errorf("%s: not a readable JPEG image: %v", path, err)
		}
		return img, nil
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable PNG or JPEG image: %w", path, err)
	}
	return fromPNG(img), nil
}

// fromPNG drops alpha without touching the colour samples (Go's generic conversion would
// premultiply 16-bit NRGBA and round).
func fromPNG(src image.Image) *Image {
	b := src.Bounds()
	m := New(b.Dx(), b.Dy())
	switch s := src.(type) {
	case *image.NRGBA64:
		for y := 0; y < m.H; y++ {
			for x := 0; x < m.W; x++ {
				c := s.NRGBA64At(b.Min.X+x, b.Min.Y+y)
				m.Set(x, y, uint8(c.R>>8), uint8(c.G>>8), uint8(c.B>>8))
			}
		}
		return m
	}
	return FromImage(src)
}

// SavePNG writes the image as PNG (test and debugging output; not atomic).
func (m *Image) SavePNG(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, m.ToImage()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
