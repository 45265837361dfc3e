package raster

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"os"
	"testing"
)

var inkColour = RGB{R: 200, G: 10, B: 30}

// cvCase is one drawing of testdata/cvdraw.json and the digest of what OpenCV drew.
type cvCase struct {
	Op     string `json:"op"`
	A, B   [2]int
	T, R   int
	Bits   string          `json:"bits"`
	N      int             `json:"n"`
	Points json.RawMessage `json:"points"`
	Hull   int             `json:"hull"`
	Want   string          `json:"want"`
}

// inked is the digest cvdraw_golden.py takes of a canvas: one byte per pixel, 1 where inkColour is.
func inked(m *Image) string {
	b := make([]byte, m.W*m.H)
	for y := range m.H {
		for x := range m.W {
			if r, g, bl := m.At(x, y); r == inkColour.R && g == inkColour.G && bl == inkColour.B {
				b[y*m.W+x] = 1
			}
		}
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}

// TestDrawMatchesOpenCV draws every case of testdata/cvdraw.json (lines, rectangles and
// filled circles of many sizes and thicknesses, partly off the canvas, the contours of random
// blobs with holes, filled convex hulls of point clouds) and compares with what OpenCV drew,
// pixel for pixel.
func TestDrawMatchesOpenCV(t *testing.T) {
	raw, err := os.ReadFile("testdata/cvdraw.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		OpenCV string
		W, H   int
		Cases  []cvCase
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	var cf ContourFinder
	seen := map[string]int{}
	for i, c := range golden.Cases {
		m := New(golden.W, golden.H)
		a, b := image.Pt(c.A[0], c.A[1]), image.Pt(c.B[0], c.B[1])
		what := fmt.Sprintf("case %d: %s", i, c.Op)
		switch c.Op {
		case "line":
			m.Line(a, b, c.T, inkColour)
			what += fmt.Sprintf(" %v-%v t=%d", a, b, c.T)
		case "rectangle":
			m.StrokeRect(a.X, a.Y, b.X, b.Y, c.T, inkColour)
			what += fmt.Sprintf(" %v-%v t=%d", a, b, c.T)
		case "circle":
			m.FillCircle(a.X, a.Y, c.R, inkColour)
			what += fmt.Sprintf(" %v r=%d", a, c.R)
		case "contours":
			packed, err := hex.DecodeString(c.Bits)
			if err != nil {
				t.Fatal(err)
			}
			bin := make([]uint8, golden.W*golden.H)
			for j := range bin {
				bin[j] = packed[j/8] >> (7 - j%8) & 1
			}
			cs := cf.Find(bin, golden.W, golden.H)
			n := 0
			for _, ct := range cs {
				n += len(ct)
			}
			if want := fmt.Sprintf("%d contours of %s points", c.N, c.Points); fmt.Sprintf("%d contours of %d points", len(cs), n) != want {
				t.Errorf("%s: %d contours of %d points, OpenCV %s", what, len(cs), n, want)
			}
			m.DrawContours(cs, image.Point{}, c.T, inkColour)
			what += fmt.Sprintf(" t=%d", c.T)
		case "hull":
			var pts [][2]int
			if err := json.Unmarshal(c.Points, &pts); err != nil {
				t.Fatal(err)
			}
			var ps []image.Point
			for _, p := range pts {
				ps = append(ps, image.Pt(p[0], p[1]))
			}
			hull := ConvexHull(nil, ps)
			if len(hull) != c.Hull {
				t.Errorf("%s: hull of %d corners, OpenCV's has %d", what, len(hull), c.Hull)
			}
			mask := make([]float32, golden.W*golden.H)
			FillConvexPolyMask(mask, golden.W, golden.H, hull, 1)
			for j, v := range mask {
				if v != 0 {
					m.Pix[3*j], m.Pix[3*j+1], m.Pix[3*j+2] = inkColour.R, inkColour.G, inkColour.B
				}
			}
			what += fmt.Sprintf(" of %d points", len(ps))
		default:
			t.Fatalf("%s: unknown op", what)
		}
		seen[c.Op]++
		if got := inked(m); got != c.Want {
			t.Errorf("%s: drew %s, OpenCV %s drew %s", what, got, golden.OpenCV, c.Want)
		}
	}
	for _, op := range []string{"line", "rectangle", "circle", "contours", "hull"} {
		if seen[op] < 50 {
			t.Errorf("testdata/cvdraw.json has %d %s cases, want at least 50", seen[op], op)
		}
	}
}

func TestDrawDoesNotAllocate(t *testing.T) {
	m := New(64, 64)
	region := make([]uint8, 16*16)
	for y := 4; y < 9; y++ {
		for x := 3; x < 12; x++ {
			region[y*16+x] = 1
		}
	}
	var cf ContourFinder
	cf.Find(region, 16, 16) // sizes its buffers
	if n := testing.AllocsPerRun(5, func() {
		m.FillCircle(30, 30, 6, inkColour)
		m.StrokeRect(2, 2, 60, 60, 3, inkColour)
		m.Line(image.Pt(3, 50), image.Pt(40, 7), 4, inkColour)
		m.DrawContours(cf.Find(region, 16, 16), image.Pt(10, 10), 2, inkColour)
	}); n != 0 {
		t.Errorf("drawing allocates %v times", n)
	}
}
