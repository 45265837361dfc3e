package raster

import (
	"math"
	"sync"
)

// OpenCV's 8-bit sRGB ⇄ CIE L*a*b* (cv2.COLOR_RGB2Lab and COLOR_Lab2RGB on uint8 images), in
// its own fixed-point arithmetic: FaceFusion's landmarkers round-trip their crop through it, and
// the rounding of each step shows in what the model sees. The tables are built as OpenCV builds
// them, in IEEE single precision where OpenCV uses softfloat and double where it uses softdouble.
// L is scaled to 0–255 (L*·255/100), a and b are offset by 128.

const (
	labShift     = 12 // xyz_shift
	gammaShift   = 3
	labShift2    = labShift + gammaShift
	labCbrtSizeB = 256 * 3 / 2 * (1 << gammaShift)
	invGammaBits = 12
	invGammaSize = 1 << invGammaBits
	labBaseBits  = 14
	labBase      = 1 << labBaseBits
	minABValue   = -8145
)

// OpenCV's constants, bit for bit: sRGB→XYZ and XYZ→sRGB (D65) and the D65 white point.
var (
	srgbToXYZ = bitsOf(0x3fda65a14488c60d, 0x3fd6e297396d0918, 0x3fc71819d2391d58,
		0x3fcb38cda6e75ff6, 0x3fe6e297396d0918, 0x3fb279aae6c8f755,
		0x3f93cc4ac6cdaf4b, 0x3fbe836eb4e98138, 0x3fee68427418d691)
	xyzToSRGB = bitsOf(0x4009ec804102ff8f, 0xbff8982a9930be0e, 0xbfdfe7ff583a53b9,
		0xbfef042528ae74f3, 0x3ffe040f23897204, 0x3fa546d3f9e7b80b,
		0x3fac7de5082cf52c, 0xbfca1e14bdfd2631, 0x3ff0eabef06b3786)
	whiteD65 = [3]float64{math.Float64frombits(0x3fee6a22b3892ee8), 1, math.Float64frombits(0x3ff16b8950763a19)}
)

func bitsOf(b ...uint64) (out [9]float64) {
	for i, v := range b {
		out[i] = math.Float64frombits(v)
	}
	return out
}

type labTables struct {
	gamma    [256]int32          // sRGBGammaTab_b: 8-bit sRGB → linear, ×255·8
	cbrt     [labCbrtSizeB]int32 // LabCbrtTab_b: f(t) of CIE Lab, ×2¹⁵
	invGamma [invGammaSize]int32 // sRGBInvGammaTab_b: linear ×4096 → 8-bit sRGB
	yf       [256][2]int32       // LabToYF_b: L → y and f(y), ×2¹⁴
	abToXZ   []int32             // f⁻¹ over ify ± a, b terms, from minABValue
	toXYZ    [9]int32            // RGB2Lab_b's coefficients (rows X, Y, Z over R, G, B)
	toRGB    [9]int32            // Lab2RGBinteger's (rows R, G, B over X, Y, Z)
}

var (
	labOnce sync.Once
	labTab  *labTables
)

// f32 rounds to single precision; every softfloat step of OpenCV goes through it, which also
// keeps the compiler from fusing two steps into one.
func f32(v float32) float32 { return v }

func cvRound(v float64) int32 { return int32(math.RoundToEven(v)) }

func applyGamma(x float32) float32 {
	xd := float64(x)
	if xd <= 809.0/20000 {
		return float32(xd / (323.0 / 25))
	}
	return float32(math.Pow((xd+11.0/200)/(1+11.0/200), 12.0/5))
}

func applyInvGamma(x float32) float32 {
	xd := float64(x)
	if xd <= 7827.0/2500000 {
		return float32(xd * (323.0 / 25))
	}
	return float32(math.Pow(xd, 1/(12.0/5))*(1+11.0/200) - 11.0/200)
}

// cbrtCV is OpenCV's softfloat cube root (Turkowski's quartic rational approximation in double
// precision on the mantissa scaled into [1/8, 1)), whose result is truncated, not rounded, to
// single precision: it sits one unit below the correctly rounded root now and then, and the
// table entries built from it show that. For positive finite x, as the tables need.
func cbrtCV(x float32) float32 {
	if x == 0 {
		return 0
	}
	bits := math.Float32bits(x)
	ex := int(bits>>23&0xff) - 127
	shx := ex % 3
	if shx >= 0 {
		shx -= 3
	}
	ex = (ex-shx)/3 - 1
	fr := math.Float64frombits(uint64(shx+1023)<<52 | uint64(bits&(1<<23-1))<<29)
	a := [5]uint64{0x4046a09e6653ba70, 0x406808f46c6116e0, 0x405dca97439cae14, 0x402add70d2827500, 0x3fc4f15f83f55d2d}
	b := [4]uint64{0x402d9e20660edb21, 0x4062ff15c0285815, 0x406510d06a8112ce, 0x4040fecbc9e2c375}
	num := math.Float64frombits(a[0])
	for _, c := range a[1:] {
		num = float64(num*fr) + math.Float64frombits(c)
	}
	den := math.Float64frombits(b[0])
	for _, c := range b[1:] {
		den = float64(den*fr) + math.Float64frombits(c)
	}
	den = float64(den*fr) + 1
	fr = num / den
	frac := uint32(math.Float64bits(fr) & (1<<52 - 1) >> 29)
	return math.Float32frombits(uint32(ex+127)<<23 | frac)
}

func buildLabTables() *labTables {
	t := new(labTables)
	f255 := float32(255)
	lthresh := f32(float32(216) / float32(24389))
	lscale := f32(float32(841) / float32(108))
	lbias := f32(float32(16) / float32(116))
	intScale := float32(255 * (1 << gammaShift))
	for i := range 256 {
		x := f32(float32(i) / f255)
		t.gamma[i] = cvRound(float64(f32(intScale * applyGamma(x))))
	}
	invScale := f32(1 / float32(invGammaSize))
	for i := range invGammaSize {
		x := f32(invScale * float32(i))
		t.invGamma[i] = cvRound(float64(f32(f255 * applyInvGamma(x))))
	}
	cbScale := f32(1 / f32(f255*float32(1<<gammaShift)))
	lshift2 := float32(1 << labShift2)
	for i := range labCbrtSizeB {
		x := f32(cbScale * float32(i))
		var f float32
		if x < lthresh {
			f = float32(math.FMA(float64(x), float64(lscale), float64(lbias)))
		} else {
			f = cbrtCV(x)
		}
		t.cbrt[i] = cvRound(float64(f32(lshift2 * f)))
	}
	const lutBase = 1 << 14
	for i := range 256 {
		var y, ify int32
		if i <= 20 {
			y = cvRound(float64(f32(float32(i*lutBase*20*9) / float32(17*29*29*29))))
			a := f32(float32(16) / float32(116))
			b := f32(float32(i*5) / float32(3*17*29))
			ify = cvRound(float64(f32(float32(lutBase) * f32(a+b))))
		} else {
			a := f32(float32(i*100*lutBase) / float32(255*116))
			b := f32(float32(16*lutBase) / float32(116))
			fy := f32(a + b)
			ify = cvRound(float64(fy))
			y = cvRound(float64(f32(f32(f32(fy*fy)*fy) / float32(lutBase*lutBase))))
		}
		t.yf[i] = [2]int32{y, ify}
	}
	t.abToXZ = make([]int32, labBase*9/4)
	for i := minABValue; i < labBase*9/4+minABValue; i++ {
		var v int
		if i <= 3390 {
			v = i*108/841 - lutBase*16/116*108/841
		} else {
			v = i * i / lutBase * i / lutBase
		}
		t.abToXZ[i-minABValue] = int32(v)
	}
	lshift := float64(1 << labShift)
	for i := range 3 {
		for j := range 3 {
			t.toXYZ[i*3+j] = cvRound(lshift * srgbToXYZ[i*3+j] / whiteD65[i])
			// Lab2RGBinteger scales column i (X, Y, Z) by the white point.
			t.toRGB[j*3+i] = cvRound(lshift * xyzToSRGB[j*3+i] * whiteD65[i])
		}
	}
	return t
}

func labTables8() *labTables {
	labOnce.Do(func() { labTab = buildLabTables() })
	return labTab
}

// descale is OpenCV's CV_DESCALE: x/2ⁿ rounded half up.
func descale(x int32, n uint) int32 { return (x + 1<<(n-1)) >> n }

// RGBToLab8 converts one 8-bit sRGB sample to OpenCV's 8-bit Lab (cv2.COLOR_RGB2Lab).
func RGBToLab8(r, g, b uint8) (l, a, bb uint8) {
	t := labTables8()
	R, G, B := t.gamma[r], t.gamma[g], t.gamma[b]
	c := &t.toXYZ
	fX := t.cbrt[descale(R*c[0]+G*c[1]+B*c[2], labShift)]
	fY := t.cbrt[descale(R*c[3]+G*c[4]+B*c[5], labShift)]
	fZ := t.cbrt[descale(R*c[6]+G*c[7]+B*c[8], labShift)]
	const lScale = (116*255 + 50) / 100
	const lShift = -((16*255*(1<<labShift2) + 50) / 100)
	L := descale(lScale*fY+lShift, labShift2)
	A := descale(500*(fX-fY)+128*(1<<labShift2), labShift2)
	Bv := descale(200*(fY-fZ)+128*(1<<labShift2), labShift2)
	return SaturateU8(float64(L)), SaturateU8(float64(A)), SaturateU8(float64(Bv))
}

// LabToRGB8 converts one sample of OpenCV's 8-bit Lab back to 8-bit sRGB (cv2.COLOR_Lab2RGB,
// its bit-exact integer path).
func LabToRGB8(l, a, bb uint8) (r, g, b uint8) {
	t := labTables8()
	y, ify := t.yf[l][0], t.yf[l][1]
	adiv := ((5*int32(a)*53687 + 1<<7) >> 13) - 128*labBase/500
	bdiv := ((int32(bb)*41943 + 1<<4) >> 9) - 128*labBase/200 + 1
	x := t.abToXZ[ify+adiv-minABValue]
	z := t.abToXZ[ify-bdiv-minABValue]
	const shift = labShift + (labBaseBits - invGammaBits)
	c := &t.toRGB
	out := func(row int) uint8 {
		v := descale(c[row]*x+c[row+1]*y+c[row+2]*z, shift)
		return SaturateU8(float64(t.invGamma[min(invGammaSize-1, max(0, v))]))
	}
	return out(0), out(3), out(6)
}
