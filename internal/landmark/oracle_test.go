package landmark

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// oracleSource is a C++ program that runs dlib's own shape_predictor: it loads the model named
// by argv[1], then reads "image.png left top right bottom" lines on stdin and prints the 68
// points dlib finds (x y pairs, rounded to whole pixels by dlib) one face per line.
// It includes only the PNG loader and the shape predictor, not dlib/image_io.h and
// dlib/image_processing.h: the same code runs, and g++ takes half the CPU (8 s, not 16).
const oracleSource = `
#include <dlib/image_loader/png_loader.h>
#include <dlib/image_processing/shape_predictor.h>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
	if (argc != 2) { std::cerr << "usage: oracle model.dat < faces\n"; return 2; }
	dlib::shape_predictor sp;
	dlib::deserialize(argv[1]) >> sp;
	std::string png;
	long l, t, r, b;
	while (std::cin >> png >> l >> t >> r >> b) {
		dlib::array2d<dlib::rgb_pixel> img;
		dlib::load_png(img, png);
		dlib::full_object_detection det = sp(img, dlib::rectangle(l, t, r, b));
		for (unsigned long i = 0; i < det.num_parts(); ++i)
			std::cout << det.part(i).x() << ' ' << det.part(i).y() << (i + 1 < det.num_parts() ? ' ' : '\n');
	}
	return 0;
}
`

var (
	oracleOnce sync.Once
	oracleDir  string // removed by TestMain
	oracleBin  string
	oracleErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if oracleDir != "" {
		os.RemoveAll(oracleDir)
	}
	os.Exit(code)
}

// oracle compiles oracleSource against libdlib-dev once per test binary and returns the
// executable.
func oracle(t *testing.T) string {
	t.Helper()
	gxx := testenv.Tool(t, "g++")
	oracleOnce.Do(func() {
		oracleDir, oracleErr = os.MkdirTemp("", "landmark-oracle-")
		if oracleErr != nil {
			return
		}
		src := filepath.Join(oracleDir, "oracle.cpp")
		if oracleErr = os.WriteFile(src, []byte(oracleSource), 0o644); oracleErr != nil {
			return
		}
		oracleBin = filepath.Join(oracleDir, "oracle")
		args := []string{"-O2", "-std=c++14", "-o", oracleBin, src}
		if pc, err := exec.LookPath("pkg-config"); err == nil {
			out, err := exec.Command(pc, "--cflags", "--libs", "dlib-1").Output()
			if err != nil {
				oracleErr = fmt.Errorf("pkg-config dlib-1: %v (install libdlib-dev)", err)
				return
			}
			args = append(args, strings.Fields(string(out))...)
		} else {
			args = append(args, "-ldlib", "-lpng", "-ljpeg", "-lz", "-lpthread")
		}
		// Debian's libdlib.so needs BLAS/LAPACK symbols the .pc file does not always name.
		args = append(args, "-lblas", "-llapack")
		var stderr bytes.Buffer
		cmd := exec.Command(gxx, args...)
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			oracleErr = fmt.Errorf("compiling the dlib oracle failed (install libdlib-dev): %v\n%s", err, stderr.String())
		}
	})
	if oracleErr != nil {
		t.Fatal(oracleErr)
	}
	return oracleBin
}

// oracleCase is one face for dlib: a PNG and an integer dlib rectangle.
type oracleCase struct {
	png        string
	l, t, r, b int
}

func (c oracleCase) box() geom.Rect {
	return geom.Rect{X0: float64(c.l), Y0: float64(c.t), X1: float64(c.r), Y1: float64(c.b)}
}

// runOracle returns dlib's landmarks for every case, in order.
func runOracle(t *testing.T, model string, cases []oracleCase) []face.Landmarks68 {
	t.Helper()
	var in strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&in, "%s %d %d %d %d\n", c.png, c.l, c.t, c.r, c.b)
	}
	cmd := exec.Command(oracle(t), model)
	cmd.Stdin = strings.NewReader(in.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dlib oracle: %v\n%s", err, stderr.String())
	}
	var res []face.Landmarks68
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2*numParts {
			t.Fatalf("dlib oracle printed %d numbers on a line, want %d: %q", len(f), 2*numParts, sc.Text())
		}
		var l face.Landmarks68
		for i := range l {
			x, err1 := strconv.Atoi(f[2*i])
			y, err2 := strconv.Atoi(f[2*i+1])
			if err1 != nil || err2 != nil {
				t.Fatalf("dlib oracle printed a non-integer: %q", sc.Text())
			}
			l[i] = geom.Pt{X: float64(x), Y: float64(y)}
		}
		res = append(res, l)
	}
	if len(res) != len(cases) {
		t.Fatalf("dlib oracle answered %d faces, want %d\n%s", len(res), len(cases), stderr.String())
	}
	return res
}
