package adapters

import (
	"math"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// lpScene is a target frame (smooth colour gradients) and the same frame as a processor left
// it, the face's colours changed inside a disc, with the five points of a face of side 230 at
// (90, 70) on arcface_128.
func lpScene() (orig, frame *raster.Image, five [5]geom.Pt) {
	const w, h = 420, 400
	orig, frame = raster.New(w, h), raster.New(w, h)
	for y := range h {
		for x := range w {
			r := uint8(30 + x/3)
			g := uint8(20 + y/2)
			b := uint8(128 + 60*math.Sin(float64(x+2*y)/23))
			orig.Set(x, y, r, g, b)
			dx, dy := float64(x-205), float64(y-190)
			if dx*dx+dy*dy < 90*90 {
				r, g, b = uint8(min(255, int(r)+70)), uint8(max(0, int(g)-40)), uint8(255-b)
			}
			frame.Set(x, y, r, g, b)
		}
	}
	for i, q := range align.ArcFace128 {
		five[i] = geom.Pt{X: 90 + q.X*230, Y: 70 + q.Y*230}
	}
	return orig, frame, five
}

// lpWant is the crop the stand-ins give for the face at m, by their arithmetic in float64
// (fixtures.LP*), through FaceFusion's steps: both crops at m, halved and scaled, the
// target's expression, the processed face's volume and motion, the restored keypoints.
func lpWant(orig, frame *raster.Image, m geom.Affine, areas []string, factor int) *[3][512][512]float64 {
	xt, xm := lpInput(orig, m), lpInput(frame, m)
	mt, mm := lpMotion(xt), lpMotion(xm)
	rot := facemodel.LivePortraitRotation(mm.Pitch, mm.Yaw, mm.Roll)
	restored := facemodel.RestoreExpression(&mt.Expression, &mm.Expression, areas, factor)
	src, drv := mm.Keypoints(&rot, &restored), mm.Keypoints(&rot, &mm.Expression)
	sf, df := make([]float32, 63), make([]float32, 63)
	src.Flat(sf)
	drv.Flat(df)
	return lpGenerated(xm, sf, df)
}

// lpInput is the extractors' input for the crop of src at m: RGB planes of the rounded 2×2
// means, /255.
func lpInput(src *raster.Image, m geom.Affine) []float32 {
	c := raster.New(512, 512)
	align.WarpCrop(c, src, m)
	x := make([]float32, 3*256*256)
	for y := range 256 {
		for xx := range 256 {
			for k := range 3 {
				s := 2
				for _, d := range [4][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
					s += int(c.Pix[(2*y+d[1])*c.Stride+3*(2*xx+d[0])+k])
				}
				x[k*256*256+y*256+xx] = float32(float64(s/4) / 255)
			}
		}
	}
	return x
}

// lpMotion is the motion stand-in's output for input x, each value rounded to float32.
func lpMotion(x []float32) facemodel.LivePortraitMotion {
	w := fixtures.LPMotionWeights()
	f := fixtures.LPFeatures(x)
	var outs [7][]float32
	for o := range outs {
		for _, v := range fixtures.LPMotionOut(&w, o, f) {
			outs[o] = append(outs[o], float32(v))
		}
	}
	mo := facemodel.LivePortraitMotion{Pitch: outs[0][0], Yaw: outs[1][0], Roll: outs[2][0], Scale: outs[3][0]}
	copy(mo.Translation[:], outs[4])
	for k := range 21 {
		copy(mo.Expression[k][:], outs[5][3*k:])
		copy(mo.Points[k][:], outs[6][3*k:])
	}
	return mo
}

// lpGenerated is the generator stand-in's crop, truncated to 8 bits, for the volume of input
// x and the keypoints sf (source) and df (target).
func lpGenerated(x, sf, df []float32) *[3][512][512]float64 {
	zero := make([]float32, 63)
	out := new([3][512][512]float64)
	for c := range 3 {
		k := fixtures.LPGeneratorOut(c, 0, 0, 0, sf, df)
		var vol [64][64]float64
		for py := range 64 {
			for px := range 64 {
				vol[py][px] = fixtures.LPVolume(c, px, py, x)
			}
		}
		for y := range 512 {
			for x := range 512 {
				v := fixtures.LPGeneratorOut(c, x, y, vol[y/8][x/8], zero, zero) + k
				out[c][y][x] = math.Trunc(float64(float32(math.Min(1, math.Max(0, v))) * 255))
			}
		}
	}
	return out
}

func lpOpen(t *testing.T, factor int, areas []string) *ExpressionRestorer {
	t.Helper()
	dir := fixtures.Dir(t, "live_portrait_feature_extractor", "live_portrait_motion_extractor", "live_portrait_generator")
	er, err := NewExpressionRestorer("live_portrait", func(string) infer.SessionConfig { return ffConfig(t, dir, 1) }, factor, areas, DefaultMaskOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { er.Close() })
	return er
}

// TestExpressionRestorerCrop: the restored crop is, within a level, the stand-ins' chain
// recomputed from FaceFusion's steps, at the factor's ends and default and for each area; the
// factor and each area change it by several levels, so a mistake in either shows.
func TestExpressionRestorerCrop(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: runs LivePortrait's stand-ins six times (make test)")
	}
	orig, frame, five := lpScene()
	both := []string{"upper-face", "lower-face"}
	crops := map[string]*raster.Image{}
	for _, c := range []struct {
		name   string
		factor int
		areas  []string
	}{{"0", 0, both}, {"100", 100, both}, {"80", 80, both}, {"upper", 100, both[:1]}, {"lower", 100, both[1:]}} {
		er := lpOpen(t, c.factor, c.areas)
		m := er.Align(five)
		got, mask, err := er.Restore(RestoreRef{Frame: frame, Original: orig, Five: five}, m)
		if err != nil {
			t.Fatal(err)
		}
		if len(mask) != 512*512 || mask[256*512+256] < 0.999 || mask[0] > 0.01 {
			t.Errorf("%s: mask of %d values, centre %v, corner %v: want the box mask", c.name, len(mask), mask[256*512+256], mask[0])
		}
		want := lpWant(orig, frame, m, c.areas, c.factor)
		bad := 0
		for y := range 512 {
			for x := range 512 {
				for k := range 3 {
					g := float64(got.Pix[y*got.Stride+3*x+k])
					if math.Abs(g-want[k][y][x]) > 1 {
						if bad++; bad <= 3 {
							t.Errorf("%s: crop (%d, %d) channel %d = %v, want %v", c.name, x, y, k, g, want[k][y][x])
						}
					}
				}
			}
		}
		if bad > 3 {
			t.Errorf("%s: %d values off in all", c.name, bad)
		}
		crops[c.name] = got.Clone()
	}
	for _, pair := range [][2]string{{"0", "100"}, {"0", "80"}, {"upper", "lower"}, {"upper", "100"}} {
		if d := maxDiff(crops[pair[0]], crops[pair[1]]); d < 4 {
			t.Errorf("%s and %s differ by at most %d levels: the test cannot tell them apart", pair[0], pair[1], d)
		}
	}
	if _, err := NewExpressionRestorer("live_portrait", nil, 101, both, DefaultMaskOptions()); err == nil {
		t.Error("factor 101 accepted")
	}
}

func maxDiff(a, b *raster.Image) int {
	d := 0
	for i := range a.Pix {
		d = max(d, int(a.Pix[i])-int(b.Pix[i]), int(b.Pix[i])-int(a.Pix[i]))
	}
	return d
}
