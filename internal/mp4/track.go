package mp4

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Sample is one sample of a track: where its bytes are in the file, its decode time (in the
// track's timescale, from the media's start, before any edit list) and its composition offset.
type Sample struct {
	Offset int64
	Size   uint32
	DTS    int64
	CTS    int32 // composition offset: presentation time is DTS + CTS
	Sync   bool
}

// Track is what a join needs of one track: its boxes as found, its timescale, the sample entry
// (stsd: the codec and its configuration, avcC or hvcC), and the samples in decode order.
type Track struct {
	Trak      *Box
	ID        uint32
	Handler   string // vide, soun, text, sbtl …
	Timescale uint32
	Stsd      []byte // the stsd box's body
	// Count is the track's number of samples (stsz). Samples holds them, in decode order, once
	// LoadSamples read them (ReadFile and ReadIndex do for video tracks only: a sound track of
	// PCM has a sample per audio sample, 345 million in two hours at 48 kHz).
	Count   int
	Samples []Sample
	// Duration is the media's duration in Timescale (mdhd): the last sample's duration included.
	Duration int64
	// MediaTime is the first edit's media time (elst), -1 for an empty first edit, 0 when there
	// is no edit list.
	MediaTime int64
}

// File is a parsed MP4's top level and the tracks of its moov.
type File struct {
	Boxes  []*Box
	Moov   *Box
	Tracks []*Track
}

// ReadFile parses b, a whole MP4 file (its mdat bodies are kept as slices of b, not copied).
func ReadFile(b []byte) (*File, error) {
	boxes, err := Parse(b, 0)
	if err != nil {
		return nil, err
	}
	return read(boxes, int64(len(b)))
}

// read finds the moov among the top-level boxes of a file of size bytes and reads its tracks,
// the samples of its video tracks.
func read(boxes []*Box, size int64) (*File, error) {
	f := &File{Boxes: boxes, Moov: Find(boxes, "moov")}
	if f.Moov == nil {
		return nil, fmt.Errorf("mp4: no moov box")
	}
	for _, b := range f.Moov.Children {
		if b.Type != "trak" {
			continue
		}
		t, err := ReadTrack(b)
		if err == nil && t.Handler == "vide" {
			err = t.LoadSamples(size)
		}
		if err != nil {
			return nil, err
		}
		f.Tracks = append(f.Tracks, t)
	}
	return f, nil
}

// Video is the file's first video track, or nil.
func (f *File) Video() *Track {
	for _, t := range f.Tracks {
		if t.Handler == "vide" {
			return t
		}
	}
	return nil
}

// ReadTrack reads a trak box: its identity, timescale, handler, edit, sample entry and sample
// count; LoadSamples reads the samples.
func ReadTrack(trak *Box) (*Track, error) {
	t := &Track{Trak: trak}
	tkhd := trak.Child("tkhd")
	mdhd := trak.Path("mdia", "mdhd")
	hdlr := trak.Path("mdia", "hdlr")
	stbl := trak.Path("mdia", "minf", "stbl")
	if tkhd == nil || mdhd == nil || hdlr == nil || stbl == nil {
		return nil, fmt.Errorf("mp4: a trak lacks tkhd, mdhd, hdlr or stbl")
	}
	r := &reader{b: tkhd.Body, typ: "tkhd"}
	if v, _ := r.versioned(); v == 1 {
		r.skip(16)
	} else {
		r.skip(8)
	}
	t.ID = r.u32()
	r = &reader{b: mdhd.Body, typ: "mdhd"}
	if v, _ := r.versioned(); v == 1 {
		r.skip(16)
		t.Timescale = r.u32()
		t.Duration = int64(r.u64())
	} else {
		r.skip(8)
		t.Timescale = r.u32()
		t.Duration = int64(r.u32())
	}
	if r.err != nil {
		return nil, r.err
	}
	r = &reader{b: hdlr.Body, typ: "hdlr"}
	r.skip(8)
	if r.need(4) {
		t.Handler = string(hdlr.Body[8:12])
	}
	if r.err != nil {
		return nil, r.err
	}
	if elst := trak.Path("edts", "elst"); elst != nil {
		r := &reader{b: elst.Body, typ: "elst"}
		v, _ := r.versioned()
		if n := r.u32(); n > 0 {
			if v == 1 {
				r.skip(8)
				t.MediaTime = int64(r.u64())
			} else {
				r.skip(4)
				t.MediaTime = int64(int32(r.u32()))
			}
		}
		if r.err != nil {
			return nil, r.err
		}
	}
	if stsd := stbl.Child("stsd"); stsd != nil {
		t.Stsd = stsd.Body
	} else {
		return nil, fmt.Errorf("mp4: track %d has no stsd", t.ID)
	}
	sz, err := readSizes(stbl)
	if err != nil {
		return nil, fmt.Errorf("mp4: track %d: %w", t.ID, err)
	}
	t.Count = sz.n
	return t, nil
}

// LoadSamples reads the track's samples into t.Samples; limit is the file's size, which they
// must fit in (a damaged count is refused before anything is allocated for it).
func (t *Track) LoadSamples(limit int64) error {
	var err error
	t.Samples, err = readSamples(t.Trak.Path("mdia", "minf", "stbl"), limit)
	if err != nil {
		return fmt.Errorf("mp4: track %d: %w", t.ID, err)
	}
	return nil
}

// sizes is a sample table's stsz: every sample's size is fixed, or read from r in turn.
type sizes struct {
	fixed uint32
	n     int
	r     *reader
}

func (z *sizes) next() uint32 {
	if z.fixed != 0 {
		return z.fixed
	}
	return z.r.u32()
}

func readSizes(stbl *Box) (*sizes, error) {
	stsz := stbl.Child("stsz")
	if stsz == nil || stbl.Child("stts") == nil || stbl.Child("stsc") == nil || (stbl.Child("stco") == nil && stbl.Child("co64") == nil) {
		return nil, fmt.Errorf("no stsz, stts, stsc or chunk offsets (a fragmented MP4 is not read)")
	}
	r := &reader{b: stsz.Body, typ: "stsz"}
	r.versioned()
	z := &sizes{fixed: r.u32(), n: int(r.u32()), r: r}
	if r.err != nil {
		return nil, r.err
	}
	if z.fixed == 0 && z.n*4 > len(r.b)-r.off {
		return nil, fmt.Errorf("stsz claims %d samples, its body holds fewer", z.n)
	}
	return z, nil
}

// eachChunk walks the sample table's chunks (stsc over the chunk offsets) and gives each
// sample's offset and size in decode order, its index i, to sample; or, with sample nil, each
// chunk's offset and bytes to chunk (fixed-size samples are not walked one by one). It checks
// that the runs place exactly the stsz's samples.
func eachChunk(stbl *Box, z *sizes, sample func(i int, offset int64, size uint32), chunk func(offset, bytes int64)) error {
	var chunks []int64
	r := &reader{}
	if co64 := stbl.Child("co64"); co64 != nil {
		r = &reader{b: co64.Body, typ: "co64"}
		r.versioned()
		chunks = make([]int64, r.count(8))
		for k := range chunks {
			chunks[k] = int64(r.u64())
		}
	} else {
		stco := stbl.Child("stco")
		r = &reader{b: stco.Body, typ: "stco"}
		r.versioned()
		chunks = make([]int64, r.count(4))
		for k := range chunks {
			chunks[k] = int64(r.u32())
		}
	}
	if r.err != nil {
		return r.err
	}
	stsc := stbl.Child("stsc")
	r = &reader{b: stsc.Body, typ: "stsc"}
	r.versioned()
	type run struct{ first, per int }
	runs := make([]run, r.count(12))
	for k := range runs {
		runs[k] = run{int(r.u32()), int(r.u32())}
		r.u32() // sample description index: one description is all a join copies
	}
	if r.err != nil {
		return r.err
	}
	i, n := 0, z.n
	for k, ru := range runs {
		end := len(chunks) + 1
		if k+1 < len(runs) {
			end = runs[k+1].first
		}
		if ru.first < 1 || end > len(chunks)+1 || ru.first > end {
			return fmt.Errorf("stsc run %d names chunks %d…%d of %d", k, ru.first, end-1, len(chunks))
		}
		for c := ru.first; c < end; c++ {
			pos := chunks[c-1]
			if sample == nil && z.fixed != 0 {
				if ru.per > n-i {
					return fmt.Errorf("stsc places more than the %d samples", n)
				}
				chunk(pos, int64(ru.per)*int64(z.fixed))
				i += ru.per
				continue
			}
			from := pos
			for j := 0; j < ru.per; j++ {
				if i >= n {
					return fmt.Errorf("stsc places more than the %d samples", n)
				}
				size := z.next()
				if sample != nil {
					sample(i, pos, size)
				}
				pos += int64(size)
				i++
			}
			if sample == nil {
				chunk(from, pos-from)
			}
		}
	}
	if z.r.err != nil {
		return z.r.err
	}
	if i != n {
		return fmt.Errorf("stsc places %d of %d samples", i, n)
	}
	return nil
}

// Extents checks, without building the samples, that every chunk of the track lies in
// [from, to) of the file: a sound track of PCM is checked a chunk at a time.
func (t *Track) Extents(from, to int64) error {
	stbl := t.Trak.Path("mdia", "minf", "stbl")
	z, err := readSizes(stbl)
	if err != nil {
		return fmt.Errorf("mp4: track %d: %w", t.ID, err)
	}
	bad := int64(-1)
	err = eachChunk(stbl, z, nil, func(off, bytes int64) {
		if bad < 0 && (off < from || off+bytes > to) {
			bad = off
		}
	})
	if err != nil {
		return fmt.Errorf("mp4: track %d: %w", t.ID, err)
	}
	if bad >= 0 {
		return fmt.Errorf("mp4: track %d has a sample at offset %d outside [%d, %d)", t.ID, bad, from, to)
	}
	return nil
}

func readSamples(stbl *Box, limit int64) ([]Sample, error) {
	z, err := readSizes(stbl)
	if err != nil {
		return nil, err
	}
	n := z.n
	if z.fixed != 0 && int64(n) > limit/int64(z.fixed) {
		return nil, fmt.Errorf("stsz claims %d samples of %d bytes, more than the file's %d bytes hold", n, z.fixed, limit)
	}
	s := make([]Sample, n)
	for i := range s {
		s[i].Sync = true
	}
	stts := stbl.Child("stts")

	r := &reader{b: stts.Body, typ: "stts"}
	r.versioned()
	i, dts := 0, int64(0)
	for e, entries := 0, r.count(8); e < entries; e++ {
		count, delta := int(r.u32()), int64(r.u32())
		for k := 0; k < count; k++ {
			if i >= n {
				return nil, fmt.Errorf("stts covers more than the %d samples", n)
			}
			s[i].DTS = dts
			dts += delta
			i++
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if i != n {
		return nil, fmt.Errorf("stts covers %d of %d samples", i, n)
	}

	if ctts := stbl.Child("ctts"); ctts != nil {
		r = &reader{b: ctts.Body, typ: "ctts"}
		r.versioned()
		i = 0
		for e, entries := 0, r.count(8); e < entries; e++ {
			count, off := int(r.u32()), int32(r.u32())
			for k := 0; k < count && i < n; k++ {
				s[i].CTS = off
				i++
			}
		}
		if r.err != nil {
			return nil, r.err
		}
	}
	if stss := stbl.Child("stss"); stss != nil {
		for i := range s {
			s[i].Sync = false
		}
		r = &reader{b: stss.Body, typ: "stss"}
		r.versioned()
		for e, entries := 0, r.count(4); e < entries; e++ {
			k := int(r.u32())
			if k < 1 || k > n {
				return nil, fmt.Errorf("stss names sample %d of %d", k, n)
			}
			s[k-1].Sync = true
		}
		if r.err != nil {
			return nil, r.err
		}
	}

	if err := eachChunk(stbl, z, func(i int, off int64, size uint32) { s[i].Offset, s[i].Size = off, size }, nil); err != nil {
		return nil, err
	}
	return s, nil
}

// SameCodec reports whether a and b have the same sample entry (codec, size, configuration).
func SameCodec(a, b *Track) bool { return bytes.Equal(a.Stsd, b.Stsd) }

// fullBox is a full box's body: version, flags, then the rest.
func fullBox(version uint8, flags uint32, rest []byte) []byte {
	b := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(rest)), uint32(version)<<24|flags)
	return append(b, rest...)
}

// visualEntryFixed is the bytes of a visual sample entry before its child boxes: the box
// header, six reserved bytes and the data reference index, then the 70 bytes of the visual
// fields (size, resolution, compressor name, depth).
const visualEntryFixed = 8 + 8 + 70

// WithoutBitrate is a video stsd body with the btrt box of its one sample entry left out: btrt
// states one file's bit rates (ffmpeg writes each segment's own), so segments that differ only
// there hold the same codec configuration, and a join of them states none (the box is optional).
func WithoutBitrate(stsd []byte) ([]byte, error) {
	if len(stsd) < 8+visualEntryFixed || binary.BigEndian.Uint32(stsd[4:]) != 1 {
		return stsd, nil
	}
	size := int(binary.BigEndian.Uint32(stsd[8:]))
	if size < visualEntryFixed || 8+size != len(stsd) {
		return nil, fmt.Errorf("mp4: the stsd's sample entry is %d bytes in a body of %d", size, len(stsd))
	}
	kids, err := Parse(stsd[8+visualEntryFixed:], 0)
	if err != nil {
		return nil, err
	}
	entry := append([]byte{}, stsd[8:8+visualEntryFixed]...)
	for _, k := range kids {
		if k.Type != "btrt" {
			entry = append(entry, Make(k.Type, k.Body)...)
		}
	}
	binary.BigEndian.PutUint32(entry, uint32(len(entry)))
	return append(append([]byte{}, stsd[:8]...), entry...), nil
}

// EntryType is the four-character code of an stsd body's first sample entry (avc1, hvc1,
// ...): the codec; "" when the body holds none.
func EntryType(stsd []byte) string {
	if len(stsd) < 16 || binary.BigEndian.Uint32(stsd[4:]) < 1 {
		return ""
	}
	return string(stsd[12:16])
}
