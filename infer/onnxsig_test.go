package infer_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// TestFileSignatureMatchesRuntime reads the signature of every fixture, both BlazeFace files and
// FaceFusion's own scrfd_2.5g (../shared/models) from the file and from an ONNX Runtime session:
// names, types, ranks and order agree, and every axis the file fixes; an axis the file leaves
// dynamic ONNX Runtime may have inferred (scrfd's anchor counts at 640).
func TestFileSignatureMatchesRuntime(t *testing.T) {
	if err := infer.Init(testenv.ORTLibrary(t)); err != nil {
		t.Fatal(err)
	}
	dir := fixtures.Dir(t)
	wrong := filepath.Join(dir, "wrong.onnx")
	if err := os.WriteFile(wrong, fixtures.WrongSignature(), 0o644); err != nil {
		t.Fatal(err)
	}
	paths := []string{wrong, testenv.Model(t, "blazeface_front_128.onnx"), testenv.Model(t, "blazeface_back_256.onnx")}
	paths = append(paths, testenv.SharedModel(t, "scrfd_2.5g.onnx"))
	for _, n := range fixtures.Names {
		paths = append(paths, filepath.Join(dir, fixtures.File(n)))
	}
	conv := func(infos []ort.InputOutputInfo) []infer.TensorSpec {
		out := make([]infer.TensorSpec, len(infos))
		for i, in := range infos {
			out[i] = infer.TensorSpec{Name: in.Name, Shape: append([]int64{}, in.Dimensions...), Type: infer.DType(in.DataType)}
		}
		return out
	}
	same := func(file, rt []infer.TensorSpec) bool {
		return slices.EqualFunc(file, rt, func(x, y infer.TensorSpec) bool {
			return x.Name == y.Name && x.Type == y.Type && slices.EqualFunc(x.Shape, y.Shape, func(a, b int64) bool { return a == b || a == infer.Dyn })
		})
	}
	for _, p := range paths {
		got, err := infer.ReadSignature(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		ins, outs, err := ort.GetInputOutputInfo(p)
		if err != nil {
			t.Fatal(err)
		}
		if !same(got.Inputs, conv(ins)) || !same(got.Outputs, conv(outs)) {
			t.Errorf("%s: from the file %s; ONNX Runtime says %s", filepath.Base(p), got, infer.Signature{Inputs: conv(ins), Outputs: conv(outs)})
		}
	}
	junk := filepath.Join(dir, "junk.onnx")
	if err := os.WriteFile(junk, []byte("not a model at all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := infer.ReadSignature(junk)
	testenv.CheckError(t, "junk", err, "not a loadable ONNX model", "replace the file")
}

// TestMappedFileTruncated: a model file truncated in place while its signature or inswapper's
// emap is read from the mapping is an error naming the file and the cause, not a SIGBUS.
func TestMappedFileTruncated(t *testing.T) {
	dir := fixtures.Dir(t, "inswapper_128")
	defer infer.SetMappedHook(nil)
	for what, read := range map[string]func(string) error{
		"signature": func(p string) error { _, err := infer.ReadSignature(p); return err },
		"emap":      func(p string) error { _, err := infer.Emap(p); return err },
	} {
		path := filepath.Join(t.TempDir(), "inswapper_128.onnx")
		b, err := os.ReadFile(filepath.Join(dir, "inswapper_128.onnx"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		infer.SetMappedHook(func(p string) {
			if err := os.Truncate(p, 0); err != nil {
				t.Error(err)
			}
		})
		err = read(path)
		infer.SetMappedHook(nil)
		testenv.CheckError(t, what+" of a file truncated while mapped", err, "changed while it was read")
	}
}

// TestValueInfoRank: a ValueInfo with no shape field has an unknown rank, which any contract
// shape accepts; one with an empty shape is a scalar.
func TestValueInfoRank(t *testing.T) {
	noShape := []byte{0x0a, 0x01, 'x', 0x12, 0x04, 0x0a, 0x02, 0x08, 0x01}
	scalar := []byte{0x0a, 0x01, 'x', 0x12, 0x06, 0x0a, 0x04, 0x08, 0x01, 0x12, 0x00}
	got, err := infer.ParseValueInfo(noShape)
	if err != nil || got.Shape != nil || got.Name != "x" || got.Type != infer.Float32 {
		t.Errorf("no shape field: %v (shape %#v), %v; want x of unknown rank (nil shape)", got, got.Shape, err)
	}
	want := infer.Signature{Inputs: []infer.TensorSpec{{Name: "x", Shape: []int64{1, 3, 2, 2}, Type: infer.Float32}}, Outputs: []infer.TensorSpec{{Shape: []int64{1}, Type: infer.Float32}}}
	found := infer.Signature{Inputs: []infer.TensorSpec{got}, Outputs: []infer.TensorSpec{{Name: "y", Shape: []int64{1}, Type: infer.Float32}}}
	if why := infer.Check(want, found); why != "" {
		t.Errorf("an input of unknown rank refused: %s", why)
	}
	if got, err = infer.ParseValueInfo(scalar); err != nil || got.Shape == nil || len(got.Shape) != 0 {
		t.Errorf("an empty shape: %#v, %v; want a scalar (empty, not nil)", got.Shape, err)
	}
	if why := infer.Check(want, infer.Signature{Inputs: []infer.TensorSpec{got}, Outputs: found.Outputs}); why == "" {
		t.Error("a scalar input accepted for a rank-4 contract")
	}
}

// TestExternalData: an initializer whose data lives beside the file is named as the cause.
func TestExternalData(t *testing.T) {
	tensor := []byte{0x42, 0x01, 'w', 0x10, 0x01, 0x70, 0x01} // name w, float, data_location EXTERNAL
	model := append([]byte{0x3a, byte(len(tensor) + 2), 0x2a, byte(len(tensor))}, tensor...)
	path := filepath.Join(t.TempDir(), "external.onnx")
	if err := os.WriteFile(path, model, 0o644); err != nil {
		t.Fatal(err)
	}
	for what, read := range map[string]func(string) error{
		"initializers": func(p string) error { _, err := infer.ReadInitializers(p); return err },
		"emap":         func(p string) error { _, err := infer.Emap(p); return err },
	} {
		err := read(path)
		testenv.CheckError(t, what, err, path, `"w"`, "external file")
		if err != nil && strings.Contains(err.Error(), "damaged") {
			t.Errorf("%s: %v: external data is not damage", what, err)
		}
	}
}
