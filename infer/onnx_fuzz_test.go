package infer_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// FuzzONNXFile feeds the ONNX file reader (ReadSignature, ReadInitializers, Emap) any bytes as
// a model file, which a user hands over with --models-dir or a colleague's shared folder holds:
// each gives an answer or an error, never a panic, and never more values than the file's bytes
// can hold. A file that reads reads the same with its weights cut short (thin), since the
// signature never looks at them: what the reader skips it skips by length, not by luck. The
// seeds are the real models (FaceFusion's scrfd, the cache's BlazeFace) and the fixtures,
// thinned so that the fuzzer mutates their structure, not their weights.
func FuzzONNXFile(f *testing.F) {
	var real [][]byte
	for _, p := range []string{testenv.SharedModel(f, "scrfd_2.5g.onnx"), testenv.Model(f, "blazeface_front_128.onnx"),
		testenv.Model(f, "blazeface_back_256.onnx")} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		real = append(real, b)
	}
	for _, b := range real {
		b, ok := thin(b)
		if !ok {
			f.Fatal("a real model does not decode")
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	seen := map[int]bool{} // fixtures of one family differ in little but their size
	for _, n := range fixtures.Names {
		b, err := fixtures.Model(n)
		if err != nil {
			f.Fatal(err)
		}
		if b, _ = thin(b); !seen[len(b)] {
			f.Add(b)
			seen[len(b)] = true
		}
	}
	f.Add(fixtures.WrongSignature())
	// ReadSignature and Emap take the bytes registered for a path (a job's model broadcast)
	// instead of mapping the file: the same decoder, at a hundred times the pace here.
	path := filepath.Join(f.TempDir(), "model.onnx")
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		infer.Preload(path, b, time.Time{})
		sig, sigErr := infer.ReadSignature(path)
		if n := len(sig.Inputs) + len(sig.Outputs); n > len(b) {
			t.Fatalf("%d tensors from %d bytes", n, len(b))
		}
		inits, initErr := infer.ReadInitializers(path)
		values, dims := 0, 0
		for _, in := range inits {
			values, dims = values+len(in.Data), dims+len(in.Dims)
		}
		if values > len(b) || dims > len(b) {
			t.Fatalf("%d values and %d dims from %d bytes", values, dims, len(b))
		}
		if e, err := infer.Emap(path); err == nil && len(e) != 512*512 {
			t.Fatalf("an emap of %d values", len(e))
		}
		thinned, ok := thin(b)
		if !ok || (sigErr != nil && initErr != nil) {
			return
		}
		if err := os.WriteFile(path, thinned, 0o644); err != nil {
			t.Fatal(err)
		}
		infer.Preload(path, thinned, time.Time{})
		if sigErr == nil {
			sig2, err := infer.ReadSignature(path)
			if err != nil || !reflect.DeepEqual(sig, sig2) {
				t.Fatalf("with its weights cut, the signature %s reads as %s (%v)", sig, sig2, err)
			}
		}
		if initErr == nil {
			inits2, err := infer.ReadInitializers(path)
			if err != nil || len(inits2) != len(inits) {
				t.Fatalf("with its weights cut, %d initializers read as %d (%v)", len(inits), len(inits2), err)
			}
			for i := range inits {
				if inits[i].Name != inits2[i].Name || !reflect.DeepEqual(inits[i].Dims, inits2[i].Dims) || inits[i].Type != inits2[i].Type {
					t.Fatalf("with its weights cut, initializer %d reads differently", i)
				}
			}
		}
	})
}

// thin re-encodes an ONNX model (with protowire, the protobuf module's own wire decoder) with
// every initializer's bulk data (raw_data, packed float_data and double_data) cut to its first
// 16 bytes, every other field kept as it is; ok is false where protowire cannot decode it.
func thin(model []byte) (out []byte, ok bool) {
	cutTensor := func(tensor []byte) ([]byte, bool) {
		return rewrite(tensor, func(num protowire.Number, typ protowire.Type, v []byte) ([]byte, bool) {
			if (num == 4 || num == 9 || num == 10) && typ == protowire.BytesType && len(v) > 16 {
				return v[:16], true
			}
			return v, true
		})
	}
	cutGraph := func(graph []byte) ([]byte, bool) {
		return rewrite(graph, func(num protowire.Number, typ protowire.Type, v []byte) ([]byte, bool) {
			if num == 5 && typ == protowire.BytesType {
				return cutTensor(v)
			}
			return v, true
		})
	}
	return rewrite(model, func(num protowire.Number, typ protowire.Type, v []byte) ([]byte, bool) {
		if num == 7 && typ == protowire.BytesType {
			return cutGraph(v)
		}
		return v, true
	})
}

// rewrite re-encodes msg with each length-delimited field's bytes replaced by edit's answer;
// other fields are copied whole.
func rewrite(msg []byte, edit func(protowire.Number, protowire.Type, []byte) ([]byte, bool)) ([]byte, bool) {
	var out []byte
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return nil, false
		}
		m := protowire.ConsumeFieldValue(num, typ, msg[n:])
		if m < 0 {
			return nil, false
		}
		if typ != protowire.BytesType {
			out = append(out, msg[:n+m]...)
		} else {
			v, _ := protowire.ConsumeBytes(msg[n:])
			v, ok := edit(num, typ, v)
			if !ok {
				return nil, false
			}
			out = protowire.AppendBytes(protowire.AppendTag(out, num, typ), v)
		}
		msg = msg[n+m:]
	}
	return out, true
}
