package infer

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// fileSignature reads a model's graph inputs and outputs as the file declares them (inputs that
// are initializers left out, as ONNX Runtime does; a named or unknown axis as Dyn). The file is
// mapped, not read: only the graph's small fields are touched, never the weights, so a 554 MB
// swapper's signature costs a few pages instead of a throwaway session (which reads, parses
// and copies every weight: seconds, and as much memory again). ONNX Runtime's shape inference
// may fix an axis the file leaves dynamic (scrfd's outputs, at its export size); a session asks
// it only for an axis nothing else resolves (Session.inferredDim).
func fileSignature(path string) (Signature, error) {
	m, err := mapFile(path)
	if err != nil {
		return Signature{}, err
	}
	defer syscall.Munmap(m)
	return parseSignature(m)
}

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
			shape = f.b
		}
		return nil
	})
	if err != nil {
		return t, err
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
