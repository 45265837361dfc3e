package infer_test

import (
	"os"
	"path/filepath"
	"slices"
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
		paths = append(paths, filepath.Join(dir, n+".onnx"))
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
			t.Errorf("%s: from the file %s; ONNX Runtime says %s", filepath.Base(p), got, infer.Signature{conv(ins), conv(outs)})
		}
	}
	junk := filepath.Join(dir, "junk.onnx")
	if err := os.WriteFile(junk, []byte("not a model at all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := infer.ReadSignature(junk)
	testenv.CheckError(t, "junk", err, "not a loadable ONNX model", "replace the file")
}
