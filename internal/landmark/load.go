package landmark

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"sync"

	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/hugepage"
)

// Limits on what a believable shape predictor holds; a junk file fails on these before it can
// make Load allocate gigabytes.
const (
	maxCascades = 100
	maxTrees    = 100000
	maxSplits   = 1<<12 - 1
	maxFeatures = 1 << 16
	maxLeafData = 1 << 28 // float32 values, 1 GiB
)

// errTruncated marks a read that ran off the end of the file.
var errTruncated = errors.New("truncated")

// decoder reads dlib's serialization format from a buffered stream. The 100 MB model is mostly
// floats of 6–8 bytes each, so the fast path works on the buffer directly instead of calling
// through bufio per byte.
type decoder struct {
	r   io.Reader
	buf []byte
	pos int   // next unread byte in buf
	end int   // end of valid data in buf
	off int64 // file offset of buf[0]
	eof bool
	// size is the file's length where the reader knows it, else -1: the arrays a header
	// declares are made only when the bytes left can fill them (room), so a few bytes cannot
	// make Load allocate what the limits above still allow.
	size int64
}

// Each value the arrays hold takes at least this many bytes of the file: a packed integer is a
// control byte and at least one more, a float two of them.
const (
	minIntBytes   = 2
	minFloatBytes = 2 * minIntBytes
)

// room checks that the rest of the file, where its length is known, can hold n values of at
// least per bytes each.
func (d *decoder) room(n, per int) error {
	if d.size >= 0 && int64(n)*int64(per) > d.size-d.offset() {
		return &shortError{values: n, size: d.size}
	}
	return nil
}

// shortError is a file too short for the values its counts declare: truncated, or junk.
type shortError struct {
	values int
	size   int64
}

func (e *shortError) Error() string {
	return fmt.Sprintf("its %d bytes cannot hold the %d values it declares", e.size, e.values)
}

// fill makes at least n bytes available at d.pos unless the file ends first.
func (d *decoder) fill(n int) error {
	if d.end-d.pos >= n {
		return nil
	}
	copy(d.buf, d.buf[d.pos:d.end])
	d.off += int64(d.pos)
	d.end -= d.pos
	d.pos = 0
	for d.end < n && !d.eof {
		k, err := d.r.Read(d.buf[d.end:])
		d.end += k
		if err == io.EOF {
			d.eof = true
		} else if err != nil {
			return err
		}
	}
	if d.end < n {
		return errTruncated
	}
	return nil
}

// offset is the file offset of the next unread byte.
func (d *decoder) offset() int64 { return d.off + int64(d.pos) }

// magnitude reads dlib's packed integer: a control byte (low nibble = byte count, 0x80 = sign),
// then the magnitude in little-endian order.
func (d *decoder) magnitude() (mag uint64, neg bool, err error) {
	if err := d.fill(1); err != nil {
		return 0, false, err
	}
	ctl := d.buf[d.pos]
	n := int(ctl & 0x0f)
	if ctl&0x70 != 0 || n == 0 || n > 8 {
		return 0, false, fmt.Errorf("bad integer control byte 0x%02x at offset %d", ctl, d.offset())
	}
	if err := d.fill(1 + n); err != nil {
		return 0, false, err
	}
	b := d.buf[d.pos+1 : d.pos+1+n]
	for i := n - 1; i >= 0; i-- {
		mag = mag<<8 | uint64(b[i])
	}
	d.pos += 1 + n
	return mag, ctl&0x80 != 0, nil
}

// int reads a signed integer.
func (d *decoder) int() (int64, error) {
	at := d.offset()
	mag, neg, err := d.magnitude()
	if err != nil {
		return 0, err
	}
	if mag > math.MaxInt64 {
		return 0, fmt.Errorf("integer out of range at offset %d", at)
	}
	if neg {
		return -int64(mag), nil
	}
	return int64(mag), nil
}

// uint reads an unsigned integer no larger than limit (vector lengths, indices).
func (d *decoder) uint(limit uint64, what string) (int, error) {
	at := d.offset()
	mag, neg, err := d.magnitude()
	if err != nil {
		return 0, err
	}
	if neg || mag > limit {
		return 0, fmt.Errorf("%s out of range at offset %d", what, at)
	}
	return int(mag), nil
}

// float32 reads dlib's float_details: a signed 64-bit mantissa and a signed 16-bit exponent,
// value = ldexp(float(mantissa), exponent).
func (d *decoder) float32() (float32, error) {
	at := d.offset()
	mant, err := d.int()
	if err != nil {
		return 0, err
	}
	exp, err := d.int()
	if err != nil {
		return 0, err
	}
	// dlib reserves exponents 32000–32002 for ±inf and NaN; a model has none of them.
	if exp < math.MinInt16 || exp >= 32000 {
		return 0, fmt.Errorf("non-finite or malformed float at offset %d", at)
	}
	// dlib converts the mantissa to float first, then scales: round once, then exactly.
	return float32(math.Ldexp(float64(float32(mant)), int(exp))), nil
}

// floatBytes is the most bytes one float takes: two packed integers of 1+8 bytes each.
const floatBytes = 18

// floats reads len(dst) floats, as float32 reads each. They are the bulk of the model (every
// leaf's 136 deltas), so where the buffer surely holds them all they are decoded in one tight
// loop; anything unusual (a malformed value, the end of the file near) goes back to float32,
// which reads it, or says what is wrong and where, the same way.
func (d *decoder) floats(dst []float32) error {
	if err := d.fill(len(dst) * floatBytes); err != nil && !errors.Is(err, errTruncated) {
		return err
	}
	i := 0
	if d.end-d.pos >= len(dst)*floatBytes {
		b := d.buf[d.pos:d.end]
		j := 0
		for ; i < len(dst); i++ {
			mant, n, ok := packed(b[j:])
			if !ok {
				break
			}
			exp, m, ok := packed(b[j+n:])
			if !ok || exp < math.MinInt16 || exp >= 32000 {
				break
			}
			x := float64(float32(mant))
			if -900 <= exp && exp <= 900 {
				// 2^exp exactly, and |x| < 2^64: the product is math.Ldexp's, with no
				// underflow or overflow to round differently.
				x *= math.Float64frombits(uint64(exp+1023) << 52)
			} else {
				x = math.Ldexp(x, int(exp))
			}
			dst[i] = float32(x)
			j += n + m
		}
		d.pos += j
	}
	for ; i < len(dst); i++ {
		v, err := d.float32()
		if err != nil {
			return err
		}
		dst[i] = v
	}
	return nil
}

// packed decodes one of dlib's packed integers at the start of b (see magnitude), which holds at
// least 9 bytes; ok is false for anything magnitude would refuse.
func packed(b []byte) (v int64, n int, ok bool) {
	ctl := b[0]
	k := int(ctl & 0x0f)
	if ctl&0x70 != 0 || k == 0 || k > 8 {
		return 0, 0, false
	}
	var mag uint64
	for i := k; i >= 1; i-- {
		mag = mag<<8 | uint64(b[i])
	}
	if mag > math.MaxInt64 {
		return 0, 0, false
	}
	if ctl&0x80 != 0 {
		return -int64(mag), k + 1, true
	}
	return int64(mag), k + 1, true
}

// Load reads a dlib shape predictor file such as shape_predictor_68_face_landmarks.dat.
func Load(path string) (*Predictor, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("landmark model %s does not exist: fetch shape_predictor_68_face_landmarks.dat (Debian libdlib-data) and give its path", path)
	} else if err != nil {
		return nil, fmt.Errorf("landmark model %s: cannot open: %w", path, err)
	}
	defer f.Close()
	return Read(path, f)
}

// readerSize is the length of what r reads, where r can say (an *os.File of a regular file, a
// bytes.Reader), else -1.
func readerSize(r io.Reader) int64 {
	switch r := r.(type) {
	case interface{ Size() int64 }:
		return r.Size()
	case interface{ Stat() (fs.FileInfo, error) }:
		if st, err := r.Stat(); err == nil && st.Mode().IsRegular() {
			return st.Size()
		}
	}
	return -1
}

// Read decodes a dlib shape predictor from r (the bytes of the file at path, which errors name).
func Read(path string, r io.Reader) (*Predictor, error) {
	d := &decoder{r: r, size: readerSize(r)}
	// A 1 MiB buffer, less for a small file; fill asks for 2.5 KiB at most (a leaf's floats).
	n := 1 << 20
	if d.size >= 0 {
		n = int(min(int64(n), d.size+4096))
	}
	d.buf = make([]byte, n)
	p, err := decode(d)
	var short *shortError
	switch {
	case errors.As(err, &short):
		return nil, fmt.Errorf("landmark model %s: %v: it is truncated; download it again", path, err)
	case errors.Is(err, errTruncated):
		return nil, fmt.Errorf("landmark model %s: file ends early at byte %d: it is truncated; download it again", path, d.offset())
	case err != nil:
		return nil, fmt.Errorf("landmark model %s: not a dlib 68-point shape predictor file: %v", path, err)
	}
	if err := d.fill(1); err == nil {
		return nil, fmt.Errorf("landmark model %s: not a dlib 68-point shape predictor file: unexpected data after the model at offset %d", path, d.offset())
	}
	return p, nil
}

// decode parses the layout of dlib's serialize(shape_predictor): version, initial_shape,
// forests, anchor_idx, deltas.
func decode(d *decoder) (*Predictor, error) {
	version, err := d.int()
	if err != nil {
		return nil, err
	}
	if version != 1 {
		return nil, fmt.Errorf("version %d, want 1", version)
	}
	p := &Predictor{}
	if err := p.decodeInitial(d); err != nil {
		return nil, err
	}
	if err := p.decodeForests(d); err != nil {
		return nil, err
	}
	if err := p.decodeAnchors(d); err != nil {
		return nil, err
	}
	if err := p.decodeDeltas(d); err != nil {
		return nil, err
	}
	// Split indices were read before the feature count was known.
	for i, s := range p.splits {
		if int(s.a) >= p.features || int(s.b) >= p.features {
			return nil, fmt.Errorf("tree node %d reads feature pixel %d or %d of %d", i, s.a, s.b, p.features)
		}
	}
	p.pool = &sync.Pool{New: func() any { return p.newWorkspace() }}
	return p, nil
}

// decodeInitial reads initial_shape, the mean shape the cascades start from: 68 points as a
// 136×1 matrix.
func (p *Predictor) decodeInitial(d *decoder) error {
	nr, err := d.int()
	if err != nil {
		return err
	}
	nc, err := d.int()
	if err != nil {
		return err
	}
	if nr < 0 && nc < 0 { // dlib's newer matrix format stores negated sizes
		nr, nc = -nr, -nc
	}
	if nr != 2*numParts || nc != 1 {
		return fmt.Errorf("initial shape is %d×%d, want %d×1 (a 68-point model)", nr, nc, 2*numParts)
	}
	for i := range p.initial {
		if p.initial[i], err = d.float32(); err != nil {
			return err
		}
	}
	for i := range p.initialPts {
		p.initialPts[i] = geom.Pt{X: float64(p.initial[2*i]), Y: float64(p.initial[2*i+1])}
	}
	return nil
}

// decodeForests reads the cascades' regression trees, the same number in each.
func (p *Predictor) decodeForests(d *decoder) error {
	var err error
	if p.cascades, err = d.uint(maxCascades, "cascade count"); err != nil {
		return err
	}
	if p.cascades == 0 {
		return errors.New("no cascades")
	}
	p.nsplits = -1
	for c := 0; c < p.cascades; c++ {
		trees, err := d.uint(maxTrees, "tree count")
		if err != nil {
			return err
		}
		if c == 0 {
			p.trees = trees
		} else if trees != p.trees {
			return fmt.Errorf("cascade %d has %d trees, cascade 0 has %d; uneven cascades are not supported", c, trees, p.trees)
		}
		for t := 0; t < trees; t++ {
			if err := p.decodeTree(d, c, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// decodeAnchors reads anchor_idx: per cascade, the landmark each feature pixel is placed by.
func (p *Predictor) decodeAnchors(d *decoder) error {
	if n, err := d.uint(maxCascades, "anchor list count"); err != nil {
		return err
	} else if n != p.cascades {
		return fmt.Errorf("%d anchor lists for %d cascades", n, p.cascades)
	}
	for c := 0; c < p.cascades; c++ {
		n, err := d.uint(maxFeatures, "feature count")
		if err != nil {
			return err
		}
		if c == 0 {
			if err := d.room(p.cascades*n, minIntBytes); err != nil {
				return err
			}
			p.features = n
			p.anchor = make([]int32, 0, p.cascades*n)
		} else if n != p.features {
			return fmt.Errorf("cascade %d has %d feature pixels, cascade 0 has %d", c, n, p.features)
		}
		for i := 0; i < n; i++ {
			a, err := d.uint(numParts-1, "anchor index")
			if err != nil {
				return err
			}
			p.anchor = append(p.anchor, int32(a))
		}
	}
	return nil
}

// decodeDeltas reads deltas: per cascade, each feature pixel's offset from its anchor.
func (p *Predictor) decodeDeltas(d *decoder) error {
	if n, err := d.uint(maxCascades, "delta list count"); err != nil {
		return err
	} else if n != p.cascades {
		return fmt.Errorf("%d delta lists for %d cascades", n, p.cascades)
	}
	if err := d.room(2*p.cascades*p.features, minFloatBytes); err != nil {
		return err
	}
	p.deltas = make([]float32, 2*p.cascades*p.features)
	for c := 0; c < p.cascades; c++ {
		n, err := d.uint(maxFeatures, "delta count")
		if err != nil {
			return err
		}
		if n != p.features {
			return fmt.Errorf("cascade %d has %d deltas for %d feature pixels", c, n, p.features)
		}
		for i := 2 * c * n; i < 2*(c+1)*n; i++ {
			if p.deltas[i], err = d.float32(); err != nil {
				return err
			}
		}
	}
	return nil
}

// decodeTree reads one regression_tree: its splits, then its leaf vectors.
func (p *Predictor) decodeTree(d *decoder, c, t int) error {
	ns, err := d.uint(maxSplits, "split count")
	if err != nil {
		return err
	}
	if p.nsplits < 0 {
		// The first tree fixes the shape of every tree, so the flat arrays can be sized once.
		if ns&(ns+1) != 0 {
			return fmt.Errorf("tree has %d splits; a full binary tree has 2^depth − 1", ns)
		}
		p.nsplits = ns
		total := p.cascades * p.trees * (ns + 1) * 2 * numParts
		if total > maxLeafData {
			return fmt.Errorf("%d cascades × %d trees × %d leaves is too large", p.cascades, p.trees, ns+1)
		}
		if err := d.room(total, minFloatBytes); err != nil {
			return err
		}
		p.splits = make([]split, 0, p.cascades*p.trees*ns)
		p.leaves = make([]float32, 0, total)
		hugepage.Advise(p.leaves) // 65 MB written once: 2 MiB pages fault 0.25 s less than 4 KiB ones
	} else if ns != p.nsplits {
		return fmt.Errorf("cascade %d tree %d has %d splits, the first tree has %d; uneven trees are not supported", c, t, ns, p.nsplits)
	}
	for i := 0; i < ns; i++ {
		a, err := d.uint(maxFeatures-1, "split feature index")
		if err != nil {
			return err
		}
		b, err := d.uint(maxFeatures-1, "split feature index")
		if err != nil {
			return err
		}
		th, err := d.float32()
		if err != nil {
			return err
		}
		p.splits = append(p.splits, split{a: int32(a), b: int32(b), thresh: th, cut: splitCut(th)})
	}
	nl, err := d.uint(maxSplits+1, "leaf count")
	if err != nil {
		return err
	}
	if nl != ns+1 {
		return fmt.Errorf("cascade %d tree %d has %d leaves for %d splits", c, t, nl, ns)
	}
	for l := 0; l < nl; l++ {
		nr, err := d.int()
		if err != nil {
			return err
		}
		nc, err := d.int()
		if err != nil {
			return err
		}
		if nr < 0 && nc < 0 {
			nr, nc = -nr, -nc
		}
		if nr != 2*numParts || nc != 1 {
			return fmt.Errorf("cascade %d tree %d leaf %d is %d×%d, want %d×1", c, t, l, nr, nc, 2*numParts)
		}
		n := len(p.leaves)
		p.leaves = p.leaves[:n+2*numParts]
		if err := d.floats(p.leaves[n:]); err != nil {
			return err
		}
	}
	return nil
}
