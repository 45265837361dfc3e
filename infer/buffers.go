package infer

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// pageSize is the allocation granule: buffers start on a page so that ONNX Runtime (and the CUDA
// driver, which pins whole pages) sees aligned memory.
var pageSize = os.Getpagesize()

// region is one tensor's memory: an anonymous mapping outside the Go heap, so the garbage
// collector never scans or moves it and the CUDA driver may pin it. A PROT_NONE guard page
// follows the data, so an overrun faults instead of corrupting a neighbour (and the kernel never
// merges two buffers into one mapping).
type region struct {
	mapping []byte // data plus guard page, as returned by mmap
	data    []byte // the usable bytes, len = the requested size
	pinned  bool
}

// newRegion maps size bytes (rounded up to pages) plus a guard page.
func newRegion(size int) (*region, error) {
	if size <= 0 {
		return nil, fmt.Errorf("buffer of %d bytes: size must be positive", size)
	}
	span := (size + pageSize - 1) / pageSize * pageSize
	m, err := syscall.Mmap(-1, 0, span+pageSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("cannot map a %d-byte tensor buffer: %v: lower the batch size or free memory", size, err)
	}
	if err := syscall.Mprotect(m[span:], syscall.PROT_NONE); err != nil {
		syscall.Munmap(m)
		return nil, fmt.Errorf("cannot protect a tensor buffer's guard page: %v", err)
	}
	return &region{mapping: m, data: m[:size:size]}, nil
}

// free unpins and unmaps the region; the data slice must not be used afterwards.
func (r *region) free() error {
	if r == nil || r.mapping == nil {
		return nil
	}
	if r.pinned {
		unpin(r.data)
		r.pinned = false
	}
	err := syscall.Munmap(r.mapping)
	r.mapping, r.data = nil, nil
	return err
}

// Buffer is the reusable memory behind one model input or output, sized for the session's
// largest batch. Item shapes and the batch axis come from the model file; Float32, Float16 and
// Float64 view the same bytes as the element type the model uses. A view stays valid until the
// session is closed.
type Buffer struct {
	// Name is the tensor's name in the model file.
	Name string
	// Type is the element type in the model file.
	Type DType
	// Shape is the tensor shape at the session's maximum batch (dynamic axes resolved).
	Shape []int64
	// Batched is true when axis 0 is the model's dynamic batch axis.
	Batched   bool
	mem       *region
	item      int     // elements per batch item (whole tensor when not Batched)
	itemShape []int64 // one item's shape: Shape with a batch axis of 1
}

// Bytes is the raw memory.
func (b *Buffer) Bytes() []byte { return b.mem.data }

// Len is the number of elements at the maximum batch.
func (b *Buffer) Len() int { return len(b.mem.data) / b.Type.Size() }

// ItemLen is the number of elements in one batch item (the whole tensor when not batched).
func (b *Buffer) ItemLen() int { return b.item }

// all is the whole buffer as one view.
func (b *Buffer) all() View {
	return View{Name: b.Name, Type: b.Type, Shape: b.Shape, data: b.mem.data}
}

// Item is batch item i of the buffer (the whole tensor when the buffer is not batched).
func (b *Buffer) Item(i int) View {
	size := b.item * b.Type.Size()
	return View{Name: b.Name, Type: b.Type, Shape: b.itemShape, data: b.mem.data[i*size : (i+1)*size : (i+1)*size]}
}

// Float32 views a float32 tensor; nil for other types.
func (b *Buffer) Float32() []float32 { return b.all().Float32() }

// Float16 views a float16 tensor as IEEE half-precision bit patterns (see F16 and F32From16);
// nil for other types.
func (b *Buffer) Float16() []uint16 { return b.all().Float16() }

// Float64 views a float64 tensor (codeformer's weight); nil for other types.
func (b *Buffer) Float64() []float64 { return b.all().Float64() }

// Pinned reports whether the CUDA driver page-locked this buffer.
func (b *Buffer) Pinned() bool { return b.mem.pinned }

// SetFloat32 writes v into the tensor starting at element off, converting to float16 when the
// tensor is half precision, so adapters fill float32 and float16 models alike.
func (b *Buffer) SetFloat32(off int, v []float32) { b.all().SetFloat32(off, v) }

// GetFloat32 reads len(dst) elements starting at element off into dst, converting from float16
// when the tensor is half precision.
func (b *Buffer) GetFloat32(dst []float32, off int) { b.all().GetFloat32(dst, off) }

// View is a window on a tensor buffer: one batch item's part (Buffer.Item, Lease.Input and
// Lease.Output) or the whole buffer. Writing a worker's input into a view and reading its
// result from one copies nothing beyond the packing itself: the view is the memory the model
// reads and writes.
type View struct {
	// Name is the tensor's name in the model file.
	Name string
	// Type is the element type in the model file.
	Type DType
	// Shape is the viewed shape (an item's has a batch axis of 1); shared, not to be modified.
	Shape []int64
	data  []byte
}

// Bytes is the raw memory.
func (v View) Bytes() []byte { return v.data }

// Len is the number of elements.
func (v View) Len() int { return len(v.data) / v.Type.Size() }

// Float32 views a float32 tensor; nil for other types.
func (v View) Float32() []float32 {
	if v.Type != Float32 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&v.data[0])), v.Len())
}

// Float16 views a float16 tensor as IEEE half-precision bit patterns; nil for other types.
func (v View) Float16() []uint16 {
	if v.Type != Float16 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&v.data[0])), v.Len())
}

// Float64 views a float64 tensor; nil for other types.
func (v View) Float64() []float64 {
	if v.Type != Float64 {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&v.data[0])), v.Len())
}

// SetFloat32 writes x starting at element off, converting to float16 when the tensor is half
// precision.
func (v View) SetFloat32(off int, x []float32) {
	switch v.Type {
	case Float32:
		copy(v.Float32()[off:], x)
	case Float16:
		h := v.Float16()[off:]
		h = h[:len(x)]
		for i, f := range x {
			h[i] = F16(f)
		}
	default:
		panic("infer: SetFloat32 on a " + v.Type.String() + " tensor " + v.Name)
	}
}

// GetFloat32 reads len(dst) elements starting at element off into dst, converting from float16
// when the tensor is half precision.
func (v View) GetFloat32(dst []float32, off int) {
	switch v.Type {
	case Float32:
		copy(dst, v.Float32()[off:])
	case Float16:
		h := v.Float16()[off:]
		h = h[:len(dst)]
		for i, x := range h {
			dst[i] = F32From16(x)
		}
	default:
		panic("infer: GetFloat32 on a " + v.Type.String() + " tensor " + v.Name)
	}
}

// F16 converts a float32 to IEEE 754 half precision, rounding to nearest even (ONNX Runtime's
// Cast does the same), saturating to ±Inf beyond 65504 and keeping NaN.
func F16(f float32) uint16 {
	bits := *(*uint32)(unsafe.Pointer(&f))
	sign := uint16(bits>>16) & 0x8000
	exp := int32(bits>>23) & 0xff
	man := bits & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp-127 > 15:
		return sign | 0x7c00
	case exp-127 >= -14: // normal half
		h := uint32(exp-127+15)<<10 | man>>13
		rest := man & 0x1fff
		if rest > 0x1000 || (rest == 0x1000 && h&1 == 1) {
			h++ // may carry into the exponent, which is still correct (up to Inf)
		}
		return sign | uint16(h)
	case exp-127 >= -25: // subnormal half
		man |= 0x800000
		shift := uint32(-14-(exp-127)) + 13
		h := man >> shift
		rest := man & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rest > half || (rest == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	return sign
}

// F32From16 converts an IEEE 754 half-precision bit pattern to float32 (exactly).
func F32From16(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	var bits uint32
	switch {
	case exp == 0x1f:
		bits = sign | 0x7f800000 | man<<13
	case exp != 0:
		bits = sign | (exp+127-15)<<23 | man<<13
	case man == 0:
		bits = sign
	default: // subnormal: normalise
		e := uint32(127 - 15 + 1)
		for man&0x400 == 0 {
			man <<= 1
			e--
		}
		bits = sign | e<<23 | (man&0x3ff)<<13
	}
	return *(*float32)(unsafe.Pointer(&bits))
}
