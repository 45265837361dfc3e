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
	Samples   []Sample
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
	return read(boxes)
}

// read finds the moov among a file's top-level boxes and reads its tracks.
func read(boxes []*Box) (*File, error) {
	f := &File{Boxes: boxes, Moov: Find(boxes, "moov")}
	if f.Moov == nil {
		return nil, fmt.Errorf("mp4: no moov box")
	}
	for _, b := range f.Moov.Children {
		if b.Type != "trak" {
			continue
		}
		t, err := ReadTrack(b)
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

// ReadTrack reads a trak box's sample table.
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
	var err error
	t.Samples, err = readSamples(stbl)
	if err != nil {
		return nil, fmt.Errorf("mp4: track %d: %w", t.ID, err)
	}
	return t, nil
}

func readSamples(stbl *Box) ([]Sample, error) {
	stsz := stbl.Child("stsz")
	stts := stbl.Child("stts")
	stsc := stbl.Child("stsc")
	stco, co64 := stbl.Child("stco"), stbl.Child("co64")
	if stsz == nil || stts == nil || stsc == nil || (stco == nil && co64 == nil) {
		return nil, fmt.Errorf("no stsz, stts, stsc or chunk offsets (a fragmented MP4 is not read)")
	}
	r := &reader{b: stsz.Body, typ: "stsz"}
	r.versioned()
	fixed := r.u32()
	n := int(r.u32())
	if r.err == nil && fixed == 0 && n*4 > len(r.b)-r.off {
		return nil, fmt.Errorf("stsz claims %d samples, its body holds fewer", n)
	}
	s := make([]Sample, n)
	for i := range s {
		if fixed != 0 {
			s[i].Size = fixed
		} else {
			s[i].Size = r.u32()
		}
		s[i].Sync = true
	}
	if r.err != nil {
		return nil, r.err
	}

	r = &reader{b: stts.Body, typ: "stts"}
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

	var chunks []int64
	if co64 != nil {
		r = &reader{b: co64.Body, typ: "co64"}
		r.versioned()
		chunks = make([]int64, r.count(8))
		for k := range chunks {
			chunks[k] = int64(r.u64())
		}
	} else {
		r = &reader{b: stco.Body, typ: "stco"}
		r.versioned()
		chunks = make([]int64, r.count(4))
		for k := range chunks {
			chunks[k] = int64(r.u32())
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	r = &reader{b: stsc.Body, typ: "stsc"}
	r.versioned()
	type run struct{ first, per int }
	runs := make([]run, r.count(12))
	for k := range runs {
		runs[k] = run{int(r.u32()), int(r.u32())}
		r.u32() // sample description index: one description is all a join copies
	}
	if r.err != nil {
		return nil, r.err
	}
	i = 0
	for k, ru := range runs {
		end := len(chunks) + 1
		if k+1 < len(runs) {
			end = runs[k+1].first
		}
		if ru.first < 1 || end > len(chunks)+1 || ru.first > end {
			return nil, fmt.Errorf("stsc run %d names chunks %d…%d of %d", k, ru.first, end-1, len(chunks))
		}
		for c := ru.first; c < end; c++ {
			pos := chunks[c-1]
			for j := 0; j < ru.per; j++ {
				if i >= n {
					return nil, fmt.Errorf("stsc places more than the %d samples", n)
				}
				s[i].Offset = pos
				pos += int64(s[i].Size)
				i++
			}
		}
	}
	if i != n {
		return nil, fmt.Errorf("stsc places %d of %d samples", i, n)
	}
	return s, nil
}

// SameCodec reports whether a and b have the same sample entry (codec, size, configuration).
func SameCodec(a, b *Track) bool { return bytes.Equal(a.Stsd, b.Stsd) }

// fullBox is a full box's body: version, flags, then the rest.
func fullBox(version uint8, flags uint32, rest []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(version)<<24|flags)
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
