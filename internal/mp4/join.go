package mp4

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
)

// Join describes a file joined from a side file (the other streams, the metadata and chapters,
// and a placeholder video track that the joined video replaces) and a video track whose samples
// come from elsewhere. Its layout:
//
//	ftyp (the side file's) | moov | mdat: the side file's mdat bytes, then the video's bytes
//
// The index goes first (as ffmpeg's +faststart places it) because every size is known before
// any sample is written: each writer of samples can be told its offset at once.
type Join struct {
	Side *File
	// SideData is the side file's single mdat body: where it starts in the side file, its size.
	SideData, SideSize int64
	// Video is the track whose sample entry (stsd), tkhd and mdia the joined video keeps (the
	// first segment's); Samples are every video sample in decode order: DTS on the output's
	// timeline in Video's timescale (the first may be negative: B-frames decode before their
	// presentation), CTS, Size, Sync, and Offset from the start of the video's bytes.
	Video   *Track
	Samples []Sample
	// Chunks is the number of samples in each chunk, in order (one chunk per segment: each
	// segment's samples lie together).
	Chunks []int
	// End is when the last frame ends, in Video's timescale from the first frame's time 0 (the
	// output timeline's End): the edit's, and so the track's, duration.
	End int64
}

// movieTimescale is the moov's timescale, ffmpeg's MOV_TIMESCALE.
const movieTimescale = 1000

// Header is the bytes before the samples: ftyp, moov and the mdat's header. The side file's
// mdat body goes right after it, then the video's bytes (VideoStart).
func (j *Join) Header() ([]byte, error) {
	// The moov's size does not depend on the offsets (co64 throughout): size it with the
	// header's own size unknown, then write it again in place.
	// The sample table up to its chunk offsets (stsd to stsz) is the same in both: built once.
	entries := j.sampleEntries()
	h, err := j.header(0, entries)
	if err != nil {
		return nil, err
	}
	return j.header(int64(len(h)), entries)
}

// VideoStart is where the video's bytes start in the joined file whose Header is hlen bytes.
func (j *Join) VideoStart(hlen int64) int64 { return hlen + j.SideSize }

func (j *Join) header(hlen int64, entries []byte) ([]byte, error) {
	ftyp := Find(j.Side.Boxes, "ftyp")
	if ftyp == nil {
		return nil, fmt.Errorf("mp4: the side file has no ftyp")
	}
	place := j.Side.Video()
	if place == nil {
		return nil, fmt.Errorf("mp4: the side file has no video track to replace")
	}
	if len(j.Samples) == 0 {
		return nil, fmt.Errorf("mp4: no video samples to join")
	}
	sideShift := hlen - j.SideData // side offsets move from the side file into the joined one
	var video []byte
	var durations []int64 // every track's duration in the movie's timescale
	var traks [][]byte
	for _, c := range j.Side.Moov.Children {
		if c.Type != "trak" {
			continue
		}
		if c == place.Trak {
			b, dur, err := j.videoTrak(place, j.VideoStart(hlen), entries)
			if err != nil {
				return nil, err
			}
			video = b
			traks = append(traks, b)
			durations = append(durations, dur)
			continue
		}
		t, err := ReadTrack(c)
		if err != nil {
			return nil, err
		}
		var st *stretch
		if t.Handler == "tmcd" && t.Count == 1 && t.Timescale > 0 {
			// The timecode's one sample lasts the placeholder's frame in the side file; the
			// serial join's (ffmpeg's muxer) lasts the whole video: so does this one.
			media := rescaleUp(j.media(), int64(t.Timescale), int64(j.Video.Timescale))
			st = &stretch{media: media, movie: rescaleUp(media, movieTimescale, int64(t.Timescale))}
		}
		b, err := shiftedTrak(c, t, sideShift, j.SideData, j.SideSize, st)
		if err != nil {
			return nil, err
		}
		traks = append(traks, b)
		if st != nil {
			durations = append(durations, st.movie)
		} else {
			durations = append(durations, trackDuration(c))
		}
	}
	if video == nil {
		return nil, fmt.Errorf("mp4: the side file's video track was not found in its moov")
	}
	var moov []byte
	ti := 0
	for _, c := range j.Side.Moov.Children {
		switch c.Type {
		case "mvhd":
			var longest int64
			for _, d := range durations {
				longest = max(longest, d)
			}
			b, err := setDuration(c, longest)
			if err != nil {
				return nil, err
			}
			moov = append(moov, b...)
		case "trak":
			moov = append(moov, traks[ti]...)
			ti++
		default:
			moov = append(moov, c.Encode()...)
		}
	}
	out := ftyp.Encode()
	out = append(out, Make("moov", moov)...)
	var video64 int64
	for _, s := range j.Samples {
		video64 += int64(s.Size)
	}
	return append(out, MdatHeader(j.SideSize+video64)...), nil
}

// videoTrak is the joined video's trak, in place of the side file's placeholder, and its
// duration in the movie's timescale.
func (j *Join) videoTrak(place *Track, start int64, entries []byte) ([]byte, int64, error) {
	tmpl := j.Video
	first := j.Samples[0].DTS
	media := j.media()
	movie := rescaleUp(max(media, j.End), movieTimescale, int64(tmpl.Timescale))

	tkhd := tmpl.Trak.Child("tkhd")
	if tkhd == nil {
		return nil, 0, fmt.Errorf("mp4: the video track has no tkhd")
	}
	tk := append([]byte{}, tkhd.Body...)
	idAt, durAt, durLen := 12, 20, 4
	if tk[0] == 1 {
		idAt, durAt, durLen = 20, 28, 8
	}
	if len(tk) < durAt+durLen {
		return nil, 0, fmt.Errorf("mp4: the video's tkhd is cut off")
	}
	binary.BigEndian.PutUint32(tk[idAt:], place.ID)
	if durLen == 4 {
		if movie > math.MaxUint32 {
			return nil, 0, fmt.Errorf("mp4: a video of %d ms does not fit a version-0 tkhd", movie)
		}
		binary.BigEndian.PutUint32(tk[durAt:], uint32(movie))
	} else {
		binary.BigEndian.PutUint64(tk[durAt:], uint64(movie))
	}
	trak := Make("tkhd", tk)

	// One edit: the presentation starts at the first frame's time, 0, which is -first in the
	// media's decode clock that starts at the first sample.
	var elst []byte
	if movie <= math.MaxUint32 && -first <= math.MaxInt32 {
		elst = fullBox(0, 0, binary.BigEndian.AppendUint32(nil, 1))
		elst = binary.BigEndian.AppendUint32(elst, uint32(movie))
		elst = binary.BigEndian.AppendUint32(elst, uint32(int32(-first)))
	} else {
		elst = fullBox(1, 0, binary.BigEndian.AppendUint32(nil, 1))
		elst = binary.BigEndian.AppendUint64(elst, uint64(movie))
		elst = binary.BigEndian.AppendUint64(elst, uint64(-first))
	}
	elst = binary.BigEndian.AppendUint32(elst, 1<<16) // rate 1.0
	trak = append(trak, Make("edts", Make("elst", elst))...)
	if tref := place.Trak.Child("tref"); tref != nil {
		// The chapter track's reference, which ffmpeg gives every track.
		trak = append(trak, tref.Encode()...)
	}

	mdia := tmpl.Trak.Child("mdia")
	var body []byte
	for _, c := range mdia.Children {
		switch c.Type {
		case "mdhd":
			b, err := setDuration(c, media)
			if err != nil {
				return nil, 0, err
			}
			body = append(body, b...)
		case "minf":
			var minf []byte
			for _, m := range c.Children {
				if m.Type == "stbl" {
					minf = append(minf, j.sampleTable(start, entries)...)
				} else {
					minf = append(minf, m.Encode()...)
				}
			}
			body = append(body, Make("minf", minf)...)
		default:
			body = append(body, c.Encode()...)
		}
	}
	trak = append(trak, Make("mdia", body)...)
	return Make("trak", trak), movie, nil
}

// media is the joined video's media duration in Video's timescale (its mdhd's): the decode
// span, the last sample lasting as long as the one before it (ffmpeg's muxer gives a stream
// copy's last packet the same, its duration being unknown).
func (j *Join) media() int64 {
	first := j.Samples[0].DTS
	last := j.Samples[len(j.Samples)-1]
	var lastDur int64
	if n := len(j.Samples); n > 1 {
		lastDur = last.DTS - j.Samples[n-2].DTS
	} else {
		lastDur = j.Video.Duration
	}
	return last.DTS + lastDur - first
}

// stretch is a one-sample track's new length: its sample's and media's duration (its own
// timescale) and its track's and edit's (the movie's).
type stretch struct{ media, movie int64 }

// sampleTable is the video's stbl: entries (sampleEntries), then its chunks' offsets from start.
func (j *Join) sampleTable(start int64, entries []byte) []byte {
	s := j.Samples
	co64 := make([]byte, 0, 4+8*len(j.Chunks))
	co64 = binary.BigEndian.AppendUint32(co64, uint32(len(j.Chunks)))
	i := 0
	for _, n := range j.Chunks {
		co64 = binary.BigEndian.AppendUint64(co64, uint64(start+s[i].Offset))
		i += n
	}
	co64 = Make("co64", fullBox(0, 0, co64))
	body := make([]byte, 0, len(entries)+len(co64))
	return Make("stbl", append(append(body, entries...), co64...))
}

// sampleEntries is the video's sample table but its chunk offsets: stsd, stts, stss, ctts,
// stsc and stsz. At 180000 samples it is megabytes: each box is sized before it is filled.
func (j *Join) sampleEntries() []byte {
	s := j.Samples
	out := Make("stsd", j.Video.Stsd)

	deltas := make([]int64, len(s))
	for i := range deltas {
		switch {
		case i+1 < len(s):
			deltas[i] = s[i+1].DTS - s[i].DTS
		case i > 0:
			deltas[i] = deltas[i-1]
		default:
			deltas[i] = j.Video.Duration
		}
	}
	stts := make([]byte, 0, 8*len(s))
	entries := 0
	for i := 0; i < len(s); {
		k := i + 1
		for k < len(s) && deltas[k] == deltas[i] {
			k++
		}
		stts = binary.BigEndian.AppendUint32(stts, uint32(k-i))
		stts = binary.BigEndian.AppendUint32(stts, uint32(deltas[i]))
		entries++
		i = k
	}
	out = append(out, Make("stts", fullBox(0, 0, append(binary.BigEndian.AppendUint32(nil, uint32(entries)), stts...)))...)

	sync := make([]byte, 0, 4*len(s))
	nsync := 0
	for i, x := range s {
		if x.Sync {
			sync = binary.BigEndian.AppendUint32(sync, uint32(i+1))
			nsync++
		}
	}
	if nsync < len(s) {
		out = append(out, Make("stss", fullBox(0, 0, append(binary.BigEndian.AppendUint32(nil, uint32(nsync)), sync...)))...)
	}

	hasCTS, negative := false, false
	for _, x := range s {
		hasCTS = hasCTS || x.CTS != 0
		negative = negative || x.CTS < 0
	}
	if hasCTS {
		ctts := make([]byte, 0, 8*len(s))
		entries = 0
		for i := 0; i < len(s); {
			k := i + 1
			for k < len(s) && s[k].CTS == s[i].CTS {
				k++
			}
			ctts = binary.BigEndian.AppendUint32(ctts, uint32(k-i))
			ctts = binary.BigEndian.AppendUint32(ctts, uint32(s[i].CTS))
			entries++
			i = k
		}
		v := uint8(0)
		if negative {
			v = 1
		}
		out = append(out, Make("ctts", fullBox(v, 0, append(binary.BigEndian.AppendUint32(nil, uint32(entries)), ctts...)))...)
	}

	var stsc []byte
	entries = 0
	for c, n := range j.Chunks {
		if c == 0 || n != j.Chunks[c-1] {
			stsc = binary.BigEndian.AppendUint32(stsc, uint32(c+1))
			stsc = binary.BigEndian.AppendUint32(stsc, uint32(n))
			stsc = binary.BigEndian.AppendUint32(stsc, 1)
			entries++
		}
	}
	out = append(out, Make("stsc", fullBox(0, 0, append(binary.BigEndian.AppendUint32(nil, uint32(entries)), stsc...)))...)

	stsz := make([]byte, 0, 8+4*len(s))
	stsz = binary.BigEndian.AppendUint32(stsz, 0)
	stsz = binary.BigEndian.AppendUint32(stsz, uint32(len(s)))
	for _, x := range s {
		stsz = binary.BigEndian.AppendUint32(stsz, x.Size)
	}
	return append(out, Make("stsz", fullBox(0, 0, stsz))...)
}

// shiftedTrak is one of the side file's traks with its chunk offsets moved by shift (co64, so
// that any offset fits). Every chunk must lie in the side file's mdat body [data, data+size).
// With st, the track's one sample and its durations are stretched to st.
func shiftedTrak(trak *Box, t *Track, shift, data, size int64, st *stretch) ([]byte, error) {
	if err := t.Extents(data, data+size); err != nil {
		return nil, fmt.Errorf("%w: outside the side file's mdat", err)
	}
	var walk func(b *Box) []byte
	walk = func(b *Box) []byte {
		switch b.Type {
		case "stco", "co64":
			r := &reader{b: b.Body, typ: b.Type}
			r.versioned()
			n := r.u32()
			out := binary.BigEndian.AppendUint32(fullBox(0, 0, nil), n)
			for k := uint32(0); k < n; k++ {
				var off int64
				if b.Type == "co64" {
					off = int64(r.u64())
				} else {
					off = int64(r.u32())
				}
				out = binary.BigEndian.AppendUint64(out, uint64(off+shift))
			}
			return Make("co64", out)
		}
		if st != nil {
			if out, ok := stretched(b, st); ok {
				return out
			}
		}
		if len(b.Children) == 0 {
			return b.Encode()
		}
		var body []byte
		for _, c := range b.Children {
			body = append(body, walk(c)...)
		}
		return Make(b.Type, body)
	}
	return walk(trak), nil
}

// stretched is b of a one-sample track with its duration set to st: the sample's (stts), the
// media's (mdhd), the track's (tkhd) and its single edit's (elst); ok false for any other box,
// or one whose layout is not the expected one (kept as it is).
func stretched(b *Box, st *stretch) (out []byte, ok bool) {
	body := append([]byte{}, b.Body...)
	switch b.Type {
	case "stts":
		if len(body) != 16 || binary.BigEndian.Uint32(body[4:]) != 1 || binary.BigEndian.Uint32(body[8:]) != 1 || st.media > math.MaxUint32 {
			return nil, false
		}
		binary.BigEndian.PutUint32(body[12:], uint32(st.media))
		return Make("stts", body), true
	case "mdhd":
		out, err := setDuration(b, st.media)
		return out, err == nil
	case "tkhd":
		at, n := 20, 4
		if len(body) > 0 && body[0] == 1 {
			at, n = 28, 8
		}
		if len(body) < at+n || n == 4 && st.movie > math.MaxUint32 {
			return nil, false
		}
		if n == 4 {
			binary.BigEndian.PutUint32(body[at:], uint32(st.movie))
		} else {
			binary.BigEndian.PutUint64(body[at:], uint64(st.movie))
		}
		return Make("tkhd", body), true
	case "elst":
		if len(body) < 12 || binary.BigEndian.Uint32(body[4:]) != 1 {
			return nil, false
		}
		if body[0] == 1 {
			if len(body) < 16 {
				return nil, false
			}
			binary.BigEndian.PutUint64(body[8:], uint64(st.movie))
		} else {
			if st.movie > math.MaxUint32 {
				return nil, false
			}
			binary.BigEndian.PutUint32(body[8:], uint32(st.movie))
		}
		return Make("elst", body), true
	}
	return nil, false
}

// trackDuration is a trak's tkhd duration (the movie's timescale).
func trackDuration(trak *Box) int64 {
	tkhd := trak.Child("tkhd")
	if tkhd == nil || len(tkhd.Body) < 24 {
		return 0
	}
	if tkhd.Body[0] == 1 {
		if len(tkhd.Body) < 36 {
			return 0
		}
		return int64(binary.BigEndian.Uint64(tkhd.Body[28:]))
	}
	return int64(binary.BigEndian.Uint32(tkhd.Body[20:]))
}

// setDuration is an mvhd or mdhd with its duration replaced (version 1 when it needs 64 bits).
func setDuration(b *Box, d int64) ([]byte, error) {
	body := b.Body
	if len(body) < 24 || body[0] == 1 && len(body) < 36 {
		return nil, fmt.Errorf("mp4: %s box is cut off", b.Type)
	}
	if body[0] == 1 {
		out := append([]byte{}, body...)
		binary.BigEndian.PutUint64(out[24:], uint64(d))
		return Make(b.Type, out), nil
	}
	if d <= math.MaxUint32 {
		out := append([]byte{}, body...)
		binary.BigEndian.PutUint32(out[16:], uint32(d))
		return Make(b.Type, out), nil
	}
	// Version 0's times and duration are 32 bits: write version 1.
	out := fullBox(1, uint32(body[1])<<16|uint32(body[2])<<8|uint32(body[3]), nil)
	out = binary.BigEndian.AppendUint64(out, uint64(binary.BigEndian.Uint32(body[4:])))
	out = binary.BigEndian.AppendUint64(out, uint64(binary.BigEndian.Uint32(body[8:])))
	out = append(out, body[12:16]...) // timescale
	out = binary.BigEndian.AppendUint64(out, uint64(d))
	return Make(b.Type, append(out, body[20:]...)), nil
}

// rescaleUp is a·b/c rounded up, exactly.
func rescaleUp(a, b, c int64) int64 {
	n := new(big.Int).Mul(big.NewInt(a), big.NewInt(b))
	q, r := new(big.Int).QuoRem(n, big.NewInt(c), new(big.Int))
	if r.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}
