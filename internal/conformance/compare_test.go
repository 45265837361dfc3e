package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// A face of FaceFusion's with an embedding and classes; ours as the test makes it.
func ffFace() faceJSON {
	g, r := "female", "white"
	return faceJSON{BoundingBox: []float64{1, 2, 3, 4}, Embedding: []float64{0.1, 0.2}, EmbeddingNorm: []float64{0.3, 0.4},
		Gender: &g, Race: &r, Age: []int{20, 29}}
}

// What ours lacks of FaceFusion's face fails the comparison; what neither has is no failure.
func TestCompareFacesMissing(t *testing.T) {
	ff := &facesJSON{Faces: []faceJSON{ffFace()}}
	same := &facesJSON{Faces: []faceJSON{ffFace()}}
	if ok, why := compareFacesFig(ff, same).within(CompareFaces); !ok {
		t.Fatalf("equal faces fail: %s", why)
	}
	noEmb := ffFace()
	noEmb.Embedding, noEmb.EmbeddingNorm = nil, nil
	f := compareFacesFig(ff, &facesJSON{Faces: []faceJSON{noEmb}})
	if ok, why := f.within(CompareFaces); ok || !strings.Contains(why, "embedding missing") {
		t.Errorf("ours without an embedding: within %v (%q), want a failure naming it", ok, why)
	}
	noCls := ffFace()
	noCls.Gender, noCls.Race, noCls.Age = nil, nil, nil
	f = compareFacesFig(ff, &facesJSON{Faces: []faceJSON{noCls}})
	if ok, why := f.within(CompareFaces); ok || !strings.Contains(why, "gender/age/race missing") {
		t.Errorf("ours without classes: within %v (%q), want a failure naming them", ok, why)
	}
	// A missing class on the second face is not hidden by an equal first one.
	f = compareFacesFig(&facesJSON{Faces: []faceJSON{ffFace(), ffFace()}}, &facesJSON{Faces: []faceJSON{ffFace(), noCls}})
	if f.Classes != "missing" {
		t.Errorf("second face without classes: classes %q, want missing", f.Classes)
	}
	bare := faceJSON{BoundingBox: []float64{1, 2, 3, 4}}
	f = compareFacesFig(&facesJSON{Faces: []faceJSON{bare}}, &facesJSON{Faces: []faceJSON{bare}})
	if ok, why := f.within(CompareFaces); !ok || f.Classes != "none" || !strings.Contains(f.text(CompareFaces), "embedding n/a") {
		t.Errorf("neither side with an embedding or classes: within %v (%q), classes %q, text %q", ok, why, f.Classes, f.text(CompareFaces))
	}
}

func compareFacesFig(ff, ours *facesJSON) *Figures {
	f := compareFaces(ff, ours)
	return &f
}

// Frames of different sizes are a measured divergence, not an error: with a cause the case
// is a known divergence and its figures name both sizes.
func TestSizeMismatchIsRecorded(t *testing.T) {
	a := []frameRGB{{4, 2, make([]uint8, 4*2*3)}}
	b := []frameRGB{{2, 4, make([]uint8, 2*4*3)}}
	f, err := comparePixels(a, b, nil, "")
	if err != nil {
		t.Fatalf("comparePixels: %v", err)
	}
	ok, why := f.within(CompareImage)
	if ok || why != "size 4x2 vs 2x4" || f.text(CompareImage) != "size 4x2 vs 2x4 (ours)" {
		t.Fatalf("within %v (%q), text %q; want a failure with both sizes", ok, why, f.text(CompareImage))
	}

	dir := t.TempDir()
	p := paths{ffResult: filepath.Join(dir, "ff.json"), ffOut: filepath.Join(dir, "ff.png"), oursOut: filepath.Join(dir, "ours.png"), diff: filepath.Join(dir, "d.png")}
	if err := os.WriteFile(p.ffResult, []byte(`{"ok": true, "faces": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	writeGrey(t, p.ffOut, 4, 2)
	writeGrey(t, p.oursOut, 2, 4)
	c := &Case{Name: "x", Compare: CompareImage, Cause: "a cause"}
	if r := measure(c, p, ""); r.verdict != verdictKnown || r.why != "size 4x2 vs 2x4" {
		t.Errorf("with a cause: verdict %s (%q), want a known divergence", r.verdict, r.why)
	}
	c.Cause = ""
	if r := measure(c, p, ""); r.verdict != verdictFails {
		t.Errorf("without a cause: verdict %s, want a failure", r.verdict)
	}
}

func writeGrey(t *testing.T, path string, w, h int) {
	t.Helper()
	if err := writePNG(path, raster.New(w, h)); err != nil {
		t.Fatal(err)
	}
}
