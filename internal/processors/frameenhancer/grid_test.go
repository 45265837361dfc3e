package frameenhancer

import (
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// fakeModel is a tile model in Go for the tiling tests: out[c][Y][X] = a mix of the input at
// (X/s, Y/s) plus ramps over the output tile, so a misplaced tile or sample shows.
func fakeModel(in []float32, n, s int) []float32 {
	on := n * s
	out := make([]float32, 3*on*on)
	for c := range 3 {
		for Y := range on {
			for X := range on {
				at := (Y/s)*n + X/s
				r, g, b := in[at], in[n*n+at], in[2*n*n+at]
				v := []float32{0.7*r + 0.2*g + 0.05*b, 0.1*r + 0.8*g + 0.05*b, 0.05*r + 0.25*g + 0.6*b}[c]
				out[(c*on+Y)*on+X] = v + 0.2*float32(X)/float32(on) - 0.1*float32(Y)/float32(on) + 0.01*float32(c) - 0.02
			}
		}
	}
	return out
}

// referenceEnhance is FaceFusion's enhance_frame written out as it is (vision.py's
// create_tile_frames and merge_tile_frames on a padded copy and a canvas, then
// blend_merge_frame), with model for the network: the slow, obvious twin of Grid.
func referenceEnhance(f *raster.Image, t catalog.Tile, s, blend int, model func([]float32) []float32) *raster.Image {
	tw := t.Size - 2*t.Overlap
	top := t.Pad + t.Overlap
	bottom := top + tw - (f.H+2*t.Pad)%tw
	right := top + tw - (f.W+2*t.Pad)%tw
	ph, pw := f.H+top+bottom, f.W+top+right
	padded := raster.New(pw, ph)
	for y := range f.H {
		copy(padded.Pix[(y+top)*padded.Stride+3*top:], f.Pix[y*f.Stride:][:3*f.W])
	}
	var tiles [][]uint8 // each tile's upscaled bytes, RGB interleaved, (Size·s)²
	for row := t.Overlap; row < ph-t.Overlap; row += tw {
		for col := t.Overlap; col < pw-t.Overlap; col += tw {
			n := t.Size
			in := make([]float32, 3*n*n)
			for i := range n {
				for j := range n {
					for c := range 3 {
						in[c*n*n+i*n+j] = float32(padded.Pix[(row-t.Overlap+i)*padded.Stride+3*(col-t.Overlap+j)+c]) / 255
					}
				}
			}
			o := model(in)
			on := n * s
			b := make([]uint8, 3*on*on)
			for c := range 3 {
				for k := range on * on {
					b[3*k+c] = tileByte(o[c*on*on+k])
				}
			}
			tiles = append(tiles, b)
		}
	}
	S := [3]int{t.Size * s, t.Pad * s, t.Overlap * s}
	canvas := raster.New(pw*s, ph*s)
	on := S[0]
	inner := on - 2*S[2]
	perRow := min(pw*s/inner, len(tiles))
	for idx, b := range tiles {
		r, c := idx/perRow, idx%perRow
		for i := range inner {
			for j := range inner {
				y, x := r*inner+i, c*inner+j
				if y < canvas.H && x < canvas.W {
					copy(canvas.Pix[y*canvas.Stride+3*x:][:3], b[3*((S[2]+i)*on+S[2]+j):])
				}
			}
		}
	}
	merged := raster.New(f.W*s, f.H*s)
	for y := range merged.H {
		copy(merged.Pix[y*merged.Stride:][:3*merged.W], canvas.Pix[(y+S[1])*canvas.Stride+3*S[1]:])
	}
	var rz raster.Resizer
	out := raster.New(merged.W, merged.H)
	rz.Resize(out, out.Bounds(), f)
	align.EnhancerBlend(out, merged, out.Bounds(), blend)
	return out
}

func randomFrame(rng *rand.Rand, w, h int) *raster.Image {
	f := raster.New(w, h)
	for i := range f.Pix {
		f.Pix[i] = uint8(rng.IntN(256))
	}
	return f
}

// Grid's tiling (no padded copy, no canvas, blended where each tile lands) gives the reference's
// bytes for every tiling FaceFusion's models use, on frames smaller than a tile, a step's
// multiple and odd sizes.
func TestGridMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		tile  catalog.Tile
		scale int
	}{{catalog.Tile{Size: 128, Pad: 8, Overlap: 4}, 4}, {catalog.Tile{Size: 64, Pad: 4, Overlap: 2}, 4},
		{catalog.Tile{Size: 256, Pad: 16, Overlap: 8}, 2}, {catalog.Tile{Size: 32, Pad: 3, Overlap: 5}, 3}} {
		for i, sz := range [][2]int{{7, 5}, {tc.tile.Size - 2*tc.tile.Overlap - 2*tc.tile.Pad, 33}, {131, 67}, {1, 1}} {
			for _, blend := range [][]int{{0, 100}, {37}, {80}, {100}}[i] { // each blend somewhere
				f := randomFrame(rng, sz[0], sz[1])
				model := func(in []float32) []float32 { return fakeModel(in, tc.tile.Size, tc.scale) }
				want := referenceEnhance(f, tc.tile, tc.scale, blend, model)
				g := NewGrid(tc.tile, f.W, f.H)
				out := raster.New(f.W*tc.scale, f.H*tc.scale)
				var rz raster.Resizer
				rz.Resize(out, out.Bounds(), f)
				bl := NewBlend(align.EnhancerWeights(blend))
				in := make([]float32, 3*tc.tile.Size*tc.tile.Size)
				for r := range g.Rows {
					for c := range g.Cols {
						g.Prepare(in, f, r, c)
						g.Merge(out, model(in), tc.tile.Size*tc.scale, tc.scale, r, c, bl)
					}
				}
				for i := range want.Pix {
					if out.Pix[i] != want.Pix[i] {
						p := i / 3
						t.Fatalf("tile %+v ×%d, %dx%d, blend %d: pixel (%d, %d) channel %d is %d, the reference's %d",
							tc.tile, tc.scale, f.W, f.H, blend, p%out.W, p/out.W, i%3, out.Pix[i], want.Pix[i])
					}
				}
			}
		}
	}
}

func BenchmarkGrid(b *testing.B) {
	tl := catalog.Tile{Size: 128, Pad: 8, Overlap: 4}
	f := randomFrame(rand.New(rand.NewPCG(3, 4)), 640, 360)
	g := NewGrid(tl, f.W, f.H)
	out := raster.New(f.W*4, f.H*4)
	in := make([]float32, 3*128*128)
	o := make([]float32, 3*512*512)
	bl := NewBlend(align.EnhancerWeights(80))
	b.ReportAllocs()
	for b.Loop() {
		for r := range g.Rows {
			for c := range g.Cols {
				g.Prepare(in, f, r, c)
				g.Merge(out, o, 512, 4, r, c, bl)
			}
		}
	}
}
