package infer

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"syscall"

	ort "github.com/yalue/onnxruntime_go"
)

// fileSignature reads a model's graph inputs and outputs as the file declares them (inputs that
// are initializers left out, as ONNX Runtime does; a named or unknown axis as Dyn). The file is
// mapped, not read: only the graph's small fields are touched, never the weights, so a 554 MB
// swapper's signature costs a few pages instead of a throwaway session (which reads, parses
// and copies every weight: seconds, and as much memory again). ONNX Runtime's shape inference
// may fix an axis the file leaves dynamic (scrfd's outputs, at its export size); a session asks
// it only for an axis nothing else resolves (Session.inferredDim).
//
// A tensor whose ValueInfo has no shape field has an unknown rank (not a scalar): ONNX Runtime,
// when loaded, is asked for it; otherwise it stays unknown (Shape nil), which a contract accepts
// as any rank of dynamic axes.
func fileSignature(path string) (Signature, error) {
	if data, ok := preloadedData(path); ok { // bytes in memory: nothing to map, nothing to fault
		sig, err := parseSignature(data)
		if err != nil {
			return Signature{}, err
		}
		askRuntime(path, &sig)
		return sig, nil
	}
	m, err := mapFile(path)
	if err != nil {
		return Signature{}, err
	}
	defer syscall.Munmap(m)
	if testHookMapped != nil {
		testHookMapped(path)
	}
	var sig Signature
	if err := readMapped(func() (err error) { sig, err = parseSignature(m); return err }); err != nil {
		return Signature{}, err
	}
	askRuntime(path, &sig)
	return sig, nil
}

// askRuntime fills the shapes of sig's tensors of unknown rank from ONNX Runtime's own reading
// of the file (a throwaway session: only ever for such a file), when the runtime is loaded and
// knows more.
func askRuntime(path string, sig *Signature) {
	unknown := false
	for _, t := range append(append([]TensorSpec(nil), sig.Inputs...), sig.Outputs...) {
		unknown = unknown || t.Shape == nil
	}
	if !unknown || !ortReady() {
		return
	}
	ins, outs, err := inputOutputInfo(path)
	if err != nil {
		return
	}
	fill := func(ts []TensorSpec, infos []ort.InputOutputInfo) {
		for i := range ts {
			for _, info := range infos {
				if info.Name == ts[i].Name && ts[i].Shape == nil && len(info.Dimensions) > 0 {
					ts[i].Shape = make([]int64, len(info.Dimensions))
					for k, d := range info.Dimensions {
						ts[i].Shape[k] = max(d, Dyn)
					}
				}
			}
		}
	}
	fill(sig.Inputs, ins)
	fill(sig.Outputs, outs)
}

// inputOutputInfo is ONNX Runtime's reading of a model's inputs and outputs, from the
// registered bytes when the process holds them.
func inputOutputInfo(path string) ([]ort.InputOutputInfo, []ort.InputOutputInfo, error) {
	if data, ok := preloadedData(path); ok {
		return ort.GetInputOutputInfoWithONNXData(data)
	}
	return ort.GetInputOutputInfo(path)
}

// errChanged is a mapped file's page that could not be read: the file was truncated (or
// replaced in place) while it was mapped.
var errChanged = errors.New("the file changed while it was read (truncated or rewritten in place?)")

// readMapped runs fn, which reads a mapped file: a page fault there (SIGBUS, the file truncated
// under the mapping) becomes errChanged instead of a crash of the rank.
func readMapped(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(interface{ Addr() uintptr }); ok {
				err = errChanged
				return
			}
			panic(r)
		}
	}()
	return fn()
}

// testHookMapped, when set, is called once a file is mapped, before it is read.
var testHookMapped func(path string)

// mapFile maps a file read-only: its pages are read only where the parser looks.
func mapFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() == 0 {
		return nil, errors.New("empty file")
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("cannot map the file: %v", err)
	}
	return m, nil
}

// parseSignature decodes ModelProto.graph (7): initializer (5) names, input (11), output (12).
func parseSignature(model []byte) (Signature, error) {
	var graph []byte
	if err := pbEach(model, func(f pbField) error {
		if f.num == 7 && f.wire == 2 {
			graph = f.b
		}
		return nil
	}); err != nil {
		return Signature{}, err
	}
	if graph == nil {
		return Signature{}, errors.New("no graph")
	}
	inits := map[string]bool{}
	var ins, outs [][]byte
	err := pbEach(graph, func(f pbField) error {
		switch {
		case f.num == 5 && f.wire == 2:
			return pbEach(f.b, func(t pbField) error {
				if t.num == 8 && t.wire == 2 { // TensorProto.name; raw_data is skipped, untouched
					inits[string(t.b)] = true
				}
				return nil
			})
		case f.num == 11 && f.wire == 2:
			ins = append(ins, f.b)
		case f.num == 12 && f.wire == 2:
			outs = append(outs, f.b)
		}
		return nil
	})
	if err != nil {
		return Signature{}, err
	}
	var sig Signature
	for _, b := range ins {
		t, err := parseValueInfo(b)
		if err != nil {
			return Signature{}, err
		}
		if !inits[t.Name] {
			sig.Inputs = append(sig.Inputs, t)
		}
	}
	for _, b := range outs {
		t, err := parseValueInfo(b)
		if err != nil {
			return Signature{}, err
		}
		sig.Outputs = append(sig.Outputs, t)
	}
	if len(sig.Inputs) == 0 || len(sig.Outputs) == 0 {
		return Signature{}, errors.New("the graph has no inputs or no outputs")
	}
	return sig, nil
}

// parseValueInfo decodes a ValueInfoProto: name (1), type (2) → TypeProto.tensor_type (1) →
// elem_type (1), shape (2) → dim (1) → dim_value (1) or dim_param (2).
func parseValueInfo(msg []byte) (TensorSpec, error) {
	var t TensorSpec
	var typ, tensor, shape []byte
	hasShape := false
	err := pbEach(msg, func(f pbField) error {
		switch {
		case f.num == 1 && f.wire == 2:
			t.Name = string(f.b)
		case f.num == 2 && f.wire == 2:
			typ = f.b
		}
		return nil
	})
	if err == nil && typ != nil {
		err = pbEach(typ, func(f pbField) error {
			if f.num == 1 && f.wire == 2 {
				tensor = f.b
			}
			return nil
		})
	}
	if err != nil {
		return t, err
	}
	if tensor == nil {
		return t, fmt.Errorf("%s is not a tensor", t.Name)
	}
	err = pbEach(tensor, func(f pbField) error {
		switch {
		case f.num == 1 && f.wire == 0:
			t.Type = DType(f.v)
		case f.num == 2 && f.wire == 2:
			shape, hasShape = f.b, true
		}
		return nil
	})
	if err != nil || !hasShape {
		return t, err // no shape field: the rank is unknown (Shape nil), not a scalar
	}
	err = pbEach(shape, func(f pbField) error {
		if f.num != 1 || f.wire != 2 {
			return nil
		}
		d := Dyn
		err := pbEach(f.b, func(g pbField) error {
			if g.num == 1 && g.wire == 0 {
				d = int64(g.v)
			}
			return nil
		})
		t.Shape = append(t.Shape, d)
		return err
	})
	if t.Shape == nil {
		t.Shape = []int64{}
	}
	return t, err
}
