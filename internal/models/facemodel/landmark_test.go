package facemodel

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

func TestFAN4Matrix(t *testing.T) {
	box := geom.Rect{X0: 300, Y0: 200, X1: 400, Y1: 350} // long side 150
	m, err := FAN4Matrix(box, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c := m.Apply(box.Center()); !near(c.X, 128, 1e-9) || !near(c.Y, 128, 1e-9) {
		t.Errorf("box centre lands at %v, want the crop centre", c)
	}
	if h := m.Apply(geom.Pt{X: 350, Y: 350}).Y - m.Apply(geom.Pt{X: 350, Y: 200}).Y; !near(h, 195, 1e-9) {
		t.Errorf("long side spans %v px, want 195", h)
	}
	// 90° turns the crop counter-clockwise about its centre: a point right of the centre
	// moves above it (cv2.getRotationMatrix2D's convention, y down).
	r, _ := FAN4Matrix(box, 90)
	right := geom.Pt{X: 360, Y: 275}
	p0, p90 := m.Apply(right), r.Apply(right)
	if !near(p90.X, 128, 1e-9) || !near(p90.Y, 128-(p0.X-128), 1e-9) {
		t.Errorf("90°: %v → %v, want (128, %v)", p0, p90, 128-(p0.X-128))
	}
	if _, err := FAN4Matrix(box, 45); err == nil {
		t.Error("45° accepted")
	}
}

// TestFAN4Decode plants 68 known frame points in a synthetic 2dfan4 output (their crop
// positions on the 64-grid) and heatmaps with known peaks, and decodes them back.
func TestFAN4Decode(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	box := geom.Rect{X0: 510, Y0: 120, X1: 700, Y1: 330}
	var want face.Landmarks68
	for i := range want {
		want[i] = geom.Pt{X: box.X0 + r.Float64()*box.W(), Y: box.Y0 + r.Float64()*box.H()}
	}
	heat := make([]float32, 68*64*64)
	var peaks float64
	for i := range 68 {
		p := float32(0.5 + 0.4*r.Float64())
		peaks += float64(p)
		heat[i*4096+r.IntN(4096)] = p
		heat[i*4096+r.IntN(4096)] = p / 2
	}
	for _, angle := range []int{0, 90, 180, 270} {
		m, _ := FAN4Matrix(box, angle)
		lms := make([]float32, 68*3)
		for i, p := range want {
			q := m.Apply(p)
			lms[3*i], lms[3*i+1], lms[3*i+2] = float32(q.X/4), float32(q.Y/4), 0.3
		}
		var got face.Landmarks68
		score, err := DecodeFAN4(&got, lms, heat, m)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if want[i].Dist(got[i]) > 1e-3 {
				t.Errorf("angle %d: point %d at %v, want %v", angle, i, got[i], want[i])
			}
		}
		if w := min(1, peaks/68/0.9); !near(score, w, 1e-6) {
			t.Errorf("score %v, want %v", score, w)
		}
	}
	// A confident heatmap (peaks ≥ 0.9) scores 1, clamped.
	for i := range 68 {
		heat[i*4096] = 0.95
	}
	if s, _ := DecodeFAN4(new(face.Landmarks68), make([]float32, 68*3), heat, geom.Identity); s != 1 {
		t.Errorf("score %v, want 1", s)
	}
	var out face.Landmarks68
	zeros := make([]float32, 68*3)
	if n := testing.AllocsPerRun(10, func() { DecodeFAN4(&out, zeros, heat, geom.Identity) }); n != 0 {
		t.Errorf("DecodeFAN4 allocates %v times", n)
	}
}

// labRoundTrip is what conditional_optimize_contrast leaves of an RGB sample of a crop that is
// not dark, as the model's BGR planes over 255: the 8-bit Lab round trip of FaceFusion's BGR
// frame read as RGB.
func labRoundTrip(r, g, b uint8) [3]float32 {
	l, a, bb := raster.RGBToLab8(b, g, r)
	b2, g2, r2 := raster.LabToRGB8(l, a, bb)
	return [3]float32{float32(b2) / 255, float32(g2) / 255, float32(r2) / 255}
}

func TestPrepareFAN4(t *testing.T) {
	// A box 195 px tall whose centre sits 20 px left of and 30 px above the crop centre's
	// mirror: the crop is the frame shifted by (20, 30), whole pixels, no resampling. Turned
	// by a quarter, it is that crop turned about (128, 128), a black edge where the turn runs
	// off it (top row at 90°, left column at 270°, both at 180°).
	frame := randomFrame(rand.New(rand.NewPCG(9, 10)), 300, 240)
	box := geom.Rect{X0: 10.5, Y0: 0.5, X1: 205.5, Y1: 195.5}
	crop := func(x, y int) [3]float32 {
		if fx, fy := x-20, y-30; x < 256 && y < 256 && fx >= 0 && fy >= 0 && fx < frame.W && fy < frame.H {
			return labRoundTrip(frame.At(fx, fy))
		}
		return labRoundTrip(0, 0, 0)
	}
	turns := map[int]func(x, y int) [3]float32{
		0:   crop,
		90:  func(x, y int) [3]float32 { return crop(256-y, x) },
		180: func(x, y int) [3]float32 { return crop(256-x, 256-y) },
		270: func(x, y int) [3]float32 { return crop(y, 256-x) },
	}
	dst := make([]float32, 3*256*256)
	for angle, want := range turns {
		m, err := PrepareFAN4(dst, frame, box, angle)
		if err != nil {
			t.Fatal(err)
		}
		if o := m.Apply(geom.Pt{X: 0, Y: 0}); angle == 0 && (o.X != 20 || o.Y != 30) {
			t.Fatalf("frame origin at %v in the crop, want (20, 30)", o)
		}
		for y := range 256 {
			for x := range 256 {
				w := want(x, y)
				for p := range 3 {
					if got := dst[p*65536+y*256+x]; got != w[p] {
						t.Fatalf("angle %d: (%d,%d) plane %d = %v, want %v", angle, x, y, p, got, w[p])
					}
				}
			}
		}
	}
}

// TestPrepareFAN4Dark: a crop whose mean Lab lightness is under 30 gets its lightness
// equalised (CLAHE, clip 2, 8×8 tiles); one just above does not.
func TestPrepareFAN4Dark(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	frame := raster.New(256, 256)
	for i := range frame.Pix {
		frame.Pix[i] = uint8(r.IntN(24)) // dark, but not flat: CLAHE has tiles to work on
	}
	box := geom.Rect{X0: 30.5, Y0: 30.5, X1: 225.5, Y1: 225.5} // the identity crop
	dst := make([]float32, 3*256*256)
	lightness := func(level uint8) int {
		sum := 0
		for i := 0; i < len(frame.Pix); i += 3 {
			l, _, _ := raster.RGBToLab8(frame.Pix[i+2]+level, frame.Pix[i+1]+level, frame.Pix[i]+level)
			sum += int(l)
		}
		return sum
	}
	// Find the brightening at which the mean lightness crosses 30.
	level := uint8(0)
	for lightness(level+1) < 30*65536 {
		level++
	}
	for _, c := range []struct {
		level uint8
		clahe bool
	}{{level, true}, {level + 1, false}} {
		img := frame.Clone()
		for i := range img.Pix {
			img.Pix[i] += c.level
		}
		if _, err := PrepareFAN4(dst, img, box, 0); err != nil {
			t.Fatal(err)
		}
		n := 256 * 256
		l, a, b := make([]uint8, n), make([]uint8, n), make([]uint8, n)
		for i := range n {
			l[i], a[i], b[i] = raster.RGBToLab8(img.Pix[3*i+2], img.Pix[3*i+1], img.Pix[3*i])
		}
		if c.clahe {
			raster.CLAHE(l, 256, 256, 2, 8, 8)
		}
		for i := range n {
			b2, g2, r2 := raster.LabToRGB8(l[i], a[i], b[i])
			want := [3]float32{float32(b2) / 255, float32(g2) / 255, float32(r2) / 255}
			for p := range 3 {
				if got := dst[p*n+i]; got != want[p] {
					t.Fatalf("level +%d (CLAHE %v): sample %d plane %d = %v, want %v", c.level, c.clahe, i, p, got, want[p])
				}
			}
		}
	}
}

func TestWarpFive(t *testing.T) {
	var l face.Landmarks68
	for i := range l {
		l[i] = geom.Pt{X: float64(i), Y: 1}
	}
	det := [5]geom.Pt{{X: -1}}
	if got := WarpFive(det, &l, 0.6, 0.5); got != l.Five() {
		t.Errorf("confident landmarks not used: %v", got)
	}
	if got := WarpFive(det, &l, 0.5, 0.5); got != det {
		t.Errorf("landmarks at the threshold used: %v", got)
	}
}

// warpReference is bilinear sampling written the plain way: float64 at the exact position,
// one neighbour at a time, border by border rule, rounded to nearest.
func warpReference(dst *raster.Image, src *raster.Image, m geom.Affine) {
	inv, _ := m.Invert()
	get := func(x, y, c int) float64 {
		if x < 0 || y < 0 || x >= src.W || y >= src.H {
			return 0
		}
		return float64(src.Pix[y*src.Stride+3*x+c])
	}
	for y := range dst.H {
		for x := range dst.W {
			p := inv.Apply(geom.Pt{X: float64(x), Y: float64(y)})
			x0, y0 := math.Floor(p.X), math.Floor(p.Y)
			ax, ay := p.X-x0, p.Y-y0
			for c := range 3 {
				v := (1-ax)*(1-ay)*get(int(x0), int(y0), c) + ax*(1-ay)*get(int(x0)+1, int(y0), c) +
					(1-ax)*ay*get(int(x0), int(y0)+1, c) + ax*ay*get(int(x0)+1, int(y0)+1, c)
				dst.Pix[y*dst.Stride+3*x+c] = uint8(math.Round(v))
			}
		}
	}
}

// TestWarpAgainstReference compares the OpenCV-faithful float32 warp with the plain float64
// one over random frames, similarity maps and both borders: float32 positions and lerps may
// move a sample across a rounding boundary, so they may differ by one level, rarely. It also
// checks that the fused warp+normalise of the model inputs equals WarpCrop followed by
// TensorFromImage.
func TestWarpAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var off, total int
	for trial := range 60 {
		src := randomFrame(r, 40+r.IntN(80), 40+r.IntN(80))
		size := 16 + r.IntN(48)
		s := 0.3 + 2*r.Float64()
		th := 2 * math.Pi * r.Float64()
		m := geom.Affine{A: s * math.Cos(th), B: -s * math.Sin(th), D: s * math.Sin(th), E: s * math.Cos(th),
			C: 40 * (r.Float64() - 0.5), F: 40 * (r.Float64() - 0.5)}
		fast, ref := raster.New(size, size), raster.New(size, size)
		WarpBlack(fast, src, m)
		warpReference(ref, src, m)
		for i := range fast.Pix {
			if d := int(fast.Pix[i]) - int(ref.Pix[i]); d < -1 || d > 1 {
				t.Fatalf("trial %d: sample %d is %d, reference %d", trial, i, fast.Pix[i], ref.Pix[i])
			} else if d != 0 {
				off++
			}
		}
		total += len(fast.Pix)
		n := Norm{BGR: trial%3 == 0, Scale: 127.5, Mean: [3]float64{1, 0.9, 0.8}, Std: [3]float64{1, 0.5, 2}}
		lut := table(n)
		fused, twoStep := make([]float32, 3*size*size), make([]float32, 3*size*size)
		warpTensorBlack(fused, size, size, src, m, n, &lut)
		TensorFromImage(twoStep, fast, n)
		for i := range fused {
			if fused[i] != twoStep[i] {
				t.Fatalf("trial %d: fused warp differs at %d: %v vs %v", trial, i, fused[i], twoStep[i])
			}
		}
	}
	if off > total/200 {
		t.Errorf("%d of %d samples differ by a level from the float64 reference", off, total)
	}
	t.Logf("%d of %d samples differ by one level", off, total)
}

// TestWarpIntegerShift: a whole-pixel shift must copy pixels exactly, black outside.
func TestWarpIntegerShift(t *testing.T) {
	src := randomFrame(rand.New(rand.NewPCG(30, 31)), 20, 10)
	m := geom.Affine{A: 1, C: 3, E: 1, F: -2} // crop (x, y) = frame (x − 3, y + 2)
	{
		dst := raster.New(25, 12)
		WarpBlack(dst, src, m)
		for y := range dst.H {
			for x := range dst.W {
				fx, fy := x-3, y+2
				var want [3]uint8
				if fx >= 0 && fy >= 0 && fx < src.W && fy < src.H {
					want[0], want[1], want[2] = src.At(fx, fy)
				}
				if r, g, bb := dst.At(x, y); [3]uint8{r, g, bb} != want {
					t.Fatalf("(%d,%d) = %v, want %v", x, y, [3]uint8{r, g, bb}, want)
				}
			}
		}
	}
}

func BenchmarkPrepareFAN4(b *testing.B) {
	frame := randomFrame(rand.New(rand.NewPCG(1, 1)), 1280, 720)
	dst := make([]float32, 3*256*256)
	box := geom.Rect{X0: 500, Y0: 200, X1: 700, Y1: 430}
	for b.Loop() {
		PrepareFAN4(dst, frame, box, 0)
	}
}

func BenchmarkDecodeFAN4(b *testing.B) {
	lms, heat := make([]float32, 68*3), make([]float32, 68*4096)
	m, _ := FAN4Matrix(geom.Rect{X0: 500, Y0: 200, X1: 700, Y1: 430}, 0)
	var out face.Landmarks68
	for b.Loop() {
		DecodeFAN4(&out, lms, heat, m)
	}
}

// TestPickLandmarks: FaceFusion's detect_face_landmark takes 2dfan4's points unless
// peppa_wutz's score beats 2dfan4's by 0.2 or more; a model it did not run scores 0.
func TestPickLandmarks(t *testing.T) {
	var a, b face.Landmarks68
	for _, c := range []struct {
		fan4, peppa *face.Landmarks68
		s4, sp      float64
		want        *face.Landmarks68
		score       float64
	}{
		{&a, &b, 0.7, 0.85, &a, 0.7}, // within 0.2: 2dfan4
		{&a, &b, 0.6, 0.85, &b, 0.85},
		{&a, &b, 0.6, 0.8, &b, 0.8},  // exactly 0.2 better: peppa_wutz (the test is strict)
		{&a, nil, 0.1, 0.9, &a, 0.1}, // 2dfan4 alone: always its points
		{nil, &b, 0.9, 0.3, &b, 0.3}, // peppa_wutz alone
		{nil, &b, 0.9, 0.1, nil, 0},  // peppa_wutz alone under 0.2: FaceFusion has no points
	} {
		got, score := PickLandmarks(c.fan4, c.s4, c.peppa, c.sp)
		if got != c.want || score != c.score {
			t.Errorf("2dfan4 %v@%v, peppa %v@%v: picked %p@%v, want %p@%v", c.fan4 != nil, c.s4, c.peppa != nil, c.sp, got, score, c.want, c.score)
		}
	}
	for opt, want := range map[string]int{"2dfan4": 1, "peppa_wutz": 1, "many": 2, "dlib_68": 0, "fan_68_5": 0} {
		if names, ok := LandmarkerModels(opt); len(names) != want || ok != (want > 0) {
			t.Errorf("LandmarkerModels(%s) = %v, %v", opt, names, ok)
		}
	}
}

// TestDecodePeppa plants frame points as peppa_wutz rows on the 64-grid of the turned crop.
func TestDecodePeppa(t *testing.T) {
	box := geom.Rect{X0: 510, Y0: 120, X1: 700, Y1: 330}
	r := rand.New(rand.NewPCG(3, 4))
	for _, angle := range []int{0, 90, 180, 270} {
		m, _ := FAN4Matrix(box, angle)
		var want face.Landmarks68
		pred := make([]float32, 68*3)
		conf := 0.0
		for i := range want {
			want[i] = geom.Pt{X: box.X0 + r.Float64()*box.W(), Y: box.Y0 + r.Float64()*box.H()}
			q := m.Apply(want[i])
			c := 0.3 + 0.4*r.Float64()
			pred[3*i], pred[3*i+1], pred[3*i+2] = float32(q.X/4), float32(q.Y/4), float32(c)
			conf += float64(float32(c))
		}
		var got face.Landmarks68
		score, err := DecodePeppa(&got, pred, m)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got[i].Dist(want[i]) > 1e-3 {
				t.Fatalf("angle %d: point %d %v, want %v", angle, i, got[i], want[i])
			}
		}
		if w := conf / 68 / 0.95; !near(score, w, 1e-9) {
			t.Errorf("score %v, want %v", score, w)
		}
	}
}

// Test68From5 moves five points into ffhq_512's unit square, where a face upright on the
// template lands on the template itself, and back.
func Test68From5(t *testing.T) {
	var five [5]geom.Pt
	for i, p := range [5]geom.Pt{{X: .37691676, Y: .46864664}, {X: .62285697, Y: .46912813}, {X: .50123859, Y: .61331904}, {X: .39308822, Y: .725411}, {X: .61150205, Y: .72490465}} {
		five[i] = geom.Pt{X: 300 - 200*p.Y, Y: 100 + 200*p.X} // turned 90°, scaled 200, moved
	}
	in := make([]float32, 10)
	m := Prepare68From5(in, five)
	if !near(float64(in[0]), .37691676, 1e-6) || !near(float64(in[9]), .72490465, 1e-6) {
		t.Errorf("unit-square five %v, want ffhq_512's template", in)
	}
	out := make([]float32, 136)
	for k := range 68 {
		out[2*k], out[2*k+1] = float32(k)/68, 0.5
	}
	var l face.Landmarks68
	if err := Decode68From5(&l, out, m); err != nil {
		t.Fatal(err)
	}
	// The unit square's left-to-right runs down the frame: angle 90.
	if got := l.Angle(); got != 90 {
		t.Errorf("angle %d, want 90 (points %v … %v)", got, l[0], l[16])
	}
}
