package jpeg

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// cvWriteScript writes the files only OpenCV's encoder makes here (progressive, restart
// intervals, greyscale from one channel, 16-bit BGRA with a varying alpha) into argv[1].
const cvWriteScript = `
import sys, cv2, numpy as np
d, src = sys.argv[1], sys.argv[2]
img = cv2.imread(src, cv2.IMREAD_COLOR)[3:260, 1:330]
cv2.imwrite(d + '/cv-progressive.jpg', img, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1, cv2.IMWRITE_JPEG_QUALITY, 90])
cv2.imwrite(d + '/cv-restart.jpg', img, [cv2.IMWRITE_JPEG_RST_INTERVAL, 3, cv2.IMWRITE_JPEG_QUALITY, 75])
cv2.imwrite(d + '/cv-optimize-q40.jpg', img, [cv2.IMWRITE_JPEG_OPTIMIZE, 1, cv2.IMWRITE_JPEG_QUALITY, 40])
cv2.imwrite(d + '/cv-grey.jpg', cv2.cvtColor(img, cv2.COLOR_BGR2GRAY))
rng = np.random.default_rng(7)
cv2.imwrite(d + '/bgra16.png', rng.integers(0, 65536, (37, 53, 4), dtype=np.uint16))
cv2.imwrite(d + '/bgr16.png', rng.integers(0, 65536, (31, 29, 3), dtype=np.uint16))
`

// cvReadScript prints, for each file, cv2.imread(path, IMREAD_COLOR) turned to RGB into path.rgb
// and its size.
const cvReadScript = `
import sys, cv2
for p in sys.argv[1:]:
    m = cv2.imread(p, cv2.IMREAD_COLOR)
    open(p + '.rgb', 'wb').write(cv2.cvtColor(m, cv2.COLOR_BGR2RGB).tobytes())
    print(m.shape[1], m.shape[0])
`

func oraclePython(t *testing.T) string {
	py := os.Getenv("FFREF_PYTHON")
	if py == "" {
		py = "/usr/bin/python3"
	}
	if err := exec.Command(py, "-c", "import cv2, numpy").Run(); err != nil {
		t.Fatalf("%s with cv2 and numpy (python3-opencv; $FFREF_PYTHON) is needed as the oracle: %v", py, err)
	}
	return py
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// withOrientation returns a JPEG with an EXIF APP1 (big-endian TIFF, IFD0 holding only the
// orientation tag) spliced in after SOI.
func withOrientation(jpg []byte, o int) []byte {
	var tiff bytes.Buffer
	tiff.WriteString("MM\x00\x2a")
	binary.Write(&tiff, binary.BigEndian, uint32(8))
	binary.Write(&tiff, binary.BigEndian, uint16(1))
	binary.Write(&tiff, binary.BigEndian, []uint16{0x0112, 3})
	binary.Write(&tiff, binary.BigEndian, uint32(1))
	binary.Write(&tiff, binary.BigEndian, []uint16{uint16(o), 0})
	binary.Write(&tiff, binary.BigEndian, uint32(0))
	payload := append([]byte("Exif\x00\x00"), tiff.Bytes()...)
	var out bytes.Buffer
	out.Write(jpg[:2])
	out.Write([]byte{0xff, 0xe1})
	binary.Write(&out, binary.BigEndian, uint16(len(payload)+2))
	out.Write(payload)
	out.Write(jpg[2:])
	return out.Bytes()
}

// TestLoadIsCv2Imread holds raster.Load (with this package's decoder) to the oracle's cv2.imread(path, IMREAD_COLOR) (OpenCV 4.6 on
// the system's libjpeg-turbo and libpng), bit for bit, on JPEGs of every subsampling, quality,
// progressive, with restart markers, greyscale, odd sizes and each EXIF orientation, and on
// 8/16-bit, grey, grey+alpha, palette and 1-bit PNGs.
func TestLoadIsCv2Imread(t *testing.T) {
	testenv.Full(t, "runs the Python oracle (cv2) and ffmpeg on every kind of file")
	py := oraclePython(t)
	ffmpeg := testenv.Tool(t, "ffmpeg")
	d := t.TempDir()
	coffee := testenv.Sample(t, "coffee.png")
	files := []string{testenv.Sample(t, "grace_hopper.jpg")}
	for _, c := range []struct{ name, vf, pixfmt, q string }{
		{"ff-420-q3.jpg", "crop=301:199:5:7", "yuvj420p", "3"},
		{"ff-422-q10.jpg", "crop=300:201:0:0", "yuvj422p", "10"},
		{"ff-444-q2.jpg", "crop=257:130:9:11", "yuvj444p", "2"},
		{"ff-grey-q5.jpg", "crop=99:97:40:40", "gray", "5"},
		{"ff-420-tiny.jpg", "crop=33:17:100:100", "yuvj420p", "20"},
	} {
		p := filepath.Join(d, c.name)
		run(t, ffmpeg, "-v", "error", "-i", coffee, "-vf", c.vf, "-pix_fmt", c.pixfmt, "-q:v", c.q, p)
		files = append(files, p)
	}
	run(t, py, "-c", cvWriteScript, d, coffee)
	for _, n := range []string{"cv-progressive.jpg", "cv-restart.jpg", "cv-optimize-q40.jpg", "cv-grey.jpg", "bgra16.png", "bgr16.png"} {
		files = append(files, filepath.Join(d, n))
	}
	for _, f := range []string{"rgba", "rgb24", "ya16be", "ya8", "gray16be", "gray", "pal8", "monob", "rgb48be"} {
		p := filepath.Join(d, "png-"+f+".png")
		run(t, ffmpeg, "-v", "error", "-i", filepath.Join(d, "bgra16.png"), "-pix_fmt", f, p)
		files = append(files, p)
	}
	jpg, err := os.ReadFile(filepath.Join(d, "ff-420-q3.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	for o := 1; o <= 8; o++ {
		p := filepath.Join(d, fmt.Sprintf("exif-%d.jpg", o))
		if err := os.WriteFile(p, withOrientation(jpg, o), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	out, err := exec.Command(py, append([]string{"-c", cvReadScript}, files...)...).Output()
	if err != nil {
		t.Fatalf("cv2.imread: %v", err)
	}
	sizes := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, p := range files {
		var w, h int
		fmt.Sscan(sizes[i], &w, &h)
		want, err := os.ReadFile(p + ".rgb")
		if err != nil {
			t.Fatal(err)
		}
		got, err := raster.Load(p)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
			continue
		}
		if got.W != w || got.H != h {
			t.Errorf("%s: %dx%d, cv2.imread gives %dx%d", filepath.Base(p), got.W, got.H, w, h)
			continue
		}
		diff, maxd := 0, 0
		for j, v := range got.Bytes() {
			if d := int(v) - int(want[j]); d != 0 {
				diff++
				maxd = max(maxd, d, -d)
			}
		}
		if diff != 0 {
			t.Errorf("%s: %d of %d samples differ from cv2.imread, by up to %d", filepath.Base(p), diff, len(want), maxd)
		}
	}
}

// TestLoadRefusesCMYKAndJunk: a file neither format can read gets one error naming it.
func TestLoadRefusesJunk(t *testing.T) {
	p := filepath.Join(t.TempDir(), "junk.jpg")
	if err := os.WriteFile(p, []byte{0xff, 0xd8, 0xff, 0xe0, 0, 2, 1, 2, 3}, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := raster.Load(p)
	testenv.CheckError(t, "a truncated JPEG", err, p, "not a readable JPEG image")
}

// TestEncodeIsCv2Imwrite holds Encode to the oracle's cv2.imencode('.jpg') byte for
// byte: FaceFusion writes a JPEG target's processed frame with cv2.imwrite before ffmpeg
// finalises it, so that intermediate file must be OpenCV's.
func TestEncodeIsCv2Imwrite(t *testing.T) {
	testenv.Full(t, "runs the Python oracle (cv2)")
	py := oraclePython(t)
	d := t.TempDir()
	for _, c := range []struct {
		sample  string
		quality int
		crop    [4]int
	}{
		{"astronaut.png", 95, [4]int{0, 0, 512, 512}},
		{"coffee.png", 95, [4]int{3, 5, 301, 199}},
		{"grace_hopper.jpg", 60, [4]int{1, 0, 33, 17}},
	} {
		src, err := raster.Load(testenv.Sample(t, c.sample))
		if err != nil {
			t.Fatal(err)
		}
		img := raster.New(c.crop[2], c.crop[3])
		for y := range img.H {
			copy(img.Pix[y*img.Stride:][:3*img.W], src.Pix[(c.crop[1]+y)*src.Stride+3*c.crop[0]:])
		}
		raw := filepath.Join(d, "frame.rgb")
		if err := os.WriteFile(raw, img.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		want := filepath.Join(d, "cv.jpg")
		run(t, py, "-c", `
import sys, cv2, numpy as np
w, h, q = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
m = np.fromfile(sys.argv[1], np.uint8).reshape(h, w, 3)[:, :, ::-1]
open(sys.argv[2], 'wb').write(cv2.imencode('.jpg', m, [cv2.IMWRITE_JPEG_QUALITY, q])[1].tobytes())
`, raw, want, fmt.Sprint(img.W), fmt.Sprint(img.H), fmt.Sprint(c.quality))
		wantBytes, err := os.ReadFile(want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Encode(img, c.quality)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, wantBytes) {
			t.Errorf("%s %dx%d q%d: %d bytes, cv2.imencode gives %d other bytes", c.sample, img.W, img.H, c.quality, len(got), len(wantBytes))
		}
	}
}
