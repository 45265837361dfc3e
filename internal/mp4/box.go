// Package mp4 reads and writes the parts of ISO base media files (MP4, QuickTime MOV) that a
// join needs: the box tree, a track's sample table, and the boxes of a new index (moov).
//
// It parses bytes and builds bytes; reading and writing files is the caller's (ISO/IEC 14496-12
// is the reference for every box named here).
package mp4

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Box is one box: its type, the bytes of its body (after the header), and its children when it
// is a container this package descends into.
type Box struct {
	Type     string
	Body     []byte
	Children []*Box
	// Offset is where the box's header starts in the parsed bytes; HeaderLen its header size.
	Offset    int64
	HeaderLen int
	// Size is the whole box's size, header included.
	Size int64
}

// containers are the boxes whose body is a sequence of boxes, and which Parse descends into.
var containers = map[string]bool{
	"moov": true, "trak": true, "mdia": true, "minf": true, "stbl": true, "edts": true, "dinf": true,
}

// Parse reads the boxes of b (a moov's body, or a whole file's top level), base being where b
// starts in the file (for Offset). A box whose size runs past b is an error.
func Parse(b []byte, base int64) ([]*Box, error) {
	var out []*Box
	for off := 0; off < len(b); {
		if len(b)-off < 8 {
			return nil, fmt.Errorf("mp4: %d stray bytes at offset %d", len(b)-off, base+int64(off))
		}
		size := uint64(binary.BigEndian.Uint32(b[off:]))
		typ := string(b[off+4 : off+8])
		hdr := 8
		switch size {
		case 0:
			size = uint64(len(b) - off)
		case 1:
			if len(b)-off < 16 {
				return nil, fmt.Errorf("mp4: box %q at offset %d is cut off", typ, base+int64(off))
			}
			size = binary.BigEndian.Uint64(b[off+8:])
			hdr = 16
		}
		if size < uint64(hdr) || size > uint64(len(b)-off) {
			return nil, fmt.Errorf("mp4: box %q at offset %d claims %d bytes, %d are there", typ, base+int64(off), size, len(b)-off)
		}
		box := &Box{Type: typ, Body: b[off+hdr : off+int(size)], Offset: base + int64(off), HeaderLen: hdr, Size: int64(size)}
		if containers[typ] {
			kids, err := Parse(box.Body, box.Offset+int64(hdr))
			if err != nil {
				return nil, err
			}
			box.Children = kids
		}
		out = append(out, box)
		off += int(size)
	}
	return out, nil
}

// Child is the first child of b of type typ, or nil.
func (b *Box) Child(typ string) *Box {
	for _, c := range b.Children {
		if c.Type == typ {
			return c
		}
	}
	return nil
}

// Path follows child types from b: Path("mdia", "minf", "stbl").
func (b *Box) Path(types ...string) *Box {
	for _, t := range types {
		if b == nil {
			return nil
		}
		b = b.Child(t)
	}
	return b
}

// Find is the first box of type typ in boxes, or nil.
func Find(boxes []*Box, typ string) *Box {
	for _, b := range boxes {
		if b.Type == typ {
			return b
		}
	}
	return nil
}

// Encode is b as bytes: its children encoded again when it has them (so that an edited child
// shows), else its body.
func (b *Box) Encode() []byte {
	if len(b.Children) == 0 {
		return Make(b.Type, b.Body)
	}
	var body []byte
	for _, c := range b.Children {
		body = append(body, c.Encode()...)
	}
	return Make(b.Type, body)
}

// Make is a box of type typ holding body, with a 64-bit size only when it needs one.
func Make(typ string, body []byte) []byte {
	if len(typ) != 4 {
		panic("mp4: box type " + typ + " is not four bytes")
	}
	n := uint64(len(body)) + 8
	out := make([]byte, 0, 16+len(body))
	if n > 1<<32-1 {
		out = binary.BigEndian.AppendUint32(out, 1)
		out = append(out, typ...)
		out = binary.BigEndian.AppendUint64(out, n+8)
	} else {
		out = binary.BigEndian.AppendUint32(out, uint32(n))
		out = append(out, typ...)
	}
	return append(out, body...)
}

// MdatHeader is the header of an mdat of size bytes of samples: always the 64-bit form, so the
// index before it can be sized before the samples are counted.
func MdatHeader(size int64) []byte {
	out := binary.BigEndian.AppendUint32(nil, 1)
	out = append(out, "mdat"...)
	return binary.BigEndian.AppendUint64(out, uint64(size)+16)
}

// reader walks a full box's body with bounds checks; the first short read sticks as err.
type reader struct {
	b   []byte
	off int
	typ string
	err error
}

func (r *reader) need(n int) bool {
	if r.err == nil && len(r.b)-r.off < n {
		r.err = fmt.Errorf("mp4: %s box is cut off at byte %d", r.typ, r.off)
	}
	return r.err == nil
}

func (r *reader) u32() uint32 {
	if !r.need(4) {
		return 0
	}
	r.off += 4
	return binary.BigEndian.Uint32(r.b[r.off-4:])
}

func (r *reader) u64() uint64 {
	if !r.need(8) {
		return 0
	}
	r.off += 8
	return binary.BigEndian.Uint64(r.b[r.off-8:])
}

func (r *reader) skip(n int) {
	if r.need(n) {
		r.off += n
	}
}

// versioned reads a full box's version and flags.
func (r *reader) versioned() (version uint8, flags uint32) {
	v := r.u32()
	return uint8(v >> 24), v & 0xffffff
}

// count reads an entry count and checks that n entries of size each fit.
func (r *reader) count(size int) int {
	n := r.u32()
	if r.err == nil && uint64(n)*uint64(size) > uint64(len(r.b)-r.off) {
		r.err = fmt.Errorf("mp4: %s box claims %d entries, its body holds fewer", r.typ, n)
		return 0
	}
	return int(n)
}

// maxIndex is the largest moov ReadIndex reads into memory.
const maxIndex = 1 << 30

// ReadIndex reads the top-level boxes of the size bytes of r: the moov whole (parsed), every
// other box by its header alone (Body nil), so that a file's samples are never read.
func ReadIndex(r io.ReaderAt, size int64) (*File, error) {
	var boxes []*Box
	var hdr [16]byte
	for off := int64(0); off < size; {
		if size-off < 8 {
			return nil, fmt.Errorf("mp4: %d stray bytes at offset %d", size-off, off)
		}
		if _, err := r.ReadAt(hdr[:8], off); err != nil {
			return nil, fmt.Errorf("mp4: reading the box at offset %d: %w", off, err)
		}
		n := int64(binary.BigEndian.Uint32(hdr[:]))
		typ := string(hdr[4:8])
		h := 8
		switch n {
		case 0:
			n = size - off
		case 1:
			if _, err := r.ReadAt(hdr[8:16], off+8); err != nil {
				return nil, fmt.Errorf("mp4: reading the box at offset %d: %w", off, err)
			}
			n = int64(binary.BigEndian.Uint64(hdr[8:]))
			h = 16
		}
		if n < int64(h) || n > size-off {
			return nil, fmt.Errorf("mp4: box %q at offset %d claims %d bytes, %d are there", typ, off, n, size-off)
		}
		b := &Box{Type: typ, Offset: off, HeaderLen: h, Size: n}
		if typ == "moov" || typ == "ftyp" {
			if n > maxIndex {
				return nil, fmt.Errorf("mp4: the %s box at offset %d is %d bytes, over the %d read", typ, off, n, maxIndex)
			}
			b.Body = make([]byte, n-int64(h))
			if _, err := r.ReadAt(b.Body, off+int64(h)); err != nil {
				return nil, fmt.Errorf("mp4: reading the %s box at offset %d: %w", typ, off, err)
			}
			if typ == "moov" {
				kids, err := Parse(b.Body, off+int64(h))
				if err != nil {
					return nil, err
				}
				b.Children = kids
			}
		}
		boxes = append(boxes, b)
		off += n
	}
	return read(boxes, size)
}
