package frameenhancer

import (
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Grid is FaceFusion's tiling of a w×h frame (vision.create_tile_frames), without the padded
// copy it makes: the frame sits at (Pad+Overlap, Pad+Overlap) of a zero canvas whose bottom and
// right pads round it up to whole steps, and tile (row, col) is the Size×Size square at
// (col·Step, row·Step) of that canvas. merge_tile_frames keeps the middle Step×Step of each
// upscaled tile (Overlap·scale cut off each side), lays them edge to edge from the canvas's
// corner and cuts the frame out at Pad·scale: every output pixel comes from exactly one tile.
type Grid struct {
	catalog.Tile
	W, H       int
	Step       int // Size − 2·Overlap: the tiles' stride, and the side of the part each keeps
	Rows, Cols int
}

// NewGrid is the tiling of a w×h frame by t.
func NewGrid(t catalog.Tile, w, h int) Grid {
	step := t.Size - 2*t.Overlap
	// create_tile_frames pads the bottom by Pad+Overlap+Step−(h+2·Pad) mod Step, and its
	// range(Overlap, padded−Overlap, Step) then counts (h+2·Pad) div Step + 1 rows.
	return Grid{Tile: t, W: w, H: h, Step: step, Rows: (h+2*t.Pad)/step + 1, Cols: (w+2*t.Pad)/step + 1}
}

// Prepare writes tile (row, col) of f as FaceFusion's prepare_tile_frame feeds it: planes R, G,
// B of Size×Size, each sample v/255 in float32, zero outside the frame.
func (g Grid) Prepare(dst []float32, f *raster.Image, row, col int) {
	n := g.Size
	off := g.Pad + g.Overlap
	y0, x0 := row*g.Step-off, col*g.Step-off
	plane := n * n
	clear(dst[:3*plane])
	// The part of the tile inside the frame; the rest stays 0 (numpy.pad's zeros).
	jlo, jhi := max(0, -x0), min(n, g.W-x0)
	for i := max(0, -y0); i < min(n, g.H-y0); i++ {
		src := f.Pix[(y0+i)*f.Stride:]
		for j := jlo; j < jhi; j++ {
			p := src[3*(x0+j):]
			at := i*n + j
			dst[at] = float32(p[0]) / 255
			dst[plane+at] = float32(p[1]) / 255
			dst[2*plane+at] = float32(p[2]) / 255
		}
	}
}

// Blend is cv2.addWeighted's round(frame·fw + tile·ew) in float32 for every pair of 8-bit
// values (blend_frame's arithmetic), as a table: Blend[f<<8|t].
type Blend [256 * 256]uint8

// NewBlend is the table of the weights fw and ew (align.EnhancerWeights).
func NewBlend(fw, ew float32) *Blend {
	var b Blend
	for f := range 256 {
		for t := range 256 {
			b[f<<8|t] = raster.SaturateU8(float64(float32(f)*fw + float32(t)*ew))
		}
	}
	return &b
}

// Merge blends the kept part of tile (row, col)'s model output o (planes R, G, B of on×on, on =
// Size·scale) into out, the frame resized to the upscaled size: each sample becomes
// normalize_tile_frame's uint8 (×255 in float32, clipped to 0..255, truncated), then bl's
// blend of the frame's sample and it.
func (g Grid) Merge(out *raster.Image, o []float32, on, scale, row, col int, bl *Blend) {
	keep, cut, pad := g.Step*scale, g.Overlap*scale, g.Pad*scale
	plane := on * on
	Y0, X0 := row*keep-pad, col*keep-pad // the kept part's corner in the output
	jlo, jhi := max(0, -X0), min(keep, out.W-X0)
	for i := max(0, -Y0); i < min(keep, out.H-Y0); i++ {
		dst := out.Pix[(Y0+i)*out.Stride:]
		at := (cut+i)*on + cut
		for j := jlo; j < jhi; j++ {
			d := dst[3*(X0+j) : 3*(X0+j)+3 : 3*(X0+j)+3]
			d[0] = bl[int(d[0])<<8|int(tileByte(o[at+j]))]
			d[1] = bl[int(d[1])<<8|int(tileByte(o[plane+at+j]))]
			d[2] = bl[int(d[2])<<8|int(tileByte(o[2*plane+at+j]))]
		}
	}
}

// tileByte is normalize_tile_frame on one sample: ×255, clip(0, 255), astype(uint8).
func tileByte(v float32) uint8 {
	v *= 255
	if v < 0 || v != v { // NaN: numpy's cast of it gives 0 on x86
		return 0
	}
	if v > 255 {
		return 255
	}
	return uint8(v)
}
