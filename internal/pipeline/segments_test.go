package pipeline

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/spec"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// segmentClip is a 30-frame 64×48 clip with a keyframe every 7 frames, and a job that encodes
// it with ffv1 (lossless: a segment decodes to the very frames written to it). The clip is made
// and probed once a test binary; each test gets its own copy of the file and of the Info (a
// shallow one: the tests only read its slices).
func segmentClip(t *testing.T) (job.Config, *video.Info, video.FrameMap) {
	t.Helper()
	in := filepath.Join(t.TempDir(), "in.mp4")
	segmentClipMu.Lock()
	defer segmentClipMu.Unlock()
	if segmentClipInfo == nil {
		cmd := exec.Command(testenv.Tool(t, "ffmpeg"), "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25",
			"-frames:v", "30", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-g", "7", in)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("making the clip: %v\n%s", err, out)
		}
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		info, err := video.Probe(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		segmentClipData, segmentClipInfo = data, info
	} else if err := os.WriteFile(in, segmentClipData, 0o644); err != nil {
		t.Fatal(err)
	}
	info := *segmentClipInfo
	info.Path = in
	cfg := job.Default()
	cfg.Processors = []string{job.ProcessorNone}
	cfg.OutputVideoEncoder = "ffv1"
	cfg.TargetPath = in
	m, err := outputMap(cfg, &info)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, &info, m
}

var (
	segmentClipMu   sync.Mutex
	segmentClipData []byte      // the clip's bytes
	segmentClipInfo *video.Info // its probe; nil until made
)

// readAll is every frame of a FrameSource until io.EOF.
func readAll(t *testing.T, src FrameSource, size int) [][]byte {
	t.Helper()
	var frames [][]byte
	for {
		buf := make([]byte, size)
		if err := src.Next(buf); err == io.EOF {
			return frames
		} else if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, buf)
	}
}

// marked is the face a markWorker "finds": a property of the frame's pixels alone, so the
// test knows which frames of a segment have one without the worker knowing frame numbers.
func marked(pix []byte) bool {
	sum := sha256.Sum256(pix)
	return sum[0]%3 == 0
}

// markWorker selects a "face" in the frames marked says, measures it (identityOf), and fails
// on its call number failAt (counted from 0; -1: never): with one worker, that is the frame of
// the run at that index.
type markWorker struct {
	last   bool
	id     lustre.IdentitySums
	calls  int
	failAt int
}

func (w *markWorker) Process(img *raster.Image) error {
	defer func() { w.calls++ }()
	if w.calls == w.failAt {
		return errors.New("boom")
	}
	w.last, w.id = marked(img.Bytes()), identityOf(img.Bytes())
	return nil
}

func (w *markWorker) facedIn(int) bool                   { return w.last }
func (w *markWorker) identityIn(int) lustre.IdentitySums { return w.id }

// identityOf is markWorker's identity measure of a frame: its marked face, with its first pixel
// byte as the similarity; a frame without one measures no face, in the same recognizer.
func identityOf(pix []byte) lustre.IdentitySums {
	s := lustre.IdentitySums{Recognizer: "test", Every: 1}
	if marked(pix) {
		s.Faces, s.After = 1, int64(pix[0])
	}
	return s
}

func segmentsOf(dir string, bounds ...int) []Segment {
	segs := make([]Segment, len(bounds)-1)
	for i := range segs {
		segs[i] = Segment{Start: bounds[i], End: bounds[i+1], Path: filepath.Join(dir, fmt.Sprintf(".seg-%d.part.mkv", i))}
	}
	return segs
}

// One Stream over a run of segments puts each frame, in order, into its own segment's file,
// each file complete when done is told of it, in segment order, with the frames of that
// segment in which the worker selected a face and the identity measure of its frames, not a
// running total.
func TestEncodeSegmentsRoutesFrames(t *testing.T) {
	cfg, info, m := segmentClip(t)
	ctx := context.Background()
	want := clipFrames(t, cfg, info, m)
	if len(want) != 30 {
		t.Fatalf("the clip decodes to %d frames, want 30", len(want))
	}
	segs := segmentsOf(t.TempDir(), 3, 10, 11, 30) // a run not at frame 0, a 1-frame segment
	src, err := OpenFrames(ctx, specOf(t, cfg, info), info, 3, 30)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var got []string
	infos := make([]*video.Info, len(segs))
	done := func(i, n, faces int, id *lustre.IdentitySums) error {
		infos[i] = segmentInfo(t, segs[i].Path) // complete: ffprobe reads it, every frame counted
		if id == nil {
			t.Fatalf("segment %d: no identity measure", i)
		}
		got = append(got, fmt.Sprintf("%d:%d:%d:%d:%s/%d/%d", i, n, faces, infos[i].Frames, id.Recognizer, id.Faces, id.After))
		return nil
	}
	if err := EncodeSegments(ctx, ctx, specOf(t, cfg, info), src, segs, []Worker{&markWorker{failAt: -1}}, nil, done); err != nil {
		t.Fatal(err)
	}
	var expect []string
	total := 0
	for i, s := range segs {
		faces := 0
		var id lustre.IdentitySums
		for _, f := range want[s.Start:s.End] {
			if marked(f) {
				faces++
			}
			id.Add(identityOf(f))
		}
		total += faces
		expect = append(expect, fmt.Sprintf("%d:%d:%d:%d:%s/%d/%d", i, s.Len(), faces, s.Len(), id.Recognizer, id.Faces, id.After))
	}
	if total == 0 || total == 27 {
		t.Fatalf("%d of the 27 frames are marked: the counts would not tell segments apart", total)
	}
	if strings.Join(got, " ") != strings.Join(expect, " ") {
		t.Fatalf("done was told (segment:frames:faces:frames in its file:identity) %v, want %v", got, expect)
	}
	for i, s := range segs {
		info := infos[i]
		dec, err := video.OpenDecoder(ctx, info, 0, info.Frames)
		if err != nil {
			t.Fatal(err)
		}
		frames := readAll(t, dec, info.FrameSize())
		dec.Close()
		for k, f := range frames {
			if string(f) != string(want[s.Start+k]) {
				t.Fatalf("segment [%d, %d): its frame %d is not the target's frame %d", s.Start, s.End, k, s.Start+k)
			}
		}
	}
}

// indexWorker notes the output frame numbers it is told it processes (frameIndexed).
type indexWorker struct {
	markWorker
	first int
	seen  []int
}

func (w *indexWorker) setFirstFrame(first int) { w.first = first }
func (w *indexWorker) setIndices(idx []int) {
	for _, i := range idx {
		w.seen = append(w.seen, w.first+i)
	}
}

// A worker is told the output's frame numbers (the identity measure's positions), counted from
// the output's first frame: a trimmed job's frame --trim-frame-start is output frame 0.
func TestEncodeSegmentsNumbersOutputFrames(t *testing.T) {
	cfg, info, _ := segmentClip(t)
	cfg.TrimFrameStart, cfg.TrimFrameEnd = 5, 20
	sp := specOf(t, cfg, info)
	ctx := context.Background()
	src, err := OpenFrames(ctx, sp, info, 8, 20) // a rank's run, not at the output's start
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	w := &indexWorker{markWorker: markWorker{failAt: -1}}
	segs := segmentsOf(t.TempDir(), 8, 14, 20)
	if err := EncodeSegments(ctx, ctx, sp, src, segs, []Worker{w}, nil, func(int, int, int, *lustre.IdentitySums) error { return nil }); err != nil {
		t.Fatal(err)
	}
	var want []int
	for f := 8 - 5; f < 20-5; f++ {
		want = append(want, f)
	}
	if fmt.Sprint(w.seen) != fmt.Sprint(want) {
		t.Errorf("the worker was told output frames %v, want %v (target frames 8–19 of a job trimmed to start at 5)", w.seen, want)
	}
}

func segmentInfo(t *testing.T, path string) *video.Info {
	t.Helper()
	info, err := video.Probe(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// A failure discards exactly the segments done has not taken (their files removed, the
// encoders ahead of them stopped) and names the segment it happened in: done's own error, or
// a worker's, with the frame numbered as in the target.
func TestEncodeSegmentsDiscardsUnaccepted(t *testing.T) {
	cfg, info, _ := segmentClip(t)
	ctx := context.Background()
	full := errors.New("disk full")
	for _, c := range []struct {
		name     string
		failDone int // done fails on this segment; -1: never
		failAt   int // the worker fails on this call; -1: never
		index    int // the segment named
		msg      string
	}{
		{"done", 1, -1, 1, "disk full"},
		{"worker", -1, 16, 2, "target " + cfg.TargetPath + ", frames [17, 30): frame 19: boom"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			segs := segmentsOf(dir, 3, 10, 17, 30)
			src, err := OpenFrames(ctx, specOf(t, cfg, info), info, 3, 30)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			accepted := 0
			done := func(i, n, faces int, _ *lustre.IdentitySums) error {
				if i == c.failDone {
					return full
				}
				accepted = i + 1
				return nil
			}
			err = EncodeSegments(ctx, ctx, specOf(t, cfg, info), src, segs, []Worker{&markWorker{failAt: c.failAt}}, nil, done)
			var se *SegmentError
			if !errors.As(err, &se) || se.Index != c.index || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %v, want a SegmentError naming segment %d and saying %q", err, c.index, c.msg)
			}
			if c.failDone >= 0 && !errors.Is(err, full) {
				t.Errorf("done's error %v is not wrapped", err)
			}
			if accepted > c.index {
				t.Errorf("done took segment %d, after the failure in segment %d", accepted-1, c.index)
			}
			for i, s := range segs {
				_, err := os.Stat(s.Path)
				if kept := err == nil; kept != (i < accepted) {
					t.Errorf("segment %d: file kept %v, want kept only if done took it (it took %d)", i, kept, accepted)
				}
			}
			left, _ := os.ReadDir(dir)
			if len(left) != accepted {
				t.Errorf("the folder holds %d files, want the %d segments done took", len(left), accepted)
			}
		})
	}
}

// countTo calls at once its count of written frames reaches n.
type countTo struct {
	count, n int
	at       func()
}

func (c *countTo) Add(k int) {
	if c.count += k; c.count == c.n {
		c.at()
	}
}

// hangEncoder makes the encoder of the segment at path one that never finishes: ffmpeg is run
// through a script that, for the file it is given as its descriptor 3 (video.CreateEncoder's),
// reads the frames and then sleeps instead of writing the file.
func hangEncoder(t *testing.T, path string) {
	t.Helper()
	real, err := exec.LookPath(video.FFmpeg)
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "ffmpeg")
	text := "#!/bin/sh\ncase \"$(readlink /proc/$$/fd/3)\" in " + path + ") cat >/dev/null; exec sleep 600;; esac\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(script, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	saved := video.FFmpeg
	video.FFmpeg = script
	t.Cleanup(func() { video.FFmpeg = saved })
}

// slowDecoderExit makes every decoder (ffmpeg writing to pipe:1) wait a second after its last
// frame before it exits, as a loaded node's can: a stop that comes meanwhile kills it.
func slowDecoderExit(t *testing.T) {
	t.Helper()
	real, err := exec.LookPath(video.FFmpeg)
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "ffmpeg")
	text := "#!/bin/sh\ncase \"$*\" in *pipe:1*) " + real + " \"$@\"; s=$?; sleep 1; exit $s;; esac\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(script, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	saved := video.FFmpeg
	video.FFmpeg = script
	t.Cleanup(func() { video.FFmpeg = saved })
}

// A stop, unlike a failure, keeps finished work: the stop comes once segments 0 and 1 are
// written (while done holds segment 0, so segment 1's encoder has not been closed), and segment
// 1 still reaches done, complete; only segment 2, being written, is discarded, and the error is
// the stop's. A stop that comes with the run's last frame (a rank finishing the last chunk of
// its run) keeps every segment, with no error, though it kills the decoder still exiting
// (slowDecoderExit). An encoder that does not finish (hangEncoder) holds the stop for
// stopGrace only: then it is killed and its segment discarded. A stop one frame short of a
// segment's end writes no frame after it, though the last is processed and waiting: that
// segment is discarded, whoever runs first once the stop is made.
func TestEncodeSegmentsStopKeepsComplete(t *testing.T) {
	cfg, info, _ := segmentClip(t)
	ctx := context.Background()
	errStop := errors.New("SIGUSR1")
	for _, c := range []struct {
		name  string
		hung  int // the segment whose encoder never finishes; -1: none
		keep  int // the segments done takes
		short int // frames short of segment keep's end the stop comes (0: at the kept ones' end)
	}{
		{"complete-segments-finish", -1, 2, 0},
		{"grace-runs-out", 1, 1, 0},
		{"stop-with-the-last-frame", -1, 3, 0},
		{"stop-one-frame-short", -1, 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			segs := segmentsOf(dir, 3, 10, 17, 30)
			if c.keep == len(segs) {
				slowDecoderExit(t)
			}
			if c.hung >= 0 {
				hangEncoder(t, segs[c.hung].Path)
				defer func(g time.Duration) { stopGrace = g }(stopGrace)
				stopGrace = 200 * time.Millisecond
			}
			// The decode ends with the stop, as a rank's does.
			stop, stopNow := context.WithCancelCause(ctx)
			defer stopNow(nil)
			src, err := OpenFrames(stop, specOf(t, cfg, info), info, 3, 30)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			written := &countTo{n: segs[c.keep-1].End - segs[0].Start, at: func() { stopNow(errStop) }} // the segments kept
			if c.hung >= 0 {
				written.n = segs[1].End - segs[0].Start
			}
			if c.short > 0 {
				written.n = segs[c.keep].End - segs[0].Start - c.short
			}
			var got []string
			done := func(i, n, faces int, _ *lustre.IdentitySums) error {
				if i == 0 {
					<-stop.Done()
				}
				got = append(got, fmt.Sprintf("%d:%d:%d", i, n, segmentInfo(t, segs[i].Path).Frames))
				return nil
			}
			err = EncodeSegments(ctx, stop, specOf(t, cfg, info), src, segs, []Worker{&markWorker{failAt: -1}}, written, done)
			var want []string
			for i := range c.keep {
				want = append(want, fmt.Sprintf("%d:%d:%d", i, segs[i].Len(), segs[i].Len()))
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("done was told (segment:frames:frames in its file) %v, want %v", got, want)
			}
			var se *SegmentError
			if c.keep == len(segs) && err != nil {
				t.Fatalf("error %v, want none: every segment was complete when the stop came", err)
			} else if c.keep < len(segs) && (!errors.As(err, &se) || se.Index != c.keep || !errors.Is(err, errStop)) {
				t.Fatalf("error %v, want the stop's, naming segment %d", err, c.keep)
			}
			if c.hung >= 0 && !errors.Is(err, errGraceOver) {
				t.Errorf("error %v does not say the grace ran out", err)
			}
			for i, s := range segs {
				if _, err := os.Lstat(s.Path); (err == nil) != (i < c.keep) {
					t.Errorf("segment %d: file kept %v, want kept only if done took it (it took %d)", i, err == nil, c.keep)
				}
			}
			if left, _ := os.ReadDir(dir); len(left) != c.keep {
				t.Errorf("the folder holds %d files, want the %d segments done took", len(left), c.keep)
			}
		})
	}
}

// memSender is a FrameSender that keeps what it is given.
type memSender struct {
	frames []string
	faces  int
	id     lustre.IdentitySums
	closed bool
}

func (s *memSender) Write(frame []byte) error {
	return s.WriteMarked(frame, false, lustre.IdentitySums{})
}
func (s *memSender) WriteMarked(frame []byte, faced bool, id lustre.IdentitySums) error {
	s.frames = append(s.frames, string(frame))
	if faced {
		s.faces++
	}
	s.id.Add(id)
	return nil
}
func (s *memSender) Close() error { s.closed = true; return nil }

// A run whose first chunk another rank encodes and whose last chunk this rank encodes with
// frames other ranks processed: the first part's frames go, marked, to its sender (closed once
// complete, done told of it), and the last segment's file holds this rank's frames then the
// ones Rest writes, its counts covering both.
func TestEncodeSegmentsSharedChunks(t *testing.T) {
	cfg, info, m := segmentClip(t)
	ctx := context.Background()
	want := clipFrames(t, cfg, info, m)
	segs := segmentsOf(t.TempDir(), 3, 10, 11, 30)
	send := &memSender{}
	segs[0].Send = send
	segs[2].Local = 20
	segs[2].Rest = func(ctx context.Context, w MarkedSink) error {
		for _, f := range want[20:30] {
			if err := w.WriteMarked(f, marked(f), identityOf(f)); err != nil {
				return err
			}
		}
		return nil
	}
	src, err := OpenFrames(ctx, specOf(t, cfg, info), info, 3, 20) // this rank decodes its own frames only
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var got []string
	done := func(i, n, faces int, id *lustre.IdentitySums) error {
		if i == 0 && !send.closed {
			t.Fatal("the part sent was told done before its sender was closed")
		}
		got = append(got, fmt.Sprintf("%d:%d:%d:%d", i, n, faces, id.After))
		return nil
	}
	if err := EncodeSegments(ctx, ctx, specOf(t, cfg, info), src, segs, []Worker{&markWorker{failAt: -1}}, nil, done); err != nil {
		t.Fatal(err)
	}
	var expect []string
	for i, s := range segs {
		faces := 0
		var id lustre.IdentitySums
		for _, f := range want[s.Start:s.End] {
			if marked(f) {
				faces++
			}
			id.Add(identityOf(f))
		}
		expect = append(expect, fmt.Sprintf("%d:%d:%d:%d", i, s.Len(), faces, id.After))
		if i == 0 && (send.faces != faces || send.id != id) {
			t.Errorf("sender got %d faces, identity %+v; want %d, %+v", send.faces, send.id, faces, id)
		}
	}
	if strings.Join(got, " ") != strings.Join(expect, " ") {
		t.Fatalf("done was told (segment:frames:faces:identity) %v, want %v", got, expect)
	}
	for k, f := range send.frames {
		if f != string(want[3+k]) {
			t.Fatalf("the sender's frame %d is not the target's frame %d", k, 3+k)
		}
	}
	if len(send.frames) != 7 {
		t.Fatalf("the sender got %d frames, want 7", len(send.frames))
	}
	if _, err := os.Stat(segs[0].Path); err == nil {
		t.Errorf("a part sent left a file %s", segs[0].Path)
	}
	for _, i := range []int{1, 2} {
		s := segs[i]
		info := segmentInfo(t, s.Path)
		dec, err := video.OpenDecoder(ctx, info, 0, info.Frames)
		if err != nil {
			t.Fatal(err)
		}
		frames := readAll(t, dec, info.FrameSize())
		dec.Close()
		if len(frames) != s.Len() {
			t.Fatalf("segment [%d, %d) holds %d frames", s.Start, s.End, len(frames))
		}
		for k, f := range frames {
			if string(f) != string(want[s.Start+k]) {
				t.Fatalf("segment [%d, %d): its frame %d is not the target's frame %d", s.Start, s.End, k, s.Start+k)
			}
		}
	}
}

// A stop while the last segment waits for the frames other ranks send discards it (no file,
// done not told) but keeps the complete ones; EncodeSegments says the stop.
func TestEncodeSegmentsStopWhileWaitingForRest(t *testing.T) {
	cfg, info, _ := segmentClip(t)
	ctx := context.Background()
	stop, endStop := context.WithCancelCause(ctx)
	defer endStop(nil)
	segs := segmentsOf(t.TempDir(), 0, 10, 20)
	segs[1].Local = 15
	why := errors.New("the job's stop")
	segs[1].Rest = func(feed context.Context, w MarkedSink) error {
		endStop(why) // the stop comes while the others' frames are awaited
		<-feed.Done()
		return context.Cause(feed)
	}
	src, err := OpenFrames(ctx, specOf(t, cfg, info), info, 0, 15)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var told []int
	err = EncodeSegments(ctx, stop, specOf(t, cfg, info), src, segs, []Worker{&markWorker{failAt: -1}}, nil, func(i, n, faces int, id *lustre.IdentitySums) error {
		told = append(told, i)
		return nil
	})
	var se *SegmentError
	if !errors.As(err, &se) || se.Index != 1 || !errors.Is(err, why) {
		t.Fatalf("EncodeSegments: %v, want segment 1's error saying the stop", err)
	}
	if fmt.Sprint(told) != "[0]" {
		t.Errorf("done was told of segments %v, want [0]", told)
	}
	if _, err := os.Stat(segs[1].Path); err == nil {
		t.Errorf("the discarded segment's file %s is left", segs[1].Path)
	}
}

// clipFrames is every frame of segmentClip's clip, decoded.
func clipFrames(t *testing.T, cfg job.Config, info *video.Info, m video.FrameMap) [][]byte {
	t.Helper()
	src, err := OpenFrames(context.Background(), specOf(t, cfg, info), info, 0, 30)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	return readAll(t, upTo{src, 30}, info.FrameSize())
}

// specOf is the spec Resolve gives cfg on the target of info.
func specOf(tb testing.TB, cfg job.Config, info *video.Info) *spec.Spec {
	tb.Helper()
	s, err := spec.Resolve(cfg, info)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// outputMap is the output's frame map Resolve gives cfg on the target of info.
func outputMap(cfg job.Config, info *video.Info) (video.FrameMap, error) {
	s, err := spec.Resolve(cfg, info)
	if err != nil {
		return video.FrameMap{}, err
	}
	return s.Map, nil
}
