package infer

import (
	"fmt"
	"slices"
	"strings"
)

// DType is a tensor element type as ONNX numbers it (TensorProto.DataType), so the same values
// serve the session, the file reader and the fixture writer.
type DType int32

// The element types FaceFusion's models use.
const (
	Float32 DType = 1
	Uint8   DType = 2
	Int64   DType = 7
	Float16 DType = 10
	Float64 DType = 11
	// AnyFloat in a contract accepts Float32 or Float16: FaceFusion feeds its "_fp16" swappers
	// float32 arrays (prepare_crop_frame's astype(numpy.float32), a float32 embedding) and ONNX
	// Runtime refuses another element type, so their files keep float32 inputs and outputs
	// around a half-precision graph; a float16-input export loads too.
	AnyFloat DType = -1
)

// Size is the number of bytes one element takes.
func (t DType) Size() int {
	switch t {
	case Float32:
		return 4
	case Float16:
		return 2
	case Float64, Int64:
		return 8
	case Uint8:
		return 1
	}
	return 0
}

func (t DType) String() string {
	switch t {
	case Float32:
		return "float32"
	case Float16:
		return "float16"
	case Float64:
		return "float64"
	case Int64:
		return "int64"
	case Uint8:
		return "uint8"
	case AnyFloat:
		return "float32|float16"
	}
	return fmt.Sprintf("dtype(%d)", int32(t))
}

// accepts reports whether a file's element type satisfies the contract's.
func (t DType) accepts(found DType) bool {
	if t == AnyFloat {
		return found == Float32 || found == Float16
	}
	return t == found
}

// Dyn in a contract shape means FaceFusion does not depend on that axis: the file may fix it or
// leave it dynamic. In a file's signature it marks a dynamic axis.
const Dyn int64 = -1

// TensorSpec is one input or output in a contract or in a file's signature. An empty Name in a
// contract output means "any name": FaceFusion runs every model with run(None, …) and takes the
// outputs by position, so only their order, rank and type are part of the contract.
type TensorSpec struct {
	Name string
	// Shape is nil where a file declares no shape (rank unknown), empty for a scalar.
	Shape []int64
	Type  DType
}

func (s TensorSpec) String() string {
	name := s.Name
	if name == "" {
		name = "*"
	}
	if s.Shape == nil {
		return fmt.Sprintf("%s[rank unknown]%s", name, s.Type)
	}
	dims := make([]string, len(s.Shape))
	for i, d := range s.Shape {
		if d < 0 {
			dims[i] = "?"
		} else {
			dims[i] = fmt.Sprint(d)
		}
	}
	return fmt.Sprintf("%s[%s]%s", name, strings.Join(dims, ","), s.Type)
}

// matches reports whether a file's tensor found satisfies the contract's tensor c.
func (c TensorSpec) matches(found TensorSpec) bool {
	if c.Name != "" && c.Name != found.Name {
		return false
	}
	if !c.Type.accepts(found.Type) {
		return false
	}
	if found.Shape == nil {
		return true // a rank the file does not declare: every axis is ONNX Runtime's to check
	}
	if len(c.Shape) != len(found.Shape) {
		return false
	}
	for i, d := range c.Shape {
		// A dynamic axis in the file accepts whatever size FaceFusion feeds.
		if d >= 0 && found.Shape[i] >= 0 && d != found.Shape[i] {
			return false
		}
	}
	return true
}

// Signature is a model's inputs and outputs in file order.
type Signature struct {
	Inputs, Outputs []TensorSpec
	// Optional names the inputs a file may lack: FaceFusion feeds them only where the file has
	// them (deep_swapper's 'morph_value:0'). A file's own signature has none.
	Optional []string
}

func (s Signature) String() string {
	join := func(ts []TensorSpec) string {
		parts := make([]string, len(ts))
		for i, t := range ts {
			parts[i] = t.String()
		}
		return strings.Join(parts, " ")
	}
	return "in(" + join(s.Inputs) + ") out(" + join(s.Outputs) + ")"
}

// Check compares a file's signature found with the one FaceFusion's code relies on, want, and
// returns a one-line reason when it does not satisfy it, or "" when it does. Inputs are matched
// by name (FaceFusion binds them by name, in any order); outputs by position.
func Check(want, found Signature) string {
	c := want
	required := 0
	for _, in := range c.Inputs {
		if !slices.Contains(c.Optional, in.Name) {
			required++
		}
	}
	if len(found.Inputs) < required || len(found.Inputs) > len(c.Inputs) || len(found.Outputs) != len(c.Outputs) {
		return fmt.Sprintf("%d inputs and %d outputs, want %d and %d",
			len(found.Inputs), len(found.Outputs), len(c.Inputs), len(c.Outputs))
	}
	for _, want := range c.Inputs {
		ok := false
		for _, f := range found.Inputs {
			if f.Name == want.Name {
				if !want.matches(f) {
					return fmt.Sprintf("input %s, want %s", f, want)
				}
				ok = true
			}
		}
		if !ok && !slices.Contains(c.Optional, want.Name) {
			return fmt.Sprintf("no input named %q", want.Name)
		}
	}
	for _, f := range found.Inputs {
		if !slices.ContainsFunc(c.Inputs, func(w TensorSpec) bool { return w.Name == f.Name }) {
			return fmt.Sprintf("input %s is not one of FaceFusion's", f)
		}
	}
	for i, want := range c.Outputs {
		if !want.matches(found.Outputs[i]) {
			return fmt.Sprintf("output %d is %s, want %s", i, found.Outputs[i], want)
		}
	}
	return ""
}

// Spec is what a session needs to know of a model: the name errors call it by, its file name in
// the models folder, the signature its callers rely on, and whether a batch of items can be one
// run (when the file's batch axis is dynamic too).
type Spec struct {
	Name    string
	File    string
	Want    Signature
	Batched bool
	// Published is the file FaceFusion publishes under the name (zero: none is published): a
	// file with another sha256 is reported and warned about, not refused.
	Published Published
}

// Published is what FaceFusion publishes of a model file: its size and hashes (sha256 from the
// Git LFS pointer, CRC32 from FaceFusion's MODEL.hash). Zero values mean none is published.
type Published struct {
	Bytes  int64
	SHA256 string
	CRC32  string
	// By is who publishes it where that is not FaceFusion (a package: "npm NAME@VERSION").
	By string
}

// Publisher is who publishes the file: FaceFusion, or By.
func (p Published) Publisher() string {
	if p.By != "" {
		return p.By
	}
	return "FaceFusion"
}
