package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// TestModelsCommand lists every known model file with its state against FaceFusion's published
// hashes; it fails only for a file the job needs that is missing or refused.
func TestModelsCommand(t *testing.T) {
	dir := clitest.FixtureModels(t)
	args := []string{"models", "--models-dir", dir, "--processors", "face_swapper", "face_enhancer",
		"--face-swapper-model", "inswapper_128", "--face-mask-types", "box", "occlusion"}
	// row is the listed line of model name, its fields split on the table's spaces.
	row := func(out, name string) string {
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == name {
				return strings.Join(f, " ")
			}
		}
		t.Errorf("models does not list %s:\n%s", name, out)
		return ""
	}
	r := clitest.Run(t, args...)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	// The fixtures carry FaceFusion's names, not its bytes: mismatched where a hash is
	// published (both sums named), "no published hash" where none is; every known model is
	// listed, the job's marked.
	inswapper := filepath.Join(dir, "inswapper_128.onnx")
	for name, want := range map[string]string{
		"inswapper_128":     "inswapper_128 needs mismatched ok ",
		"arcface_w600k_r50": "arcface_w600k_r50 needs mismatched ok ",
		"gfpgan_1.4":        "gfpgan_1.4 needs mismatched ok ",
		"xseg_1":            "xseg_1 needs mismatched ok ",
		"codeformer":        "codeformer mismatched ok ",
		"ghost_1_256":       "ghost_1_256 no published hash ok ",
		"crossface_simswap": "crossface_simswap no published hash ok ",
		"retinaface_10g":    "retinaface_10g mismatched ok ",
		"fr_feature":        "fr_feature mismatched ok ",
	} {
		if got := row(r.Stdout, name); !strings.HasPrefix(got, want) {
			t.Errorf("%s: %q, want it to start %q", name, got, want)
		}
	}
	if got := row(r.Stdout, "inswapper_128"); !strings.Contains(got, inswapper) ||
		!strings.Contains(got, "a290273ed497312095dac48cdef20feec9d5208298223dd01288ab202b54bea7") {
		t.Errorf("inswapper_128's mismatch does not name the file and FaceFusion's sum: %q", got)
	}
	// The embedded default's recognizer is in the same table: its licence and its package's sum.
	if got := row(r.Stdout, "fr_feature"); !strings.Contains(got, "MIT (package); the weights' origin is not stated") ||
		!strings.Contains(got, "npm faceplugin-face-recognition-js@0.0.1 publishes 87aacdfe57510db2af90c0251df680e8eec88f122ee94712121d09bcaaaf3581") {
		t.Errorf("fr_feature: %q", got)
	}
	// The embedded default's job does not need fr_feature; its identity measure uses it.
	if got := row(clitest.Run(t, "models", "--models-dir", dir).Stdout, "fr_feature"); !strings.HasPrefix(got, "fr_feature measure ") {
		t.Errorf("fr_feature for the embedded default: %q, want it marked as the identity measure's", got)
	}
	// Checksums need no runtime: without one, one warning line, the signatures not checked.
	r = clitest.Run(t, append(args, "--onnxruntime-library", filepath.Join(dir, "no-libonnxruntime.so"))...)
	if r.Code != 0 || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 || !strings.Contains(r.Stderr, "no-libonnxruntime.so") ||
		!strings.Contains(r.Stderr, "signatures not checked") {
		t.Fatalf("without a runtime: exit %d, want 0 and one warning line:\n%s", r.Code, r.Stderr)
	}
	if got := row(r.Stdout, "inswapper_128"); !strings.HasPrefix(got, "inswapper_128 needs mismatched not checked ") {
		t.Errorf("without a runtime: %q", got)
	}
	if got := row(r.Stdout, "dlib_68"); !strings.HasPrefix(got, "dlib_68 needs found - ") {
		t.Errorf("the embedded default's landmarker file: %q", got)
	}
	os.Remove(filepath.Join(dir, "xseg_1.onnx"))
	os.Remove(filepath.Join(dir, "shape_predictor_68_face_landmarks.dat")) // the embedded default's, read from the same folder
	os.Remove(filepath.Join(dir, "2dfan4.onnx"))                           // missing too, but the job does not need it
	os.WriteFile(inswapper, fixtures.WrongSignature(), 0o644)
	r = clitest.Run(t, args...)
	// force-download keeps a file with other bytes unless --force: the refused one needs it
	if r.Code != exitEnvironment || !strings.Contains(r.Stderr, "3 of the 6 model files the job needs") || !strings.Contains(r.Stderr, "`--force` in place of a refused one") {
		t.Fatalf("exit %d; want %d with two missing and one refused model of the job's:\n%s%s", r.Code, exitEnvironment, r.Stdout, r.Stderr)
	}
	if got := row(r.Stdout, "dlib_68"); !strings.HasPrefix(got, "dlib_68 needs missing") || !strings.Contains(got, "make fetch") {
		t.Errorf("the embedded default's missing landmarker file: %q", got)
	}
	if got := row(r.Stdout, "xseg_1"); !strings.HasPrefix(got, "xseg_1 needs missing - - GPL-3.0") || !strings.Contains(got, "FaceFusion publishes 70324286 bytes") {
		t.Errorf("xseg_1: %q", got)
	}
	if got := row(r.Stdout, "inswapper_128"); !strings.HasPrefix(got, "inswapper_128 needs refused") || !strings.Contains(got, "wrong signature") {
		t.Errorf("inswapper_128: %q", got)
	}
	if got := row(r.Stdout, "2dfan4"); !strings.HasPrefix(got, "2dfan4 missing") {
		t.Errorf("2dfan4: %q", got)
	}
}

// A model file with the wrong signature under a known name is refused before any frame is
// read: one line naming the file, the expected and the found signature; no job folder, no
// output.
func TestWrongSignatureRefusedBeforeFrames(t *testing.T) {
	dir := clitest.FixtureModels(t)
	os.WriteFile(filepath.Join(dir, "inswapper_128.onnx"), fixtures.WrongSignature(), 0o644)
	work := t.TempDir()
	clip := filepath.Join(work, "clip.mp4")
	clitest.FaceClip(t, clip, 320, 240, 6, "25")
	out := filepath.Join(work, "out.mp4")
	r := clitest.Run(t, "run", "-s", testenv.Sample(t, "grace_hopper.png"), "-t", clip, "-o", out,
		"--models-dir", dir, "--face-swapper-model", "inswapper_128")
	if r.Code != exitEnvironment {
		t.Fatalf("exit %d, want %d: %s", r.Code, exitEnvironment, r.Stderr)
	}
	line := strings.TrimSpace(r.Stderr)
	if strings.Count(line, "\n") != 0 || !strings.Contains(line, filepath.Join(dir, "inswapper_128.onnx")) ||
		!strings.Contains(line, "expected") || !strings.Contains(line, "found") {
		t.Errorf("want one line naming the file, the expected and the found signature:\n%s", r.Stderr)
	}
	clitest.MustNotExist(t, out)
	if _, err := os.Stat(out + ".job"); err == nil {
		t.Error("a job folder was made: frames were going to be read")
	}
}

// twoFaces is an image with the same face twice: the left one warm (blue cut), the right one
// cool (red cut). The fixture recognizer's embedding is a function of the crop's channel means
// (plain and ramp-weighted), so the two are far apart and each is at distance 0 from itself.
func twoFaces(t *testing.T, path string) *raster.Image {
	src, err := raster.Load(testenv.Sample(t, "astronaut.png"))
	if err != nil {
		t.Fatal(err)
	}
	img := raster.New(320, 180)
	for y := 0; y < 150; y++ {
		for x := 0; x < 150; x++ {
			r, g, b := src.At(150+x, 40+y)
			img.Set(5+x, 15+y, r, g, b/3)
			img.Set(165+x, 15+y, r/3, g, b)
		}
	}
	if err := img.SavePNG(path); err != nil {
		t.Fatal(err)
	}
	return img
}

// changed counts the pixels of [x0,x1)×[y0,y1) that differ between a and b.
func changed(a, b *raster.Image, x0, y0, x1, y1 int) int {
	n := 0
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			r1, g1, b1 := a.At(x, y)
			r2, g2, b2 := b.At(x, y)
			if r1 != r2 || g1 != g2 || b1 != b2 {
				n++
			}
		}
	}
	return n
}

// twoPeople is an image of two people side by side: astronaut.png's face on the left,
// grace_hopper.png's on the right, each about 90 px from brow to chin.
func twoPeople(t *testing.T, path string) *raster.Image {
	img := raster.New(320, 180)
	for i, c := range []struct {
		name     string
		x, y, sc float64 // the sample's top-left corner of the crop, and sample pixels per image pixel
	}{{"astronaut.png", 150, 40, 1}, {"grace_hopper.png", 115, 95, 1.9}} {
		src, err := raster.Load(testenv.Sample(t, c.name))
		if err != nil {
			t.Fatal(err)
		}
		crop := raster.New(150, 150)
		align.WarpCrop(crop, src, geom.Affine{A: 1 / c.sc, C: -c.x / c.sc, E: 1 / c.sc, F: -c.y / c.sc})
		for y := range 150 {
			for x := range 150 {
				r, g, b := crop.At(x, y)
				img.Set(5+160*i+x, 15+y, r, g, b)
			}
		}
	}
	if err := img.SavePNG(path); err != nil {
		t.Fatal(err)
	}
	return img
}

// Reference mode swaps only the faces that match the reference face: with FaceFusion's models
// (fixtures, arcface's place) and with the embedded default's alone (the real fr_feature
// recognizer, two different people).
func TestReferenceSelection(t *testing.T) {
	dir := clitest.FixtureModels(t)
	work := t.TempDir()
	target := filepath.Join(work, "two.png")
	in := twoFaces(t, target)
	for _, c := range []struct {
		position    string
		left, right bool // which face must change
	}{{"0", true, false}, {"1", false, true}} {
		out := filepath.Join(work, "out"+c.position+".png")
		r := clitest.Run(t, "run", "-s", testenv.Sample(t, "grace_hopper.png"), "-t", target, "-o", out, "--models-dir", dir,
			"--face-selector-mode", "reference", "--face-selector-order", "left-right", "--reference-face-position", c.position,
			"--face-swapper-model", "inswapper_128")
		if r.Code != 0 {
			t.Fatalf("exit %d: %s", r.Code, r.Stderr)
		}
		// The fixtures are not FaceFusion's files: one warning line each, and the run goes on.
		for _, f := range []string{"inswapper_128.onnx", "arcface_w600k_r50.onnx"} {
			if n := strings.Count(r.Stderr, filepath.Join(dir, f)+": sha256 "); n != 1 || !strings.Contains(r.Stderr, "check it is the one you meant") {
				t.Errorf("%d published-hash warnings for %s, want 1:\n%s", n, f, r.Stderr)
			}
		}
		got, err := raster.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		left, right := changed(in, got, 0, 0, 160, 180), changed(in, got, 160, 0, 320, 180)
		ok := left > 500 && right == 0
		if !c.left {
			ok = right > 500 && left == 0
		}
		if !ok {
			t.Errorf("reference position %s: %d pixels of the left face and %d of the right changed; want only the %s face",
				c.position, left, right, map[bool]string{true: "left", false: "right"}[c.left])
		}
	}
	// The embedded default (BlazeFace, dlib, classic) in reference mode: fr_feature tells the
	// two people apart at the default reference_face_distance; the run report measures the one
	// face swapped. (One position: the fixture runs above cover the order and position.)
	people := filepath.Join(work, "people.png")
	in = twoPeople(t, people)
	for _, c := range []struct {
		position    string
		left, right bool
	}{{"0", true, false}} {
		out := filepath.Join(work, "people"+c.position+".png")
		r := clitest.Run(t, "run", "-s", testenv.Sample(t, "grace_hopper.png"), "-t", people, "-o", out,
			"--face-selector-mode", "reference", "--face-selector-order", "left-right", "--reference-face-position", c.position)
		if r.Code != 0 {
			t.Fatalf("embedded default, reference position %s: exit %d: %s", c.position, r.Code, r.Stderr)
		}
		got, err := raster.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		left, right := changed(in, got, 0, 0, 160, 180), changed(in, got, 160, 0, 320, 180)
		if c.left && (left < 500 || right != 0) || c.right && (right < 500 || left != 0) {
			t.Errorf("embedded default, reference position %s: %d pixels of the left face and %d of the right changed; want only the %s face",
				c.position, left, right, map[bool]string{true: "left", false: "right"}[c.left])
		}
		var rep report.Report
		if b, err := os.ReadFile(out + ".report.json"); err != nil || json.Unmarshal(b, &rep) != nil {
			t.Fatalf("run report: %v", err)
		} else if id := rep.Identity; id == nil || id.Recognizer != "fr_feature" || id.Faces != 1 {
			t.Errorf("embedded default, reference position %s: identity %+v, want fr_feature's measure of 1 face", c.position, id)
		}
	}
}

// A site's custom deep_swapper model the job runs is checked and listed as the job's, after
// the catalog's: a file that is no model fails the check (exit 4) as a catalog model's would.
func TestModelsCustomDeepSwapper(t *testing.T) {
	dir := clitest.FixtureModels(t)
	good, err := os.ReadFile(filepath.Join(dir, "iperov", "elon_musk_224.dfm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "custom"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"mine.dfm": good, "broken.dfm": []byte("not a model")} {
		if err := os.WriteFile(filepath.Join(dir, "custom", name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		model, want string
		code        int
	}{
		{"custom/mine", "custom/mine needs no published hash ok ", 0},
		{"custom/broken", "custom/broken needs refused ", exitEnvironment},
	} {
		r := clitest.Run(t, "models", "--models-dir", dir, "--processors", "deep_swapper", "--face-detector-model", "scrfd", "--deep-swapper-model", c.model)
		var row string
		for _, l := range strings.Split(r.Stdout, "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == c.model {
				row = strings.Join(f, " ")
			}
		}
		if r.Code != c.code || !strings.HasPrefix(row, c.want) {
			t.Errorf("%s: exit %d (want %d), row %q, want it to start %q\n%s", c.model, r.Code, c.code, row, c.want, r.Stderr)
		}
		// No download brings a site's own model: the line says what to do instead.
		if c.code != 0 && (strings.Contains(r.Stderr, "force-download") ||
			!strings.Contains(r.Stderr, "custom/broken is the site's own model, which no download brings: put a working model file at "+filepath.Join(dir, "custom", "broken.dfm"))) {
			t.Errorf("%s: the line should say what to do for a site's own model, not force-download:\n%s", c.model, r.Stderr)
		}
	}
}
