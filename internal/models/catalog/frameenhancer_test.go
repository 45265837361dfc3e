package catalog

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// The frame enhancers' rows are FaceFusion 3.8.1's create_static_model_set, model by model:
// licence, download base, tile size/pad/overlap, scale and the fp16 mark, read from its
// core.py, so a row typed wrong (which a conformance case of that one model alone would show)
// fails here, and no model is missing or extra.
func TestFrameEnhancersAreFaceFusions(t *testing.T) {
	path := filepath.Join(testenv.Root(t), "..", "shared", "reference", "facefusion-3.8.1", "facefusion", "processors", "modules", "frame_enhancer", "core.py")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("FaceFusion's source is missing (%v): put ../shared/reference beside the checkout", err)
	}
	entry := regexp.MustCompile(`(?s)\t\t'([a-z0-9_]+)':\n\t\t\{\n(.*?)\n\t\t\}`)
	licence := regexp.MustCompile(`'license': '([^']+)'`)
	base := regexp.MustCompile(`resolve_download_url\('(models-[0-9.]+)', '[a-z0-9_]+\.onnx'\)`)
	size := regexp.MustCompile(`'size': \((\d+), (\d+), (\d+)\),\n\t\t\t'scale': (\d+)`)
	seen := 0
	for _, m := range entry.FindAllSubmatch(src, -1) {
		name, body := string(m[1]), m[2]
		model, ok := table[name]
		if !ok || model.Kind != FrameEnhancer {
			t.Errorf("FaceFusion's frame enhancer %s is not in the catalog", name)
			continue
		}
		seen++
		sz := size.FindSubmatch(body)
		lic, b := licence.FindSubmatch(body), base.FindSubmatch(body)
		if sz == nil || lic == nil || b == nil {
			t.Errorf("%s: cannot read its size, scale, licence or base in %s", name, path)
			continue
		}
		n := func(i int) int { v, _ := strconv.Atoi(string(sz[i])); return v }
		want := Tile{Size: n(1), Pad: n(2), Overlap: n(3)}
		if model.Tile != want || model.Scale != n(4) {
			t.Errorf("%s: tile %+v ×%d, FaceFusion's %+v ×%d", name, model.Tile, model.Scale, want, n(4))
		}
		if model.Licence != string(lic[1]) || model.Base != string(b[1]) {
			t.Errorf("%s: licence %q base %q, FaceFusion's %q %q", name, model.Licence, model.Base, lic[1], b[1])
		}
		if fp16 := regexp.MustCompile(`'precision': 'fp16'`).Match(body); model.FP16 != fp16 {
			t.Errorf("%s: fp16 %v, FaceFusion's %v", name, model.FP16, fp16)
		}
	}
	if n := len(Of(FrameEnhancer)); seen != 19 || n != 19 {
		t.Errorf("read %d of FaceFusion's frame enhancers, the catalog has %d; FaceFusion 3.8.1 has 19", seen, n)
	}
}
