package video

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// SegmentExt is the container of the segments of an output ffmpeg joins (Join), as the
// extension of their paths (OpenEncoder's muxer follows it, see muxerFor): NUT, which holds every
// encoder we offer and keeps each frame's time in the target's own time base (Matroska, before,
// rounded every time to its millisecond clock). An output joined in parallel has MP4 segments
// (MP4SegmentExt). SegmentExtFor chooses; the job folder's segment names (lustre), the output
// check's segment and the resume fingerprint (SegmentFormat) all follow it.
const SegmentExt = ".nut"

// MP4SegmentExt is the container of the segments of an output joined in parallel
// (ParallelJoin): MP4 whose video track counts in the target's time base, so that the join reads
// each segment's index and copies its sample bytes as they are, with no ffmpeg at the join.
const MP4SegmentExt = ".mp4"

// SegmentExts is every container segments are written in: the job folder's layout (lustre)
// matches them all.
var SegmentExts = []string{SegmentExt, MP4SegmentExt}

// SegmentExtFor is the container of the segments of out, encoded by encoder on the output
// timeline times: MP4 when out is joined in parallel (ParallelJoin), NUT otherwise.
func SegmentExtFor(out, encoder string, times Timeline) string {
	if ok, _ := ParallelJoin(out, encoder, times); ok {
		return MP4SegmentExt
	}
	return SegmentExt
}

// SegmentFormat names how segments of the container ext are written, for the resume
// fingerprint: a job folder of another format (seg-*.mkv, whose clock rounded the frame times;
// NUT segments of an output now joined from MP4 ones) is not joined with this one's.
func SegmentFormat(ext string) string {
	if ext == MP4SegmentExt {
		return muxerFor(ext) + ", its video track's clock the target's time base, read by the parallel join"
	}
	return muxerFor(ext) + ", stamped with the output's frame times in the target's time base"
}

// DefaultQuality is FaceFusion's default output_video_quality.
const DefaultQuality = 80

// EncodeOptions says how a segment is encoded. Encoder names ffmpeg's encoder: libx264,
// libx265 and ffv1 are understood; any other name is passed through with its own defaults.
type EncodeOptions struct {
	Encoder       string   // default libx264
	Quality       int      // 0–100, FaceFusion's output_video_quality (mapped to CRF/CQ per encoder)
	Preset        string   // x264/x265 preset (ultrafast … veryslow); empty: the encoder's default
	FPS           Rational // required
	Width, Height int      // required: the size of the output's frames
	PixFmt        string   // empty: see ChosenPixFmt
	// FrameWidth×FrameHeight is the size of the frames written, when ffmpeg scales them to
	// Width×Height (bicubic, as FaceFusion's `-s` does); 0: Width×Height.
	FrameWidth, FrameHeight int
	// Times are the output's frame times; the encoder stamps the frames it is given with
	// Times.At(First), Times.At(First+1), … so a segment's frames keep their exact times, a
	// variable rate included. The zero Timeline spaces the frames evenly at FPS.
	Times Timeline
	First int
}

// timeline is o.Times, or frames evenly spaced at o.FPS.
func (o EncodeOptions) timeline() Timeline {
	if o.Times.Valid() {
		return o.Times
	}
	return evenTimes(o.FPS, 0)
}

// FrameSize is the byte size of one rgb24 frame Write takes.
func (o EncodeOptions) FrameSize() int {
	w, h := o.frameDims()
	return w * h * 3
}

func (o EncodeOptions) frameDims() (int, int) {
	if o.FrameWidth > 0 && o.FrameHeight > 0 {
		return o.FrameWidth, o.FrameHeight
	}
	return o.Width, o.Height
}

// qualityArgs maps FaceFusion's 0–100 quality to the encoder's own scale as its ffmpeg_builder
// does: numpy.round(numpy.interp(q, [0, 100], [worst, 0])), and numpy rounds halves to even.
func qualityArgs(encoder string, quality int) []string {
	scale := func(worst float64) string {
		return strconv.Itoa(int(math.RoundToEven(numpyInterp(quality, worst, 0))))
	}
	switch encoder {
	case "libx264", "libx264rgb", "libx265":
		return []string{"-crf", scale(51)}
	case "libvpx-vp9":
		return []string{"-crf", scale(63)}
	case "h264_nvenc", "hevc_nvenc":
		return []string{"-cq", scale(51)}
	case "h264_qsv", "hevc_qsv":
		return []string{"-qp", scale(51)}
	}
	return nil // ffv1 is lossless; unknown encoders keep their defaults
}

func presetArgs(encoder, preset string) []string {
	if preset == "" {
		return nil
	}
	switch encoder {
	case "libx264", "libx264rgb", "libx265":
		return []string{"-preset", preset}
	case "h264_nvenc", "hevc_nvenc":
		switch preset {
		case "ultrafast", "superfast", "veryfast", "faster", "fast":
			return []string{"-preset", "fast"}
		case "slow", "slower", "veryslow":
			return []string{"-preset", "slow"}
		}
		return []string{"-preset", "medium"}
	}
	return nil
}

// defaultPixFmt is yuv420p where it plays everywhere, except where x264 and x265 cannot store
// it: 4:2:0 halves both dimensions, and they refuse an odd width or height. yuv444p keeps the
// target's size and every pixel (High 4:4:4 / Main 4:4:4, which some players, browsers among
// them, do not play); one pixel of padding would have changed the output's size instead.
// VP9 and NVENC are left at yuv420p: the output check before the first frame reports a size
// they refuse.
func defaultPixFmt(encoder string, width, height int) string {
	switch encoder {
	case "libx264", "libx265":
		if oddSize(width, height) {
			return "yuv444p"
		}
		return "yuv420p"
	case "libvpx-vp9", "h264_nvenc", "hevc_nvenc":
		return "yuv420p"
	case "ffv1":
		// Planar RGB: rgb24 in, the same bytes out.
		return "gbrp"
	}
	return ""
}

// EncoderThreads is the thread count of an encoder whose bytes depend on it, and ok: x264 and
// x265 split the work by frames, which decides what each frame may reference, and both write
// the count into the stream. Were it the rank's CPU budget, a 1-rank and a 3-rank run, or two
// nodes, would encode one segment to other bytes; it follows the output's height alone, one
// thread per 180 rows (at least 2, at most 16: 480p 3, 720p 4, 1080p 6, 2160p 12), so every
// rank encodes the same segment to the same bytes. Other encoders (ffv1's bytes do not depend
// on it) follow the rank's budget.
func EncoderThreads(encoder string, height int) (n int, ok bool) {
	switch encoder {
	case "libx264", "libx264rgb", "libx265":
		return min(16, max(2, (height+90)/180)), true
	}
	return 0, false
}

// encoderThreadArgs is the encoder's -threads (EncoderThreads, else the rank's budget) and the
// filter graph's -filter_threads (the rank's budget: scaling gives the same bytes for any count).
func encoderThreadArgs(encoder string, height int) []string {
	budget := threadArgs()
	n, ok := EncoderThreads(encoder, height)
	if !ok {
		return budget
	}
	args := []string{"-threads", strconv.Itoa(n)}
	for i := 0; i+1 < len(budget); i += 2 {
		if budget[i] == "-filter_threads" {
			args = append(args, budget[i:i+2]...)
		}
	}
	return args
}

// encodeArgs is the whole ffmpeg command line for OpenEncoder.
func encodeArgs(path string, opt EncodeOptions) []string {
	fw, fh := opt.frameDims()
	// The frames come in NUT (nutWriter), each with its time; the encoder keeps the time base
	// (-enc_time_base) and every time (passthrough), and is told the nominal rate (-r), which
	// H.264's and HEVC's headers carry, the same for every segment of the output.
	args := ffmpegArgs(
		"-f", "nut", "-i", "pipe:0",
		"-map", "0:v:0", "-fps_mode", "passthrough",
		"-r", opt.FPS.String(), "-enc_time_base", opt.timeline().TimeBase.String(),
		"-c:v", opt.Encoder)
	args = append(args, encoderThreadArgs(opt.Encoder, opt.Height)...)
	vf := colourFilter
	if fw != opt.Width || fh != opt.Height {
		// After the colour filter, as FaceFusion's -s scales after its -vf: the tagged
		// bt709 frames are what the scaler works on.
		vf += "," + scaleFilter(opt.Width, opt.Height)
	}
	args = append(args, "-vf", vf)
	args = append(args, qualityArgs(opt.Encoder, opt.Quality)...)
	args = append(args, presetArgs(opt.Encoder, opt.Preset)...)
	if opt.Encoder == "libx264" && opt.timeline().Step > 0 {
		// Evenly spaced frames: x264 otherwise takes its stream's timing (the VUI) from the
		// time base, and a 29.97 fps target's 1/30000 would read as 30000 fps to a tool that
		// goes by the stream; force-cfr takes it from the nominal rate (-r). The frames' times
		// are still the ones the NUT input gives.
		args = append(args, "-x264-params", "force-cfr=1")
	}
	if opt.Encoder == "libx265" {
		params := "log-level=error"
		if n, ok := EncoderThreads(opt.Encoder, opt.Height); ok {
			// x265's thread pool is the node's CPUs unless told, and its size changes the bytes.
			params += ":pools=" + strconv.Itoa(n) + ":frame-threads=" + strconv.Itoa(max(1, n/2))
		}
		args = append(args, "-x265-params", params)
	}
	if opt.PixFmt != "" {
		args = append(args, "-pix_fmt", opt.PixFmt)
	}
	m := muxerFor(path)
	if (m == "mp4" || m == "mov") && opt.Encoder == "libx265" {
		// Apple players want the hvc1 tag for HEVC in MP4, as FaceFusion sets it.
		args = append(args, "-tag:v", "hvc1")
	}
	if tb := opt.timeline().TimeBase; (m == "mp4" || m == "mov") && tb.Num == 1 {
		// The track counts in the target's time base, as the parallel join reads a segment's
		// times (the muxer's own choice would round a VFR target's); bitexact: the same bytes
		// from any ffmpeg build of one version.
		args = append(args, "-video_track_timescale", strconv.Itoa(tb.Den), "-fflags", "+bitexact")
	}
	return append(args, outputArgs(path, false)...)
}

// colourFilter is FaceFusion's convert_color_space('bt709'), on every video it writes: YUV
// output converted with the BT.709 matrix in limited range, and the stream tagged BT.709. It
// also decides how an up-scale rounds (the scaler works in the frames' tagged colour space);
// RGB output at the frames' own size keeps every byte.
const colourFilter = "scale=out_color_matrix=bt709:out_range=tv,setparams=colorspace=bt709:color_primaries=bt709:color_trc=bt709"

// Encoder feeds rgb24 frames to ffmpeg's stdin and writes a video-only file.
type Encoder struct {
	ctx       context.Context
	path      string
	frameSize int
	cmd       *exec.Cmd
	in        io.WriteCloser
	nut       *nutWriter
	times     Timeline
	first     int
	tail      *stderrTail
	written   int
	closed    bool
	err       error
}

// ChosenEncoder is the encoder OpenEncoder runs for o: segments of one output must all come
// from the same one, so the resume fingerprint compares this, not the setting.
func (o EncodeOptions) ChosenEncoder() string {
	if o.Encoder == "" {
		return "libx264"
	}
	return o.Encoder
}

func oddSize(width, height int) bool { return width%2 != 0 || height%2 != 0 }

// ChosenPixFmt is the pixel format OpenEncoder writes for o: o.PixFmt, else the encoder's
// default for o's frame size (see defaultPixFmt).
func (o EncodeOptions) ChosenPixFmt() string {
	if o.PixFmt != "" {
		return o.PixFmt
	}
	return defaultPixFmt(o.ChosenEncoder(), o.Width, o.Height)
}

// OpenEncoder starts ffmpeg writing path (which may carry a .tmp suffix for the caller's
// rename; the container is chosen from the extension before it).
func OpenEncoder(ctx context.Context, path string, opt EncodeOptions) (*Encoder, error) {
	return openEncoder(ctx, path, nil, opt)
}

// CreateEncoder is OpenEncoder into path, created here as a new file (O_EXCL, never through
// a link) that ffmpeg writes through its descriptor: a link put at the name, before or while
// it runs, is never followed. A regular file of the running user's already there (a temp
// segment a failed try left) is replaced; anything else there is refused.
func CreateEncoder(ctx context.Context, path string, opt EncodeOptions) (*Encoder, error) {
	f, err := createNew(path)
	if err != nil {
		return nil, fault.AsNoRoom(fmt.Errorf("video: encoding %s: %w", path, err), filepath.Dir(path))
	}
	defer f.Close() // ffmpeg has its own copy once started
	e, err := openEncoder(ctx, path, f, opt)
	if err != nil {
		if fst, ferr := f.Stat(); ferr == nil {
			if lst, lerr := os.Lstat(path); lerr == nil && os.SameFile(fst, lst) {
				os.Remove(path) // the file made just now
			}
		}
	}
	return e, err
}

// createNew creates path exclusively, after removing a regular file of the running user's
// there (never a link, never another user's file).
func createNew(path string) (*os.File, error) {
	const flags = os.O_WRONLY | os.O_CREATE | os.O_EXCL | syscall.O_NOFOLLOW
	f, err := os.OpenFile(path, flags, 0o644)
	if !errors.Is(err, os.ErrExist) {
		return f, err
	}
	st, lerr := os.Lstat(path)
	if lerr != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || !safefs.Mine(st) {
		return nil, fmt.Errorf("%s is in the way (%s facefusion did not make): it is left alone; make sure no one else can write into %s", path, safefs.KindOf(st.Mode()), filepath.Dir(path))
	}
	if err := os.Remove(path); err != nil {
		return nil, err
	}
	return os.OpenFile(path, flags, 0o644)
}

func openEncoder(ctx context.Context, path string, out *os.File, opt EncodeOptions) (*Encoder, error) {
	opt.Encoder = opt.ChosenEncoder()
	opt.PixFmt = opt.ChosenPixFmt()
	if opt.Width <= 0 || opt.Height <= 0 || !opt.FPS.Valid() {
		return nil, fmt.Errorf("video: encoding %s needs a frame size and rate, got %dx%d at %s", path, opt.Width, opt.Height, opt.FPS)
	}
	if x26x := opt.Encoder == "libx264" || opt.Encoder == "libx265"; x26x && opt.PixFmt == "yuv420p" && oddSize(opt.Width, opt.Height) {
		return nil, fmt.Errorf("video: encoding %s: %s cannot store yuv420p at an odd frame size (%dx%d): leave the pixel format empty for yuv444p", path, opt.Encoder, opt.Width, opt.Height)
	}
	args := encodeArgs(path, opt)
	if out != nil {
		if muxerFor(path) == "" {
			return nil, fmt.Errorf("video: encoding %s: no container known for its extension", path)
		}
		args[len(args)-1] = mediaPath(fdOutput) // outputArgs' last; its -f names the container
	}
	cmd, tail := shielded(ctx, FFmpeg, args)
	if out != nil {
		cmd.ExtraFiles = []*os.File{out}
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("video: encoding %s: %v", path, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("video: encoding %s: %w", path, exitError(ctx, FFmpeg, err, tail))
	}
	e := &Encoder{ctx: ctx, path: path, frameSize: opt.FrameSize(), cmd: cmd, in: in, tail: tail, times: opt.timeline(), first: opt.First}
	fw, fh := opt.frameDims()
	if e.nut, err = newNUTWriter(in, fw, fh, e.times.TimeBase); err != nil {
		e.closed = true
		e.err = fmt.Errorf("video: encoding %s: %w", path, e.finish())
		return nil, e.err
	}
	return e, nil
}

// Write sends one packed rgb24 frame of exactly FrameSize bytes.
func (e *Encoder) Write(frame []byte) error {
	if e.err != nil {
		return e.err
	}
	if len(frame) != e.frameSize {
		return fmt.Errorf("video: encoding %s: frame is %d bytes, want %d", e.path, len(frame), e.frameSize)
	}
	n := e.first + e.written
	if e.times.Step == 0 && n >= len(e.times.PTS) {
		return fmt.Errorf("video: encoding %s: frame %d is past the %d frame times of the output", e.path, n, len(e.times.PTS))
	}
	if err := e.nut.WriteFrame(e.times.At(n), frame); err != nil {
		// ffmpeg is gone (a bad option, a full disk): its stderr says why, not the broken pipe.
		e.closed = true
		e.err = fault.AsNoRoom(fmt.Errorf("video: encoding %s failed at frame %d: %w", e.path, e.written, e.finish()), filepath.Dir(e.path))
		return e.err
	}
	e.written++
	return nil
}

// Frames is how many frames were written.
func (e *Encoder) Frames() int { return e.written }

func (e *Encoder) finish() error {
	_ = e.in.Close()
	if err := e.cmd.Wait(); err != nil {
		return exitError(e.ctx, FFmpeg, err, e.tail)
	}
	return fmt.Errorf("ffmpeg exited early without a message")
}

// Close ends the stream and waits for ffmpeg to finish the file. ffmpeg exits 0 after it
// failed to write the file's end ("Error writing trailer" on a full disk): its words are
// trusted over its exit code, so that a cut file is never taken for a finished one. A full
// file system or quota is the environment's failure (fault.AsNoRoom).
func (e *Encoder) Close() error {
	if e.closed {
		return e.err
	}
	e.closed = true
	_ = e.in.Close()
	if err := e.cmd.Wait(); err != nil {
		e.err = fmt.Errorf("video: encoding %s (%d frames): %w", e.path, e.written, exitError(e.ctx, FFmpeg, err, e.tail))
	} else if said := e.tail.String(); writeFailed(said) {
		e.err = fault.RoomSaid(fmt.Errorf("video: encoding %s (%d frames): ffmpeg exited 0 but did not write it all: %s", e.path, e.written, said), said)
	}
	e.err = fault.AsNoRoom(e.err, filepath.Dir(e.path))
	return e.err
}
