package raster

import (
	"math"
	"sync"
)

// OpenCV's float sRGB ⇄ CIE L*a*b* (cv2.COLOR_RGB2Lab and COLOR_Lab2RGB on float32 images in
// 0..1), as OpenCV 4.6 computes them, to the bit: forward by interpolation in a table
// (RGBToLabF), back by the formulas in single precision with the inverse sRGB curve through a
// cubic spline over 1024 steps (sRGBInvGammaTab). FaceFusion's frame_colorizer runs its ddcolor
// models through both; OpenCV's shortcuts move L by up to 0.19 from the exact value, which an
// exact formula would show as a grey level.

const gammaTabSize = 1024

type labFloatTables struct {
	invGamma []float32 // the inverse sRGB curve's spline: 4 coefficients per step
	toRGB    [9]float32
}

var (
	labFOnce sync.Once
	labFTab  *labFloatTables
)

func labFloat() *labFloatTables {
	labFOnce.Do(func() {
		t := &labFloatTables{}
		g := make([]float32, gammaTabSize+1)
		scale := f32(1 / float32(gammaTabSize))
		for i := range g {
			g[i] = applyInvGamma(f32(scale * float32(i)))
		}
		t.invGamma = splineBuild(g)
		for i := range 3 {
			for j := range 3 {
				t.toRGB[j*3+i] = float32(xyzToSRGB[j*3+i] * whiteD65[i])
			}
		}
		labFTab = t
	})
	return labFTab
}

// splineBuild is OpenCV's: the natural cubic spline through f[0..n], in single precision.
func splineBuild(f []float32) []float32 {
	n := len(f) - 1
	tab := make([]float32, 4*n)
	var cn float32
	for i := 1; i < n; i++ {
		t := f32(f32(f32(f[i+1]-f32(f[i]*2))+f[i-1]) * 3)
		l := f32(1 / f32(4-tab[(i-1)*4]))
		tab[i*4], tab[i*4+1] = l, f32(f32(t-tab[(i-1)*4+1])*l)
	}
	for j := range n {
		i := n - j - 1
		c := f32(tab[i*4+1] - f32(tab[i*4]*cn))
		b := f32(f32(f[i+1]-f[i]) - f32(f32(cn+f32(c*2))/3))
		d := f32(f32(cn-c) / 3)
		tab[i*4], tab[i*4+1], tab[i*4+2], tab[i*4+3] = f[i], b, c, d
		cn = c
	}
	return tab
}

// splineAt is OpenCV's splineInterpolate.
func splineAt(x float32, tab []float32) float32 {
	ix := min(max(int(x), 0), gammaTabSize-1)
	x = f32(x - float32(ix))
	t := tab[ix*4:][:4]
	return f32(f32(f32(f32(f32(f32(t[3]*x)+t[2])*x)+t[1])*x) + t[0])
}

func clip01(v float32) float32 { return min(max(v, 0), 1) }

// RGBToLabF is OpenCV's float RGB2Lab of r, g, b in 0..1 (clipped there): OpenCV 4.6 does not
// compute it but interpolates it, trilinearly in fixed point, from L*a*b* at the nodes of a
// 33³ grid over blue, green and red (RGB2LabLUT_s16), so L comes in steps of 100/2¹⁴ and a, b
// in steps of 1/64.
func RGBToLabF(r, g, b float32) (l, a, bb float32) {
	t := labLUT()
	ib := int(cvRound(float64(f32(clip01(b) * labBase))))
	ig := int(cvRound(float64(f32(clip01(g) * labBase))))
	ir := int(cvRound(float64(f32(clip01(r) * labBase))))
	const cell = labBaseBits - labLUTShift
	tx, ty, tz := ib>>cell, ig>>cell, ir>>cell
	fx, fy, fz := int32(ib>>(labBaseBits-9)&15), int32(ig>>(labBaseBits-9)&15), int32(ir>>(labBaseBits-9)&15)
	// The corners' steps: 0 at the grid's far edge, where OpenCV's table repeats the node.
	step := func(t, n int) int {
		if t < labLUTDim-1 {
			return n
		}
		return 0
	}
	base := labLUTIndex(tx, ty, tz)
	sx, sy, sz := step(tx, 3), step(ty, 3*labLUTDim), step(tz, 3*labLUTDim*labLUTDim)
	var sum [3]int32
	corner := func(off int, w int32) {
		n := t[base+off : base+off+3 : base+off+3]
		sum[0] += int32(n[0]) * w
		sum[1] += int32(n[1]) * w
		sum[2] += int32(n[2]) * w
	}
	gx, gy, gz := 16-fx, 16-fy, 16-fz
	corner(0, gx*gy*gz)
	corner(sz, gx*gy*fz)
	corner(sy, gx*fy*gz)
	corner(sy+sz, gx*fy*fz)
	corner(sx, fx*gy*gz)
	corner(sx+sz, fx*gy*fz)
	corner(sx+sy, fx*fy*gz)
	corner(sx+sy+sz, fx*fy*fz)
	iL, ia, ib2 := descale(sum[0], 12), descale(sum[1], 12), descale(sum[2], 12)
	return f32(f32(float32(iL)/labBase) * 100), f32(f32(f32(float32(ia)/labBase)*256) - 128), f32(f32(f32(float32(ib2)/labBase)*256) - 128)
}

// The RGB2Lab grid: 33 nodes a side, 16 steps of interpolation between nodes.
const (
	labLUTShift = 5
	labLUTDim   = 1<<labLUTShift + 1
)

func labLUTIndex(x, y, z int) int { return 3 * (x + labLUTDim*(y+labLUTDim*z)) }

var (
	labLUTOnce sync.Once
	labLUTTab  []int16
)

// labLUT is OpenCV's RGB2LabLUT_s16 (before its packing for SIMD): at node (x, y, z) the
// blue, green and red x/32, y/32, z/32, as L·2¹⁴/100 and (a + 128)·2¹⁴/256, (b + 128)·2¹⁴/256,
// computed in single precision as OpenCV's softfloat does.
func labLUT() []int16 {
	labLUTOnce.Do(func() {
		var s [9]float32 // rows X, Y, Z over blue, green, red
		for i := range 3 {
			for j := range 3 {
				s[i*3+j] = float32(srgbToXYZ[i*3+2-j] * (1 / whiteD65[i]))
			}
		}
		lthresh := f32(float32(216) / float32(24389))
		lscale := f32(float32(841) / float32(108))
		lbias := f32(float32(16) / float32(116))
		f9033 := f32(float32(29*29*29) / float32(27))
		lld := float32(labLUTDim - 1)
		f := func(v float32) float32 {
			if v > lthresh {
				return cbrtCV(v)
			}
			return float32(math.FMA(float64(v), float64(lscale), float64(lbias)))
		}
		tab := make([]int16, 3*labLUTDim*labLUTDim*labLUTDim)
		for z := range labLUTDim {
			for y := range labLUTDim {
				for x := range labLUTDim {
					B, G, R := applyGamma(f32(float32(x)/lld)), applyGamma(f32(float32(y)/lld)), applyGamma(f32(float32(z)/lld))
					row := func(k int) float32 { return f32(f32(f32(B*s[k])+f32(G*s[k+1])) + f32(R*s[k+2])) }
					X, Y, Z := row(0), row(3), row(6)
					FX, FY, FZ := f(X), f(Y), f(Z)
					L := f32(f9033 * Y)
					if Y > lthresh {
						L = f32(f32(116*FY) - 16)
					}
					a, b := f32(500*f32(FX-FY)), f32(200*f32(FY-FZ))
					i := labLUTIndex(x, y, z)
					tab[i] = int16(cvRound(float64(f32(f32(labBase*L) / 100))))
					tab[i+1] = int16(cvRound(float64(f32(f32(labBase*f32(a+128)) / 256))))
					tab[i+2] = int16(cvRound(float64(f32(f32(labBase*f32(b+128)) / 256))))
				}
			}
		}
		labLUTTab = tab
	})
	return labLUTTab
}

// LabToRGBF is OpenCV's float Lab2RGB: r, g, b in 0..1 (clipped there, as OpenCV clips).
func LabToRGBF(l, a, bb float32) (r, g, b float32) {
	const lThresh = float32(0.008856) * float32(903.3)
	fThresh := f32(f32(float32(7.787)*float32(0.008856)) + f32(16.0/116))
	var y, fy float32
	if l <= lThresh {
		y = f32(l / 903.3)
		fy = f32(f32(7.787*y) + f32(16.0/116))
	} else {
		fy = f32(f32(l+16) / 116)
		y = f32(f32(fy*fy) * fy)
	}
	xz := [2]float32{f32(f32(a/500) + fy), f32(fy - f32(bb/200))}
	for j, v := range xz {
		if v <= fThresh {
			xz[j] = f32(f32(v-f32(16.0/116)) / 7.787)
		} else {
			xz[j] = f32(f32(v*v) * v)
		}
	}
	t := labFloat()
	c := &t.toRGB
	out := func(row int) float32 {
		v := clip01(f32(f32(f32(c[row]*xz[0])+f32(c[row+1]*y)) + f32(c[row+2]*xz[1])))
		return splineAt(f32(v*gammaTabSize), t.invGamma)
	}
	return out(0), out(3), out(6)
}
