package video

import (
	"encoding/binary"
	"fmt"
	"io"
)

// nutWriter wraps packed rgb24 frames in a NUT stream (FFmpeg's doc/nut.texi) so that ffmpeg
// reads every frame with its own timestamp: rawvideo on a pipe carries none, and a rate given
// with -framerate can only space frames evenly. It writes the least NUT that ffmpeg's demuxer
// reads: one rawvideo stream in one time base, one frame code, and a syncpoint before every
// frame (a frame of megabytes is always further than max_distance from the last one).
type nutWriter struct {
	w      io.Writer
	pos    int64  // bytes written so far
	lastSP int64  // where the last syncpoint started (0 before the first)
	hdr    []byte // reused: no allocation per frame
	body   []byte
	pkt    []byte
	err    error
}

// The NUT startcodes: 'N', a letter, then six fixed bytes (nut.texi, "startcodes").
const (
	nutMainStartcode      = 0x4E4D7A561F5F04AD
	nutStreamStartcode    = 0x4E5311405BF2F9DB
	nutSyncpointStartcode = 0x4E4BE4ADEECA4569
)

// Frame flags (nut.texi, "frame_flags").
const (
	nutFlagKey      = 1
	nutFlagCodedPTS = 8
	nutFlagSizeMSB  = 32
	nutFlagChecksum = 64
	nutFlagInvalid  = 8192
)

// nutPTSShift is the stream's msb_pts_shift: a coded pts at or above 1<<shift is a whole
// timestamp, which is how every frame here gives its own.
const nutPTSShift = 7

// newNUTWriter writes the file header for width×height rgb24 frames in time base tb.
func newNUTWriter(w io.Writer, width, height int, tb Rational) (*nutWriter, error) {
	if !tb.Valid() || gcd(tb.Num, tb.Den) != 1 {
		return nil, fmt.Errorf("video: NUT time base %s is not a reduced fraction", tb)
	}
	n := &nutWriter{w: w}
	n.write([]byte("nut/multimedia container\x00"))

	var main []byte
	main = putV(main, 3)              // version
	main = putV(main, 1)              // stream_count
	main = putV(main, 65536)          // max_distance
	main = putV(main, 1)              // time_base_count
	main = putV(main, uint64(tb.Num)) // time_base_num
	main = putV(main, uint64(tb.Den)) // time_base_denom
	// The frame code table: code 0 is the only valid one (a keyframe of stream 0 with its pts,
	// its size and a header checksum coded); the other 254 ('N' is never a frame code) are
	// invalid. Each entry: flags, field count, pts delta, size_mul, stream, size_lsb,
	// reserved_count, count.
	code := func(b []byte, flags, count uint64) []byte {
		b = putV(b, flags)
		b = putV(b, 6)        // fields that follow
		b = putS(b, 0)        // pts delta
		b = putV(b, 1)        // size_mul
		b = putV(b, 0)        // stream
		b = putV(b, 0)        // size_lsb
		b = putV(b, 0)        // reserved_count
		return putV(b, count) // count
	}
	main = code(main, nutFlagKey|nutFlagCodedPTS|nutFlagSizeMSB|nutFlagChecksum, 1)
	main = code(main, nutFlagInvalid, 254)
	main = putV(main, 0) // header_count − 1: no elision headers
	n.packet(nutMainStartcode, main)

	var st []byte
	st = putV(st, 0) // stream_id
	st = putV(st, 0) // stream_class: video
	st = putV(st, 4) // fourcc length, then the fourcc of packed rgb24
	st = append(st, 'R', 'G', 'B', 24)
	st = putV(st, 0)           // time_base_id
	st = putV(st, nutPTSShift) // msb_pts_shift
	st = putV(st, 1<<16)       // max_pts_distance (every frame header has a checksum anyway)
	st = putV(st, 0)           // decode_delay
	st = putV(st, 0)           // stream_flags
	st = putV(st, 0)           // codec_specific_data: none
	st = putV(st, uint64(width))
	st = putV(st, uint64(height))
	st = putV(st, 0) // sample aspect ratio: unknown (0/0)
	st = putV(st, 0)
	st = putV(st, 0) // colorspace_type
	n.packet(nutStreamStartcode, st)
	return n, n.err
}

// WriteFrame writes one frame at presentation time pts (in the time base, at least 0).
func (n *nutWriter) WriteFrame(pts int64, frame []byte) error {
	if pts < 0 {
		return fmt.Errorf("video: NUT timestamp %d is negative", pts)
	}
	sp := n.body[:0]
	start := n.pos
	sp = putV(sp, uint64(pts)) // global_key_pts (one time base: index 0)
	back := uint64(0)          // the first syncpoint has none before it (as ffmpeg's muxer writes)
	if n.lastSP > 0 {
		back = uint64(start-n.lastSP) / 16
	}
	sp = putV(sp, back) // back_ptr_div16
	n.body = sp
	n.packet(nutSyncpointStartcode, sp)
	n.lastSP = start

	h := n.hdr[:0]
	h = append(h, 0) // frame code 0
	h = putV(h, uint64(pts)+1<<nutPTSShift)
	h = putV(h, uint64(len(frame)))
	h = binary.BigEndian.AppendUint32(h, nutCRC(0, h))
	n.hdr = h
	n.write(h)
	n.write(frame)
	return n.err
}

// packet writes a startcode, forward_ptr, the body and its checksum (nut.texi, "packet_header"
// and "packet_footer"); a body over 4 KiB would also need a header checksum, and none here is.
func (n *nutWriter) packet(startcode uint64, body []byte) {
	b := binary.BigEndian.AppendUint64(n.pkt[:0], startcode)
	b = putV(b, uint64(len(body)+4))
	b = append(b, body...)
	b = binary.BigEndian.AppendUint32(b, nutCRC(0, body))
	n.pkt = b
	n.write(b)
}

func (n *nutWriter) write(b []byte) {
	if n.err != nil {
		return
	}
	k, err := n.w.Write(b)
	n.pos += int64(k)
	n.err = err
}

// putV appends NUT's v: seven bits a byte, most significant first, the top bit set on every
// byte but the last.
func putV(b []byte, x uint64) []byte {
	n := 1
	for y := x >> 7; y != 0; y >>= 7 {
		n++
	}
	for i := n - 1; i >= 0; i-- {
		c := byte(x>>(7*uint(i))) & 0x7f
		if i > 0 {
			c |= 0x80
		}
		b = append(b, c)
	}
	return b
}

// putS appends NUT's s: x > 0 as v 2x−1, x ≤ 0 as v −2x.
func putS(b []byte, x int64) []byte {
	if x > 0 {
		return putV(b, uint64(2*x-1))
	}
	return putV(b, uint64(-2*x))
}

// nutCRC is NUT's checksum: CRC-32 with generator 0x04C11DB7, most significant bit first,
// starting at 0, with no final inversion.
func nutCRC(crc uint32, b []byte) uint32 {
	for _, c := range b {
		crc = crc<<8 ^ nutCRCTable[byte(crc>>24)^c]
	}
	return crc
}

var nutCRCTable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i) << 24
		for k := 0; k < 8; k++ {
			if c&0x80000000 != 0 {
				c = c<<1 ^ 0x04C11DB7
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()
