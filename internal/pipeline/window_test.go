package pipeline

import (
	"context"
	"encoding/binary"
	"errors"
	"image"
	"io"
	"math"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// rangeSource yields frames [i, n) of a numbered video: bytes 0–1 the frame number.
type rangeSource struct{ i, n int }

func (s *rangeSource) Next(buf []byte) error {
	if s.i == s.n {
		return io.EOF
	}
	clear(buf)
	binary.LittleEndian.PutUint16(buf, uint16(s.i))
	s.i++
	return nil
}

// trackWorker "finds" in frame f one face whose position is a function of f plus noise, taking a
// random time so that frames finish out of order; Apply writes the smoothed box's corner and a
// landmark into the frame (bytes 8–40) and counts the frame's processing in byte 2.
type trackWorker struct {
	rng    *rand.Rand
	failAt int // a frame whose analysis fails; −1: none
	hits   []bool
}

func trackFace(f int) face.Face {
	noise := math.Sin(float64(f)*12.9898) * 43758.5453
	noise -= math.Floor(noise) // in [0, 1): a fixed function of the frame
	// Moving, then still from frame 30 (a still face's wider window then reaches 2K frames).
	x := 100 + 2*float64(min(f, 30)) + noise
	var fc face.Face
	fc.Box = geom.Rect{X0: x, Y0: 50, X1: x + 80, Y1: 130}
	for k := range fc.Landmarks {
		fc.Landmarks[k] = geom.Pt{X: x + float64(k), Y: 60 + noise}
	}
	return fc
}

func (w *trackWorker) Process(*raster.Image) error { return errors.New("not used") }
func (w *trackWorker) BatchSize() int              { return 3 }
func (w *trackWorker) ProcessBatch([]*raster.Image) error {
	return errors.New("not used")
}
func (w *trackWorker) facedIn(i int) bool { return w.hits[i] }

func (w *trackWorker) Analyse(img *raster.Image, dst []face.Face) ([]face.Face, error) {
	time.Sleep(time.Duration(w.rng.Intn(200)) * time.Microsecond)
	f := int(binary.LittleEndian.Uint16(img.Pix))
	if f == w.failAt {
		return dst, errors.New("analysis failed")
	}
	if f%10 == 7 { // no face: the windows stop there
		return dst, nil
	}
	return append(dst, trackFace(f)), nil
}

// FindCovers looks at the faces of every frame but those of 5 mod 11 and finds them covered in
// those of 0 or 1 mod 3; the cover's Rect names its frame, its pixel the smoothed box's corner.
func (w *trackWorker) FindCovers(img *raster.Image, faces []face.Face) {
	f := int(binary.LittleEndian.Uint16(img.Pix))
	for i := range faces {
		faces[i].Looked = f%11 != 5
		if f%3 != 2 {
			faces[i].Cover = &face.Cover{Rect: image.Rect(f, 0, f+1, 1), Pix: []uint8{byte(math.Round(64 * faces[i].Box.X0))}}
		}
	}
}

func (w *trackWorker) Apply(frames []*raster.Image, faces [][]face.Face) error {
	w.hits = w.hits[:0]
	for i, img := range frames {
		time.Sleep(time.Duration(w.rng.Intn(200)) * time.Microsecond)
		img.Pix[2]++
		w.hits = append(w.hits, len(faces[i]) > 0)
		if len(faces[i]) > 0 {
			binary.LittleEndian.PutUint64(img.Pix[8:], math.Float64bits(faces[i][0].Box.X0))
			binary.LittleEndian.PutUint64(img.Pix[16:], math.Float64bits(faces[i][0].Landmarks[30].X))
			binary.LittleEndian.PutUint64(img.Pix[24:], math.Float64bits(faces[i][0].Landmarks[30].Y))
			if v := faces[i][0].Votes; v != nil { // the vote: frames, covers, their frames' sum and pixels
				sum, pix := 0, byte(0)
				for _, c := range v.Covers {
					sum, pix = sum+c.Rect.Min.X, pix^c.Pix[0]
				}
				img.Pix[32], img.Pix[33], img.Pix[36] = byte(v.Frames), byte(len(v.Covers)), pix
				binary.LittleEndian.PutUint16(img.Pix[34:], uint16(sum))
			}
		}
	}
	return nil
}

type frameSink struct {
	got   [][]byte
	faced int
}

func (s *frameSink) Write(f []byte) error { return s.WriteMarked(f, false, lustre.IdentitySums{}) }
func (s *frameSink) WriteMarked(f []byte, faced bool, _ lustre.IdentitySums) error {
	s.got = append(s.got, append([]byte(nil), f[:40]...))
	if faced {
		s.faced++
	}
	return nil
}

func trackWorkers(n, failAt int) []Worker {
	ws := make([]Worker, n)
	for i := range ws {
		ws[i] = &trackWorker{rng: rand.New(rand.NewSource(int64(i))), failAt: failAt}
	}
	return ws
}

// A run of frames [start, end) of a video, decoded with its halo (K frames each side, clipped to
// the video), gives exactly the frames one run over the whole video gives there: the halo frames
// are analysed, not written, and every window is the video's own. The faces are smoothed (not
// the frame's own), each written frame is processed once, in order, and counted.
//
// The classic swap's covers are voted over Covers frames each side: every written frame's
// face carries the covers of its window, the halo's included.
func TestStreamWindowHaloMatchesWholeVideo(t *testing.T) {
	const n, k, covers = 60, 4, 3
	for _, still := range []int{0, 2 * k} { // the wider window of a still face: its halo
		haloMatchesWholeVideo(t, n, k, still, covers)
	}
}

func haloMatchesWholeVideo(t *testing.T, n, k, still, covers int) {
	whole := &frameSink{}
	if got, err := StreamWindow(context.Background(), 8, 2, &rangeSource{0, n}, whole, trackWorkers(3, -1), nil, Window{K: k, Still: still, Covers: covers, Count: n}); err != nil || got != n {
		t.Fatalf("whole video: %d frames, %v", got, err)
	}
	// Frame 40's window, 37..43, stops at 37 (no face); 38 was not looked at; 41 is uncovered.
	if b := whole.got[40]; b[32] != 5 || b[33] != 4 || binary.LittleEndian.Uint16(b[34:]) != 39+40+42+43 {
		t.Fatalf("frame 40's vote: %d frames, %d covers of frames summing to %d; want 5, 4, %d", b[32], b[33], binary.LittleEndian.Uint16(b[34:]), 39+40+42+43)
	}
	smoothed := 0
	for f, b := range whole.got {
		if int(binary.LittleEndian.Uint16(b)) != f || b[2] != 1 {
			t.Fatalf("position %d holds frame %d processed %d times", f, binary.LittleEndian.Uint16(b), b[2])
		}
		if f%10 != 7 && math.Float64frombits(binary.LittleEndian.Uint64(b[8:])) != trackFace(f).Box.X0 {
			smoothed++
		}
	}
	if smoothed < n/2 {
		t.Fatalf("only %d of %d frames have smoothed faces", smoothed, n)
	}
	if whole.faced != n-n/10 {
		t.Fatalf("%d frames marked with a face, want %d", whole.faced, n-n/10)
	}
	for _, r := range [][2]int{{0, 10}, {10, 20}, {13, 14}, {2, 58}, {50, 60}, {57, 60}, {55, 59}} {
		start, end := r[0], r[1]
		h := max(k, still) + covers // Window.halo
		from, to := max(start-h, 0), min(end+h, n)
		for _, workers := range []int{1, 3} {
			sink := &frameSink{}
			got, err := StreamWindow(context.Background(), 8, 2, &rangeSource{from, to}, sink, trackWorkers(workers, -1), nil, Window{K: k, Still: still, Covers: covers, Before: start - from, Count: end - start})
			if err != nil || got != end-start {
				t.Fatalf("frames [%d, %d): wrote %d, %v", start, end, got, err)
			}
			for i, b := range sink.got {
				if string(b) != string(whole.got[start+i]) {
					t.Fatalf("still %d, frames [%d, %d), %d workers: frame %d differs from the whole video's", still, start, end, workers, start+i)
				}
			}
		}
	}
}

// A failed analysis stops the stream with the frame named, in written frames' numbering, with
// covers voted over or not.
func TestStreamWindowFailure(t *testing.T) {
	for _, covers := range []int{0, 3} {
		_, err := StreamWindow(context.Background(), 8, 2, &rangeSource{0, 200}, &frameSink{}, trackWorkers(3, 120), nil, Window{K: 4, Covers: covers, Before: 2, Count: 190})
		var fe *FrameError
		if !errors.As(err, &fe) || fe.First != 118 {
			t.Fatalf("covers %d: error %v, want frame 118's", covers, err)
		}
	}
}

// Covers are voted over only where the window smooths the faces: under the face tracker (whose
// faces are not one for each face analysed) or with no window, the stream refuses to start.
func TestStreamWindowVotesOnlyOverSmoothedFaces(t *testing.T) {
	for _, win := range []Window{{K: 4, Track: 0.3, Covers: 3, Count: 40}, {Covers: 3, Count: 40}} {
		if _, err := StreamWindow(context.Background(), 8, 2, &rangeSource{0, 40}, &frameSink{}, trackWorkers(1, -1), nil, win); err == nil || !strings.Contains(err.Error(), "smoothed") {
			t.Fatalf("%+v: %v, want a refusal", win, err)
		}
	}
}

// cancellingSink cancels the stream's context after n frames, and takes every frame it is given.
type cancellingSink struct {
	frameSink
	n      int
	cancel context.CancelFunc
}

func (s *cancellingSink) WriteMarked(f []byte, faced bool, _ lustre.IdentitySums) error {
	if len(s.got) == s.n {
		s.cancel()
	}
	return s.frameSink.WriteMarked(f, faced, lustre.IdentitySums{})
}

// A stop (the context's end) ends the stream: it returns the context's error and the frames
// written, fewer than asked, in order; a sink's failure is returned as it is. With covers voted
// over or not.
func TestStreamWindowStops(t *testing.T) {
	for _, covers := range []int{0, 3} {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		sink := &cancellingSink{n: 50, cancel: cancel}
		n, err := StreamWindow(ctx, 8, 2, &rangeSource{0, 400}, sink, trackWorkers(3, -1), nil, Window{K: 4, Covers: covers, Before: 3, Count: 390})
		if !errors.Is(err, context.Canceled) || n < 50 || n >= 390 || n != len(sink.got) {
			t.Fatalf("covers %d: stopped after 50 frames: wrote %d (the sink took %d), %v", covers, n, len(sink.got), err)
		}
		for i, b := range sink.got {
			if int(binary.LittleEndian.Uint16(b)) != i+3 {
				t.Fatalf("covers %d: position %d holds frame %d", covers, i, binary.LittleEndian.Uint16(b))
			}
		}
		bad := errors.New("disk full")
		if _, err := StreamWindow(context.Background(), 8, 2, &rangeSource{0, 400}, failingSink{bad}, trackWorkers(3, -1), nil, Window{K: 4, Covers: covers, Count: 400}); !errors.Is(err, bad) {
			t.Fatalf("covers %d: a sink's failure: %v", covers, err)
		}
	}
}

type failingSink struct{ err error }

func (s failingSink) Write([]byte) error { return s.err }

// stillWorker "finds" trackFace(f) in frame f at once and applies nothing: a worker that
// allocates nothing per frame itself.
type stillWorker struct{}

func (stillWorker) Process(*raster.Image) error        { return errors.New("not used") }
func (stillWorker) BatchSize() int                     { return 3 }
func (stillWorker) ProcessBatch([]*raster.Image) error { return errors.New("not used") }
func (stillWorker) Analyse(img *raster.Image, dst []face.Face) ([]face.Face, error) {
	return append(dst, trackFace(int(binary.LittleEndian.Uint16(img.Pix)))), nil
}
func (stillWorker) Apply([]*raster.Image, [][]face.Face) error { return nil }

// StreamWindow reuses its frames, its history of faces and its smoothed faces: its allocations
// do not grow with the frames (one per frame would be 990 more for 1000 than for 10).
func TestStreamWindowDoesNotAllocatePerFrame(t *testing.T) {
	run := func(n int) float64 {
		src := &rangeSource{n: n}
		return testing.AllocsPerRun(3, func() {
			src.i = 0
			if _, err := StreamWindow(context.Background(), 64, 64, src, nopSink{}, []Worker{stillWorker{}, stillWorker{}}, nil, Window{K: 8, Count: n}); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := run(10), run(1000)
	t.Logf("allocations: %v for 10 frames, %v for 1000", small, large)
	if large > small+100 {
		t.Fatalf("allocations grow with frames: %v for 10 frames, %v for 1000", small, large)
	}
}
