package infer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"syscall"
)

// Initializer is one weight tensor stored in an ONNX file's graph.
type Initializer struct {
	Name string
	Dims []int64
	Type DType
	// Data is the values as float32 (float16 and float64 converted); nil for other types.
	Data []float32
}

// ReadInitializers decodes an ONNX file's graph initializers in file order without ONNX
// Runtime: a minimal protobuf reader for ModelProto.graph.initializer (dims, data_type, name,
// raw_data or float_data). FaceFusion reads inswapper's emap as the last one.
func ReadInitializers(path string) ([]Initializer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("onnx file %s: %v", path, err)
	}
	inits, err := parseInitializers(b)
	if err != nil {
		return nil, fileError(path, err)
	}
	return inits, nil
}

// Emap reads inswapper's embedding map (the last initializer, 512×512) from the model file. The
// file is mapped and only that initializer decoded: a worker's swapper costs 1 MB, not a copy of
// all 554 MB of weights.
func Emap(path string) ([]float32, error) {
	if data, ok := preloadedData(path); ok {
		out, err := emap(path, data)
		if err != nil {
			return nil, fileError(path, err)
		}
		return out, nil
	}
	m, err := mapFile(path)
	if err != nil {
		return nil, fmt.Errorf("onnx file %s: %v", path, err)
	}
	defer syscall.Munmap(m)
	if testHookMapped != nil {
		testHookMapped(path)
	}
	var out []float32
	if err := readMapped(func() (err error) { out, err = emap(path, m); return err }); err != nil {
		return nil, fileError(path, err)
	}
	return out, nil
}

// fileError is a model file's reading error with its cause and what to do.
func fileError(path string, err error) error {
	switch {
	case errors.Is(err, errChanged):
		return fmt.Errorf("onnx file %s: %v: let whatever writes it finish, then run again", path, err)
	case errors.Is(err, errExternalData):
		return fmt.Errorf("onnx file %s: %v: use FaceFusion's own file, whose weights are inside the .onnx (or re-export it without external data)", path, err)
	case errors.Is(err, errNotInswapper):
		return err
	}
	return fmt.Errorf("onnx file %s: %v: the file is damaged or not an ONNX model; replace it", path, err)
}

// errNotInswapper marks emap's answer for a well-formed file that is not FaceFusion's inswapper.
var errNotInswapper = errors.New("not FaceFusion's inswapper")

// errExternalData is a tensor whose data lives in a file beside the model (data_location
// EXTERNAL), which this reader does not follow.
var errExternalData = errors.New("keeps its data in an external file (data_location EXTERNAL)")

func emap(path string, m []byte) ([]float32, error) {
	var graph, last []byte
	err := pbEach(m, func(f pbField) error {
		if f.num == 7 && f.wire == 2 { // ModelProto.graph
			graph = f.b
		}
		return nil
	})
	if err == nil {
		err = pbEach(graph, func(f pbField) error {
			if f.num == 5 && f.wire == 2 { // GraphProto.initializer
				last = f.b
			}
			return nil
		})
	}
	if err != nil {
		return nil, err
	}
	if last == nil {
		return nil, fmt.Errorf("inswapper model %s: no initializers: %w; replace it", path, errNotInswapper)
	}
	e, err := parseTensor(last)
	if err != nil {
		return nil, err
	}
	if len(e.Dims) != 2 || e.Dims[0] != 512 || e.Dims[1] != 512 || len(e.Data) != 512*512 {
		return nil, fmt.Errorf("inswapper model %s: last initializer %q is %v %s, want the 512×512 float emap: %w; replace it", path, e.Name, e.Dims, e.Type, errNotInswapper)
	}
	return e.Data, nil
}

var errTruncated = errors.New("truncated protobuf")

// pbField is one decoded protobuf field: v for varint/fixed wire types, b for length-delimited.
type pbField struct {
	num  int
	wire int
	v    uint64
	b    []byte
}

// pbNext decodes the field at the start of b and returns the rest.
func pbNext(b []byte) (pbField, []byte, error) {
	key, n := binary.Uvarint(b)
	if n <= 0 {
		return pbField{}, nil, errTruncated
	}
	b = b[n:]
	f := pbField{num: int(key >> 3), wire: int(key & 7)}
	switch f.wire {
	case 0:
		f.v, n = binary.Uvarint(b)
		if n <= 0 {
			return f, nil, errTruncated
		}
		b = b[n:]
	case 1:
		if len(b) < 8 {
			return f, nil, errTruncated
		}
		f.v, b = binary.LittleEndian.Uint64(b), b[8:]
	case 5:
		if len(b) < 4 {
			return f, nil, errTruncated
		}
		f.v, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
	case 2:
		l, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			return f, nil, errTruncated
		}
		f.b, b = b[n:n+int(l)], b[n+int(l):]
	default:
		return f, nil, fmt.Errorf("unsupported protobuf wire type %d", f.wire)
	}
	return f, b, nil
}

// pbEach calls fn for every field in msg.
func pbEach(msg []byte, fn func(pbField) error) error {
	for len(msg) > 0 {
		f, rest, err := pbNext(msg)
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
		msg = rest
	}
	return nil
}

func parseInitializers(model []byte) ([]Initializer, error) {
	var graph []byte
	err := pbEach(model, func(f pbField) error {
		if f.num == 7 && f.wire == 2 { // ModelProto.graph
			graph = f.b
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if graph == nil {
		return nil, errors.New("no graph")
	}
	var out []Initializer
	err = pbEach(graph, func(f pbField) error {
		if f.num != 5 || f.wire != 2 { // GraphProto.initializer
			return nil
		}
		t, err := parseTensor(f.b)
		if err != nil {
			return err
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

// parseTensor decodes a TensorProto: dims (1, packed or not), data_type (2), float_data (4),
// name (8), raw_data (9), double_data (10). External data is not supported (FaceFusion's files
// keep their weights inline).
func parseTensor(msg []byte) (Initializer, error) {
	var t Initializer
	var raw []byte
	var floats []float32
	var doubles []float64
	external := false
	err := pbEach(msg, func(f pbField) error {
		switch {
		case f.num == 1 && f.wire == 0:
			t.Dims = append(t.Dims, int64(f.v))
		case f.num == 1 && f.wire == 2:
			for p := f.b; len(p) > 0; {
				v, n := binary.Uvarint(p)
				if n <= 0 {
					return errTruncated
				}
				t.Dims, p = append(t.Dims, int64(v)), p[n:]
			}
		case f.num == 2 && f.wire == 0:
			t.Type = DType(f.v)
		case f.num == 4 && f.wire == 5:
			floats = append(floats, math.Float32frombits(uint32(f.v)))
		case f.num == 4 && f.wire == 2:
			for p := f.b; len(p) >= 4; p = p[4:] {
				floats = append(floats, math.Float32frombits(binary.LittleEndian.Uint32(p)))
			}
		case f.num == 8 && f.wire == 2:
			t.Name = string(f.b)
		case f.num == 9 && f.wire == 2:
			raw = f.b
		case f.num == 10 && f.wire == 1:
			doubles = append(doubles, math.Float64frombits(f.v))
		case f.num == 10 && f.wire == 2:
			for p := f.b; len(p) >= 8; p = p[8:] {
				doubles = append(doubles, math.Float64frombits(binary.LittleEndian.Uint64(p)))
			}
		case f.num == 14 && f.wire == 0: // data_location: EXTERNAL = 1
			external = f.v == 1
		}
		return nil
	})
	if err == nil && external {
		err = fmt.Errorf("initializer %q %w", t.Name, errExternalData)
	}
	if err != nil {
		return t, err
	}
	switch t.Type {
	case Float32:
		if raw != nil {
			t.Data = make([]float32, len(raw)/4)
			for i := range t.Data {
				t.Data[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
		} else {
			t.Data = floats
		}
	case Float16:
		// Without raw_data, float16 values sit in int32_data (field 5), one per element; the
		// exporters FaceFusion's files come from always write raw_data.
		t.Data = make([]float32, len(raw)/2)
		for i := range t.Data {
			t.Data[i] = F32From16(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	case Float64:
		if raw != nil {
			doubles = doubles[:0]
			for p := raw; len(p) >= 8; p = p[8:] {
				doubles = append(doubles, math.Float64frombits(binary.LittleEndian.Uint64(p)))
			}
		}
		t.Data = make([]float32, len(doubles))
		for i, d := range doubles {
			t.Data[i] = float32(d)
		}
	}
	return t, nil
}
