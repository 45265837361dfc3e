package raster

import (
	"fmt"
	"image"
	"image/color"
	"os"
)

// Alpha is an image's alpha plane: one byte a pixel, straight (not premultiplied), row by row.
type Alpha struct {
	W, H int
	Pix  []uint8
}

// LoadAlpha is the alpha plane of the PNG or JPEG file at path, or nil where every pixel is
// opaque: FaceFusion reads an image target with its alpha (cv2.IMREAD_UNCHANGED) and writes it
// back beside the processed colours.
func LoadAlpha(path string) (*Alpha, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, _, err := image.Decode(f)
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
