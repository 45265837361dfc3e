package video

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/mp4"
)

// The parallel join of an MP4 or MOV output. Its layout (mp4.Join) puts the index first and
// every segment's sample bytes at an offset known before any is written: the offsets are a
// prefix sum of the segments' sizes, so each rank can copy its own segments into the output
// while rank 0 writes the index and the side file's bytes (the target's other streams, muxed by
// ffmpeg exactly as Join muxes them). The segments of such an output are MP4 (MP4SegmentExt,
// written by their own encoder with the output's time base as the track's clock): the join reads
// each one's index and takes its sample bytes as they are, with no ffmpeg.

// ParallelJoin reports whether out can be joined in parallel from segments encoded by encoder
// on the timeline times, and when not, why (one clause, for the log line that says which join
// ran).
func ParallelJoin(out, encoder string, times Timeline) (bool, string) {
	if ok, why := ParallelContainer(out, encoder); !ok {
		return false, why
	}
	if times.TimeBase.Num != 1 {
		return false, "the target's time base " + times.TimeBase.String() + " is not 1/N, which an MP4 track's clock must be"
	}
	return true, ""
}

// ParallelContainer is ParallelJoin's test of the container and the encoder alone (out's
// extension; "" is the default output, .mp4): what `facefusion plan` models before any target.
func ParallelContainer(out, encoder string) (bool, string) {
	if out == "" {
		out = "out.mp4"
	}
	switch m := muxerFor(out); m {
	case "mp4", "mov":
	case "":
		// ffmpeg picks the muxer from the extension (.flv and others): not one this join writes.
		return false, "a " + strings.TrimPrefix(strings.ToLower(filepath.Ext(out)), ".") + " output is joined by ffmpeg (serial)"
	default:
		return false, "a " + m + " output is joined by ffmpeg (its index is written by its muxer)"
	}
	if placeholderEncoder(EncodeOptions{Encoder: encoder}.ChosenEncoder()) == "" {
		return false, "the encoder " + encoder + " is not H.264 or HEVC"
	}
	return true, ""
}

// placeholderEncoder is the software encoder of encoder's codec: the side file's placeholder
// video is of the output's codec, so that its ftyp names the output's brands.
func placeholderEncoder(encoder string) string {
	switch encoder {
	case "libx264", "h264_nvenc", "h264_qsv":
		return "libx264"
	case "libx265", "hevc_nvenc", "hevc_qsv":
		return "libx265"
	}
	return ""
}

// WriteSide writes side, the parallel join's side file: what m muxes beside the video, by the
// same command Join runs, with a one-frame placeholder in place of the segments (the joined
// video replaces it, and takes its track number). side must have out's extension. It needs no
// segment, so it can run while the frames are worked on. Its own temp files (a trim's cut
// cues) go in m.Scratch, node-local, as Join's do: never beside side in the job folder, where
// a kill would leave them for the folder's cleanup to refuse.
func WriteSide(ctx context.Context, m Mux, out, encoder, side string) error {
	enc := placeholderEncoder(encoder)
	if enc == "" {
		return fmt.Errorf("video: the side file of %s: the encoder %s is not H.264 or HEVC", out, encoder)
	}
	input := []string{"-f", "lavfi", "-i", "color=c=black:s=64x64:r=1:d=1"}
	// One frame from the input itself: -frames would end the whole output (ffmpeg 5) at it.
	// One thread: the encoder writes its thread count into the stream, and the side file's
	// bytes must not depend on the CPUs of the rank that writes it.
	video := []string{"-c:0", enc, "-threads:0", "1"}
	if enc == "libx265" {
		video = append(video, "-x265-params", "log-level=error:pools=1:frame-threads=1")
	}
	if m.Span.Timecode != "" && m.Span.Rate.Valid() {
		// The timecode track counts at the video's rate, the placeholder's in the side file.
		video = append(video, "-r:0", m.Span.Rate.String(), "-fps_mode:0", "passthrough")
	}
	keep, done, err := withCues(ctx, m.Scratch, m.Target, m.Span, m.Keep)
	defer done()
	if err != nil {
		return fmt.Errorf("video: writing the side file %s of %s: %w", side, out, err)
	}
	m.Keep = keep
	args := muxArgs(input, video, m, out)
	args = append(args, outputArgs(side, false)...)
	if _, err := runTool(ctx, FFmpeg, args...); err != nil {
		return fmt.Errorf("video: writing the side file %s of %s (the target's %d other stream(s), metadata, chapters): %w", side, out, len(keep), err)
	}
	return nil
}

// Piece is one segment as the parallel join takes it: where its sample bytes lie in its file,
// and its sample table, times on the output's timeline.
type Piece struct {
	// Path is the segment; Data and Size are where its sample bytes lie in it, together.
	Path       string
	Data, Size int64
	Table      PieceTable
	track      *mp4.Track
}

// PieceTable is what rank 0 needs of a piece to write the index: small, and gathered.
type PieceTable struct {
	Timescale uint32
	Stsd      []byte // the sample entry: the codec and its configuration (avcC, hvcC)
	// Samples in decode order: DTS on the output's timeline, CTS, Size, Sync; Offset from the
	// piece's first sample byte.
	Samples []mp4.Sample
	// Chunks is the number of samples of each segment of the piece: the output has a chunk a
	// segment, so that its index is the same however the segments were shared among ranks.
	Chunks []int
}

// ReadSegment reads the index of seg, an MP4 segment (MP4SegmentExt) whose first frame shows
// at seg.Start on the output timeline times: its sample table, moved onto that timeline, and
// where its sample bytes lie. It reads the index only (the moov, and the boxes' headers).
func ReadSegment(seg JoinSegment, times Timeline) (*Piece, error) {
	what := "segment " + seg.Path
	r, err := os.Open(seg.Path)
	if err != nil {
		return nil, fmt.Errorf("video: %w", err)
	}
	defer r.Close()
	st, err := r.Stat()
	if err != nil {
		return nil, fmt.Errorf("video: %w", err)
	}
	mf, err := mp4.ReadIndex(r, st.Size())
	if err != nil {
		return nil, fmt.Errorf("video: %s: %w", what, err)
	}
	t := mf.Video()
	if t == nil || len(t.Samples) == 0 {
		return nil, fmt.Errorf("video: %s: no video samples", what)
	}
	if t.Timescale != uint32(times.TimeBase.Den) {
		return nil, fmt.Errorf("video: %s: the clock 1/%d, not the output's %s (a segment of another layout?)", what, t.Timescale, times.TimeBase)
	}
	stsd, err := mp4.WithoutBitrate(t.Stsd)
	if err != nil {
		return nil, fmt.Errorf("video: %s: %w", what, err)
	}
	t.Stsd = stsd
	p := &Piece{Path: seg.Path, Data: t.Samples[0].Offset, track: t}
	p.Table = PieceTable{Timescale: t.Timescale, Stsd: stsd, Samples: make([]mp4.Sample, len(t.Samples)), Chunks: []int{len(t.Samples)}}
	// The segment's decode clock starts at its first sample (its edit list, not read, says
	// when its first frame shows): its times move by seg.Start less its first presentation.
	first := t.Samples[0].DTS + int64(t.Samples[0].CTS)
	for _, s := range t.Samples {
		first = min(first, s.DTS+int64(s.CTS))
	}
	shift := seg.Start - first
	next := p.Data
	for i, s := range t.Samples {
		if s.Offset != next {
			return nil, fmt.Errorf("video: %s: sample %d is not right after the one before it", what, i)
		}
		next += int64(s.Size)
		s.DTS += shift
		s.Offset -= p.Data
		p.Table.Samples[i] = s
	}
	p.Size = next - p.Data
	return p, nil
}

// Side is the parallel join's side file, read: its index and where its sample bytes lie.
type Side struct {
	Path       string
	File       *mp4.File
	Data, Size int64
}

// ReadSide reads the side file's index.
func ReadSide(path string) (*Side, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("video: the side file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("video: the side file: %w", err)
	}
	mf, err := mp4.ReadIndex(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("video: the side file %s: %w", path, err)
	}
	s := &Side{Path: path, File: mf}
	n := 0
	for _, b := range mf.Boxes {
		if b.Type == "mdat" {
			s.Data, s.Size = b.Offset+int64(b.HeaderLen), b.Size-int64(b.HeaderLen)
			n++
		}
	}
	if n != 1 {
		return nil, fmt.Errorf("video: the side file %s has %d mdat boxes, want 1", path, n)
	}
	return s, nil
}

// ConfigError is PlanJoin's refusal of pieces whose codec configurations (sample entries)
// differ: piece Piece's (codec Other) from piece 0's (codec Codec). The encoders that wrote them
// differ: another ffmpeg, libx264 or libx265 on some nodes, or settings changed between attempts.
type ConfigError struct {
	Piece        int
	Codec, Other string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("video: piece %d's codec configuration (%s) differs from piece 0's (%s): the encoders that wrote them differ (another ffmpeg or encoder library on some nodes, or settings changed between attempts)", e.Piece, e.Other, e.Codec)
}

// Concatenable says whether ffmpeg's concat (the serial join) can still join such pieces: it
// re-sends H.264's parameter sets inside the stream (its auto_convert), and nothing else's:
// HEVC's pieces would all be decoded with piece 0's configuration.
func (e *ConfigError) Concatenable() bool {
	return e.Codec == e.Other && (e.Codec == "avc1" || e.Codec == "avc3")
}

// Layout is the parallel join's plan: the header rank 0 writes at 0, the side file's bytes
// after it, and the byte offset of every segment's samples in the output.
type Layout struct {
	Header  []byte
	Offsets []int64
	Size    int64 // the output's size
}

// PlanJoin lays out the output from the side file and every segment's table, in order; the
// first segment's track (tmpl, read by ReadSegment) gives the video's sample entry and headers,
// times the output's end.
// Segments whose codec configurations differ cannot share one sample entry: a *ConfigError
// that says which, for the serial join to take over where it can.
func PlanJoin(side *Side, tables []PieceTable, tmpl *Piece, times Timeline) (*Layout, error) {
	if len(tables) == 0 {
		return nil, fmt.Errorf("video: the parallel join was given no segments")
	}
	j := &mp4.Join{Side: side.File, SideData: side.Data, SideSize: side.Size, Video: tmpl.track, End: times.End}
	samples, chunks := 0, 0
	for _, t := range tables {
		samples, chunks = samples+len(t.Samples), chunks+len(t.Chunks)
	}
	j.Samples, j.Chunks = make([]mp4.Sample, 0, samples), make([]int, 0, chunks)
	var at int64
	rel := make([]int64, len(tables))
	for k, t := range tables {
		if !bytes.Equal(t.Stsd, tables[0].Stsd) {
			return nil, &ConfigError{Piece: k, Codec: mp4.EntryType(tables[0].Stsd), Other: mp4.EntryType(t.Stsd)}
		}
		if t.Timescale != tables[0].Timescale { // one track has one clock; ffmpeg's concat rescales
			return nil, fmt.Errorf("video: piece %d's clock (1/%d) is not piece 0's (1/%d)", k, t.Timescale, tables[0].Timescale)
		}
		rel[k] = at
		for _, s := range t.Samples {
			s.Offset += at
			j.Samples = append(j.Samples, s)
		}
		j.Chunks = append(j.Chunks, t.Chunks...)
		if n := len(t.Samples); n > 0 {
			at += t.Samples[n-1].Offset + int64(t.Samples[n-1].Size)
		}
	}
	if err := redecode(j.Samples); err != nil {
		return nil, err
	}
	for i := 1; i < len(j.Samples); i++ {
		if j.Samples[i].DTS <= j.Samples[i-1].DTS {
			return nil, fmt.Errorf("video: the joined video's decode times do not rise at sample %d (%d after %d)", i, j.Samples[i].DTS, j.Samples[i-1].DTS)
		}
	}
	h, err := j.Header()
	if err != nil {
		return nil, err
	}
	start := j.VideoStart(int64(len(h)))
	l := &Layout{Header: h, Offsets: make([]int64, len(tables)), Size: start + at}
	for k := range rel {
		l.Offsets[k] = start + rel[k]
	}
	return l, nil
}

// redecode gives the joined samples (decode order, DTS+CTS their presentation times) the
// decode times ffmpeg's serial join gives them: sample i decodes at the presentation time of the
// i−D'th frame in presentation order, D the deepest reordering of any segment (the segments'
// own decode times start each at its own depth: a segment without B-frames would decode after
// the next one's first frame), and the first D before frame 0 by the first frame's step.
func redecode(s []mp4.Sample) error {
	pts := make([]int64, len(s))
	for i, x := range s {
		pts[i] = x.DTS + int64(x.CTS)
	}
	sorted := slices.Clone(pts)
	slices.Sort(sorted)
	depth := 0
	for i, p := range pts {
		// The frame decoded i-th must be shown no earlier than the (i−depth)-th in order.
		for i-depth >= 0 && sorted[i-depth] > p {
			depth++
		}
	}
	step := int64(1)
	if len(sorted) > 1 {
		step = sorted[1] - sorted[0]
	}
	for i := range s {
		dts := sorted[0] - int64(depth-i)*step
		if i >= depth {
			dts = sorted[i-depth]
		}
		cts := pts[i] - dts
		if cts < 0 || cts > math.MaxInt32 {
			return fmt.Errorf("video: the joined video's sample %d would show %d ticks after it decodes", i, cts)
		}
		s[i].DTS, s[i].CTS = dts, int32(cts)
	}
	return nil
}

// WriteHead writes what rank 0 writes once: the header and the side file's sample bytes. hash,
// when not nil, is given every byte as it is written, at its offset (the output's block hash).
func (l *Layout) WriteHead(out *os.File, side *Side, hash io.WriterAt) error {
	w := teeAt{out, hash}
	if _, err := w.WriteAt(l.Header, 0); err != nil {
		return fmt.Errorf("video: writing the index of %s: %w", out.Name(), err)
	}
	return copyRange(w, out.Name(), int64(len(l.Header)), side.Path, side.Data, side.Size)
}

// CopyPiece copies p's sample bytes into out at at; hash, when not nil, is given them too.
func CopyPiece(out *os.File, at int64, p *Piece, hash io.WriterAt) error {
	return copyRange(teeAt{out, hash}, out.Name(), at, p.Path, p.Data, p.Size)
}

// teeAt writes into the output, then gives the same bytes to the hash (nil: none): each byte
// is read once. The hash's own refusal is not the copy's: the hash, left short, says so when it
// is asked for its sums (the report's hash is then read back), and the output is still written.
type teeAt struct {
	out  *os.File
	hash io.WriterAt
}

func (t teeAt) WriteAt(p []byte, off int64) (int, error) {
	n, err := t.out.WriteAt(p, off)
	if err == nil && t.hash != nil {
		t.hash.WriteAt(p, off)
	}
	return n, err
}

func copyRange(out io.WriterAt, name string, at int64, path string, from, size int64) error {
	in, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("video: copying into %s: %w", name, err)
	}
	defer in.Close()
	n, err := io.Copy(io.NewOffsetWriter(out, at), io.NewSectionReader(in, from, size))
	if err == nil && n != size {
		err = fmt.Errorf("%d of %d bytes", n, size)
	}
	if err != nil {
		return fmt.Errorf("video: copying %s into %s at %d: %w", filepath.Base(path), name, at, err)
	}
	return nil
}

// JoinMP4 is the parallel join done by one process: every segment's table read (as the rank
// that copies it does) and sent through its gather bytes, the layout planned, the header, the
// side file's bytes and every segment's bytes written at their offsets into out (created or
// truncated). side is WriteSide's file. The layout is the same however the segments are shared
// among ranks: each segment is its own piece.
func JoinMP4(ctx context.Context, segs []JoinSegment, times Timeline, side, out string) error {
	if len(segs) == 0 {
		return fmt.Errorf("video: joining into %s: no segments given", out)
	}
	s, err := ReadSide(side)
	if err != nil {
		return err
	}
	pieces := make([]*Piece, len(segs))
	tables := make([]PieceTable, len(segs))
	for k, seg := range segs {
		p, err := ReadSegment(seg, times)
		if err != nil {
			return err
		}
		pieces[k] = p
		// As a rank's tables travel to rank 0 in a gather: through their bytes.
		b, err := p.Table.MarshalBinary()
		if err != nil {
			return err
		}
		if err := tables[k].UnmarshalBinary(b); err != nil {
			return err
		}
	}
	l, err := PlanJoin(s, tables, pieces[0], times)
	if err != nil {
		return fmt.Errorf("%w: joining into %s", err, out)
	}
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("video: joining into %s: %w", out, err)
	}
	defer f.Close()
	if err := l.WriteHead(f, s, nil); err != nil {
		return err
	}
	for k, p := range pieces {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := CopyPiece(f, l.Offsets[k], p, nil); err != nil {
			return fmt.Errorf("%w (piece %d, of segment %s)", err, k, p.Path)
		}
	}
	// A full quota may be reported only at fsync or close (NFS, Lustre).
	if err := f.Sync(); err != nil {
		return fmt.Errorf("video: joining into %s: %w", out, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("video: joining into %s: %w", out, err)
	}
	return nil
}

// MarshalBinary encodes the table for a gather: timescale, stsd, then each sample's size,
// DTS, CTS and sync flag (offsets follow from the sizes).
func (t PieceTable) MarshalBinary() ([]byte, error) {
	b := binary.LittleEndian.AppendUint32(nil, t.Timescale)
	b = binary.AppendUvarint(b, uint64(len(t.Stsd)))
	b = append(b, t.Stsd...)
	b = binary.AppendUvarint(b, uint64(len(t.Chunks)))
	for _, n := range t.Chunks {
		b = binary.AppendUvarint(b, uint64(n))
	}
	b = binary.AppendUvarint(b, uint64(len(t.Samples)))
	for _, s := range t.Samples {
		b = binary.AppendUvarint(b, uint64(s.Size))
		b = binary.AppendVarint(b, s.DTS)
		b = binary.AppendVarint(b, int64(s.CTS))
		if s.Sync {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	return b, nil
}

// UnmarshalBinary decodes MarshalBinary's bytes.
func (t *PieceTable) UnmarshalBinary(b []byte) error {
	bad := fmt.Errorf("video: a segment table of %d bytes is cut off", len(b))
	if len(b) < 4 {
		return bad
	}
	t.Timescale = binary.LittleEndian.Uint32(b)
	b = b[4:]
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return bad
	}
	t.Stsd = append([]byte{}, b[k:k+int(n)]...)
	b = b[k+int(n):]
	chunks, k := binary.Uvarint(b)
	if k <= 0 || chunks > uint64(len(b)) {
		return bad
	}
	b = b[k:]
	t.Chunks = make([]int, chunks)
	for i := range t.Chunks {
		c, k := binary.Uvarint(b)
		if k <= 0 {
			return bad
		}
		t.Chunks[i] = int(c)
		b = b[k:]
	}
	count, k := binary.Uvarint(b)
	if k <= 0 || count > uint64(len(b)) {
		return bad
	}
	b = b[k:]
	t.Samples = make([]mp4.Sample, count)
	var off int64
	for i := range t.Samples {
		size, k1 := binary.Uvarint(b)
		if k1 <= 0 {
			return bad
		}
		dts, k2 := binary.Varint(b[k1:])
		if k2 <= 0 {
			return bad
		}
		cts, k3 := binary.Varint(b[k1+k2:])
		if k3 <= 0 || len(b) < k1+k2+k3+1 {
			return bad
		}
		t.Samples[i] = mp4.Sample{Offset: off, Size: uint32(size), DTS: dts, CTS: int32(cts), Sync: b[k1+k2+k3] == 1}
		off += int64(size)
		b = b[k1+k2+k3+1:]
	}
	if len(b) != 0 {
		return fmt.Errorf("video: a segment table has %d bytes left over", len(b))
	}
	return nil
}
