package audio

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/cmplx"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"unsafe"
)

// A whole track's transform (scipy.signal.resample's) held in memory takes 16 bytes a sample
// several times over: 50 GB for a two-hour track whose length has a large prime factor. The
// transform here is the same Bluestein chirp transform, exact, its cyclic convolution of
// length M = m1·m2 done as a four-step transform whose M values lie in a scratch file, memory
// holding blocks of diskBlock values: what it takes in memory is bounded whatever the length,
// a prime one included; what it takes on disk is 32 bytes for each of M values (the kernel's
// transform and the data), M ≈ n + count.

// diskBlock is how many values a block buffer holds (64 MB); a pass holds two or three.
var diskBlock = 1 << 22

// diskDFT is the transform of length n, its first count bins, with its kernel's transform
// made once (on disk) for every signal it is given.
type diskDFT struct {
	n, count int
	m1, m2   int // M = m1·m2; m2 a power of two, m1 5-smooth
	p1, p2   *fftPlan
	tw       twiddles
	dir      string // made by newDiskDFT: removed, with its two files, by close
	kern     *os.File
	data     *os.File
	buf      *diskBuffers
	ctx      context.Context // a stop: every block read or written checks it
}

// diskBuffers are the block buffers of the transforms of one track, made once: two blocks and
// a row's or column's work buffer for each goroutine. A buffer made for each pass left the
// collector hundreds of MB at a time.
type diskBuffers struct {
	a, b []complex128
	work [][]complex128
}

// take is b's two blocks, each at least size values, and workers work buffers of at least
// side values.
func (b *diskBuffers) take(size, side, workers int) (x, y []complex128, work [][]complex128) {
	if cap(b.a) < size {
		b.a, b.b = nil, nil // let the smaller ones go first
		b.a, b.b = make([]complex128, size), make([]complex128, size)
	}
	if len(b.work) < workers || cap(b.work[0]) < side {
		b.work = nil
		for range workers {
			b.work = append(b.work, make([]complex128, side))
		}
	}
	return b.a[:size], b.b[:size], b.work
}

// newDiskDFT makes a folder of its own under parent (os.TempDir() when "") and the kernel's
// transform in it; its blocks are bufs'.
func newDiskDFT(ctx context.Context, parent string, n, count int, bufs *diskBuffers) (*diskDFT, error) {
	m1, m2 := diskLengths(n + count - 1)
	d := &diskDFT{n: n, count: count, m1: m1, m2: m2, p1: newPlan(m1), p2: newPlan(m2), tw: newTwiddles(m1 * m2), buf: bufs, ctx: ctx}
	if parent == "" {
		parent = os.TempDir()
	}
	dir, err := os.MkdirTemp(parent, "facefusion-resample-")
	if err != nil {
		return nil, fmt.Errorf("a scratch folder for the track's transform: %w", err)
	}
	d.dir = dir
	create := func(name string) (*os.File, error) {
		return os.OpenFile(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	}
	if d.kern, err = create("kernel"); err == nil {
		d.data, err = create("data")
	}
	if err != nil {
		d.close()
		return nil, fmt.Errorf("the track's transform: %w", err)
	}
	// b: the conjugate chirp at 0..count−1 and, wrapped, at −(n−1)..−1; zeros between.
	kernel := func(i int) complex128 {
		switch {
		case i < count:
			return cmplx.Conj(chirp(i, n))
		case i > m1*m2-n:
			return cmplx.Conj(chirp(m1*m2-i, n))
		}
		return 0
	}
	if err := d.columns(kernel, d.kern); err != nil {
		d.close()
		return nil, err
	}
	if err := d.rows(d.kern, nil); err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

// close removes the two files and the folder newDiskDFT made, nothing else. One already gone
// (a cleaner of temp folders) is no error: the open files served to the end all the same.
func (d *diskDFT) close() error {
	var first error
	remove := func(name string) {
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = err
		}
	}
	for _, f := range []*os.File{d.kern, d.data} {
		if f != nil {
			f.Close()
			remove(f.Name())
		}
	}
	d.kern, d.data = nil, nil
	if d.dir != "" {
		remove(d.dir)
		d.dir = ""
	}
	return first
}

// transform hands put(k, X[k]) for k < count, X[k] = Σ get(j)·exp(−2πijk/n) over j < n: get
// is asked for each j once, in no particular order; put is called for each k once, from one
// goroutine.
func (d *diskDFT) transform(get func(int) complex128, put func(int, complex128)) error {
	a := func(j int) complex128 {
		if j >= d.n {
			return 0
		}
		return get(j) * chirp(j, d.n)
	}
	if err := d.columns(a, d.data); err != nil {
		return err
	}
	if err := d.rows(d.data, d.kern); err != nil {
		return err
	}
	return d.gather(put)
}

// diskLengths is m1·m2 ≥ min: m2 the largest power of two at most √min, m1 the smallest
// 5-smooth length that makes up the rest (the transforms of both are mixed radix).
func diskLengths(min int) (m1, m2 int) {
	m2 = 1
	for 4*m2*m2 <= min {
		m2 *= 2
	}
	m1 = (min + m2 - 1) / m2
	for !smooth(m1) {
		m1++
	}
	return m1, m2
}

// twiddles are exp(−2πie/M) for e < M, each a product of two table entries (√M of each): an
// ulp or two from its own angle's, with no table of M.
type twiddles struct {
	m, fine int
	lo, hi  []complex128
}

func newTwiddles(m int) twiddles {
	f := 1
	for f*f < m {
		f++
	}
	t := twiddles{m: m, fine: f, lo: make([]complex128, f), hi: make([]complex128, m/f+1)}
	for e := range t.lo {
		t.lo[e] = root(e, m)
	}
	for e := range t.hi {
		t.hi[e] = root(e*f, m)
	}
	return t
}

func (t *twiddles) at(e int) complex128 { return t.hi[e/t.fine] * t.lo[e%t.fine] }

// blocks are d's two block buffers of size values each and its goroutines' work buffers.
func (d *diskDFT) blocks(size int) (x, y []complex128, work [][]complex128) {
	return d.buf.take(size, max(d.m1, d.m2), runtime.GOMAXPROCS(0))
}

// parallel runs f over [0, n) in up to len(work) pieces, each with a work buffer of its own.
func parallel(n int, work [][]complex128, f func(lo, hi int, y []complex128)) {
	w := min(n, len(work))
	var wg sync.WaitGroup
	for i := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i*n/w, (i+1)*n/w, work[i])
		}()
	}
	wg.Wait()
}

// columns is the first step for the signal s (index j = j1 + m1·j2): for each column j1 the
// transform over j2, times exp(−2πi·j1·k2/M), written to f as rows k2 of m1 values.
func (d *diskDFT) columns(s func(int) complex128, f *os.File) error {
	m1, m2 := d.m1, d.m2
	c := max(1, diskBlock/m2)
	buf, tr, work := d.blocks(c * m2)
	for c0 := 0; c0 < m1; c0 += c {
		cc := min(c, m1-c0)
		parallel(cc, work, func(lo, hi int, y []complex128) {
			for k := lo; k < hi; k++ {
				col := buf[k*m2 : (k+1)*m2]
				for j2 := range col {
					col[j2] = s(c0 + k + m1*j2)
				}
				d.p2.forwardWith(col, y)
				j1 := c0 + k
				for k2 := range col {
					col[k2] *= d.tw.at(j1 * k2)
				}
			}
		})
		for k2 := 0; k2 < m2; k2++ {
			row := tr[k2*cc : (k2+1)*cc]
			for k := range row {
				row[k] = buf[k*m2+k2]
			}
		}
		for k2 := 0; k2 < m2; k2++ {
			if err := d.writeAt(f, tr[k2*cc:(k2+1)*cc], k2*m1+c0); err != nil {
				return err
			}
		}
	}
	return nil
}

// rows is the second step, in place in f, block by block of rows k2: each row's transform
// over j1 (bins k1: the value of bin k2 + m2·k1). Without kern, that is all (the kernel's
// transform). With it, the bins are multiplied by the kernel's and the inverse's first step
// follows: the inverse transform over k1, times exp(+2πi·k2·n1/M), kept conjugated (the
// inverse is conj(transform(conj(·)))).
func (d *diskDFT) rows(f, kern *os.File) error {
	m1, m2 := d.m1, d.m2
	r := max(1, diskBlock/m1)
	buf, kb, work := d.blocks(r * m1)
	for r0 := 0; r0 < m2; r0 += r {
		rr := min(r, m2-r0)
		if err := d.readAt(f, buf[:rr*m1], r0*m1); err != nil {
			return err
		}
		if kern != nil {
			if err := d.readAt(kern, kb[:rr*m1], r0*m1); err != nil {
				return err
			}
		}
		parallel(rr, work, func(lo, hi int, y []complex128) {
			for i := lo; i < hi; i++ {
				row := buf[i*m1 : (i+1)*m1]
				d.p1.forwardWith(row, y)
				if kern == nil {
					continue
				}
				for k1, v := range kb[i*m1 : (i+1)*m1] {
					row[k1] = cmplx.Conj(row[k1] * v)
				}
				d.p1.forwardWith(row, y)
				k2 := r0 + i
				for n1 := range row {
					row[n1] *= d.tw.at(k2 * n1)
				}
			}
		})
		if err := d.writeAt(f, buf[:rr*m1], r0*m1); err != nil {
			return err
		}
	}
	return nil
}

// gather is the inverse's last step, block by block of columns n1: each column's transform
// over k2, conjugated back, is the convolution at n1 + m1·n2; divided by M and times the
// chirp, it is bin n1 + m1·n2 of the answer, handed to put when below count.
func (d *diskDFT) gather(put func(int, complex128)) error {
	m1, m2 := d.m1, d.m2
	c := max(1, diskBlock/m2)
	buf, tr, work := d.blocks(c * m2)
	scale := complex(1/float64(m1*m2), 0)
	for c0 := 0; c0 < m1; c0 += c {
		cc := min(c, m1-c0)
		for k2 := 0; k2 < m2; k2++ {
			if err := d.readAt(d.data, tr[k2*cc:(k2+1)*cc], k2*m1+c0); err != nil {
				return err
			}
		}
		parallel(cc, work, func(lo, hi int, y []complex128) {
			for k := lo; k < hi; k++ {
				col := buf[k*m2 : (k+1)*m2]
				for k2 := range col {
					col[k2] = tr[k2*cc+k]
				}
				d.p2.forwardWith(col, y)
				n1 := c0 + k
				for n2 := 0; n1+m1*n2 < d.count; n2++ {
					i := n1 + m1*n2
					col[n2] = cmplx.Conj(col[n2]) * scale * chirp(i, d.n)
				}
			}
		})
		for k := range cc {
			col, n1 := buf[k*m2:(k+1)*m2], c0+k
			for n2 := 0; n1+m1*n2 < d.count; n2++ {
				put(n1+m1*n2, col[n2])
			}
		}
	}
	return nil
}

// writeAt and readAt move values at index at (16 bytes each) of f, as this machine holds
// them: the file is this process's own and read back by it alone. Every block passes
// through them, so a stop (ctx) ends a long transform within a block.
func (d *diskDFT) writeAt(f *os.File, v []complex128, at int) error {
	if err := d.ctx.Err(); err != nil {
		return err
	}
	if _, err := f.WriteAt(bytesOf(v), int64(at)*16); err != nil {
		return fmt.Errorf("the track's transform, writing its scratch (%.1f GB in %s): %w", d.scratchGB(), d.dir, err)
	}
	return nil
}

func (d *diskDFT) readAt(f *os.File, v []complex128, at int) error {
	if err := d.ctx.Err(); err != nil {
		return err
	}
	if _, err := f.ReadAt(bytesOf(v), int64(at)*16); err != nil {
		return fmt.Errorf("the track's transform, reading its scratch in %s: %w", d.dir, err)
	}
	return nil
}

// scratchGB is what the two files take at their largest.
func (d *diskDFT) scratchGB() float64 { return float64(2*16*d.m1*d.m2) / 1e9 }

func bytesOf(v []complex128) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 16*len(v))
}
