package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/hugepage"
	"github.com/facefusion-hpc/facefusion/internal/progress"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/temporal"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// FrameSource yields packed RGB frames into buf; io.EOF after the last (video.Decoder).
type FrameSource interface {
	Next(buf []byte) error
}

// FrameSink takes packed RGB frames in order (video.Encoder).
type FrameSink interface {
	Write(frame []byte) error
}

// MarkedSink is a FrameSink that is also told, with each frame, whether a worker selected a
// face in it: the count then follows the frames (a segment's own), not a worker's running total.
type MarkedSink interface {
	FrameSink
	WriteMarked(frame []byte, faced bool, id lustre.IdentitySums) error
}

// FrameError is a worker's failure on frames [First, Last] of a Stream (numbered from 0).
type FrameError struct {
	First, Last int
	Err         error
}

func (e *FrameError) Error() string {
	if e.First == e.Last {
		return fmt.Sprintf("frame %d: %v", e.First, e.Err)
	}
	return fmt.Sprintf("frames %d–%d: %v", e.First, e.Last, e.Err)
}

func (e *FrameError) Unwrap() error { return e.Err }

// Worker changes one frame in place. Each worker is used by one goroutine.
type Worker interface {
	Process(img *raster.Image) error
}

// BatchWorker takes several consecutive frames at once, so that a model runs on the faces
// of all of them in one batch.
type BatchWorker interface {
	Worker
	BatchSize() int
	ProcessBatch(frames []*raster.Image) error
}

type slot struct {
	index int
	img   *raster.Image
	faced bool                // a worker selected a face in it (faceMarker)
	id    lustre.IdentitySums // its faces' identity measure (identityMarker)
	// StreamWindow's: the frame's faces as analysed, and as smoothed for the processors
	faces, smoothed []face.Face
	colours         temporal.Histogram // StreamWindow's: the frame's colours, for shot cuts
	// out is the buffer an upscaling worker writes the frame into (nil: none upscales), and
	// final what the sink writes: out once the worker handed it back, else img.
	out, final *raster.Image
}

// upscaler is a worker whose processors hand back frames FrameScale times the size they are
// given (frame_enhancer): the stream gives it a buffer of that size per frame (setOutputs)
// before each batch, and writes the frames it hands back (Frame).
type upscaler interface {
	FrameScale() int
	setOutputs(outs []*raster.Image)
	Frame(k int) *raster.Image
}

// upscalerOf is the first worker's upscaler when its frames grow (all a stream's workers run
// one job), else nil.
func upscalerOf(workers []Worker) (up upscaler, scale int) {
	for _, w := range workers {
		if u, ok := w.(upscaler); ok && u.FrameScale() > 1 {
			return u, u.FrameScale()
		}
	}
	return nil, 1
}

// upscaledBudget bounds the upscaled buffers a stream holds (upscaler): its frames in flight
// are cut to what fits, down to the fewest it needs (frames of 4K at ×4 are 398 MB each).
const upscaledBudget = 2 << 30

// upscaledDepth is a stream's depth with scale above 1: at most what upscaledBudget holds of
// w×h frames at scale, and at least least.
func upscaledDepth(depth, least, w, h, scale int) int {
	if scale <= 1 {
		return depth
	}
	return max(least, min(depth, upscaledBudget/(w*h*3*scale*scale)))
}

// outputs hands an upscaling worker the slots' output buffers before it processes them.
func outputs(wk Worker, slots []*slot, outs []*raster.Image) []*raster.Image {
	u, ok := wk.(upscaler)
	if !ok || u.FrameScale() == 1 {
		return outs
	}
	outs = outs[:0]
	for _, s := range slots {
		outs = append(outs, s.out)
	}
	u.setOutputs(outs)
	return outs
}

// finals notes, for each slot an upscaling worker processed, the frame it handed back.
func finals(wk Worker, slots []*slot) {
	if u, ok := wk.(upscaler); ok && u.FrameScale() > 1 {
		for k, s := range slots {
			s.final = u.Frame(k)
		}
	}
}

// newSlots is a stream's depth frame buffers of w×h, free: one allocation on 2 MiB pages (a
// 720p frame is 675 pages of 4 KiB, each a fault on its first write), and
// what gives their advice back once the stream is done.
// With scale above 1 each slot also has an output buffer scale times the size (upscaler).
func newSlots(depth, w, h, scale int) (chan *slot, hugepage.Release) {
	free := make(chan *slot, depth)
	n, ow, oh := w*h*3, w*scale, h*scale
	pix := make([]uint8, depth*n)
	release := hugepage.Advise(pix)
	var big []uint8
	var bigRelease hugepage.Release
	if scale > 1 {
		big = make([]uint8, depth*ow*oh*3)
		bigRelease = hugepage.Advise(big)
	}
	for i := range depth {
		s := &slot{img: raster.Wrap(pix[i*n:(i+1)*n:(i+1)*n], w, h)}
		if scale > 1 {
			m := ow * oh * 3
			s.out = raster.Wrap(big[i*m:(i+1)*m:(i+1)*m], ow, oh)
		}
		free <- s
	}
	if bigRelease == nil {
		return free, release
	}
	return free, func() { release(); bigRelease() }
}

// Stream moves every frame of src through the workers into sink, in order. Decoding,
// processing (one goroutine per worker) and encoding overlap; at most 2·workers+2 frames are
// in flight, in buffers allocated once. It returns the number of frames written.
func Stream(ctx context.Context, w, h int, src FrameSource, sink FrameSink, workers []Worker, prog progress.Counter) (int, error) {
	if len(workers) == 0 {
		return 0, errors.New("pipeline: no workers")
	}
	if prog == nil {
		prog = progress.Nop{}
	}
	batch := 1
	for _, w := range workers {
		if bw, ok := w.(BatchWorker); ok {
			batch = max(batch, bw.BatchSize())
		}
	}
	depth := 2*len(workers)*batch + 2
	_, scale := upscalerOf(workers)
	depth = upscaledDepth(depth, 2, w, h, scale) // any depth keeps the order: fewer frames wait
	free, release := newSlots(depth, w, h, scale)
	defer release()
	todo := make(chan *slot, depth)
	done := make(chan *slot, depth)
	g, ctx := errgroup.WithContext(ctx)

	g.Go(func() error { return decodeSlots(ctx, src, free, todo) })

	var working sync.WaitGroup // done closes when the last worker returns
	for _, wk := range workers {
		working.Add(1)
		g.Go(func() error { // process
			defer working.Done()
			size, process := 1, func(imgs []*raster.Image) error { return wk.Process(imgs[0]) }
			if bw, ok := wk.(BatchWorker); ok {
				size, process = bw.BatchSize(), bw.ProcessBatch
			}
			marks := marksOf(wk)
			var slots []*slot
			var imgs, outs []*raster.Image
			for s := range todo {
				slots, imgs = append(slots[:0], s), append(imgs[:0], s.img)
			more: // take what is already decoded, up to the batch size; never wait for more
				for len(slots) < size {
					select {
					case s2, ok := <-todo:
						if !ok {
							break more
						}
						slots, imgs = append(slots, s2), append(imgs, s2.img)
					default:
						break more
					}
				}
				marks.number(slots, 0)
				outs = outputs(wk, slots, outs)
				if err := process(imgs); err != nil {
					return &FrameError{First: slots[0].index, Last: slots[len(slots)-1].index, Err: err}
				}
				finals(wk, slots)
				marks.mark(slots)
				for _, s := range slots {
					select {
					case done <- s:
					case <-ctx.Done():
						return ctx.Err()
					}
				}
			}
			return nil
		})
	}
	go func() {
		working.Wait()
		close(done)
	}()

	written := 0
	g.Go(func() error { return writeInOrder(done, free, depth, 0, sink, prog, &written) })
	err := g.Wait()
	return written, err
}

// TemporalWorker is a BatchWorker whose analysis (detect, landmarks) and processing (select,
// processors) run apart, so that StreamWindow smooths each frame's faces over its neighbours'
// in between (modelWorker).
type TemporalWorker interface {
	BatchWorker
	// Analyse appends img's faces to dst.
	Analyse(img *raster.Image, dst []face.Face) ([]face.Face, error)
	// Apply processes frames[i] with faces[i] (which it may reorder), in place.
	Apply(frames []*raster.Image, faces [][]face.Face) error
}

// CoverWorker is a TemporalWorker that finds what covers each face of a frame as the target
// gave it, on its faces as the window smoothed them (face.Face.Cover and Looked), for a vote
// over the frames around it (Window.Covers).
type CoverWorker interface {
	FindCovers(img *raster.Image, faces []face.Face)
}

// Window is a StreamWindow's time window: each written frame's faces are smoothed over K
// decoded frames each side (temporal.Smoother), clipped to the decode's ends. Of the decoded
// frames, [Before, Before+Count) are processed and written; the others are halo frames, decoded
// and analysed only, so that a window reaches across a rank's or a chunk's border: the caller
// decodes K frames each side of what it writes, clipped to the job's frames, and then frame t's
// window is the job's frames t−K..t+K whatever range the rank runs.
//
// With Track above 0 the faces are not smoothed but tracked: FaceFusion's face tracker over
// the same window (temporal.Tracker, K its target_frame_amount, Track its face_tracker_score).
//
// Still above K widens the window for a face that holds still over all of it
// (temporal.Smoother.Still); the halo and the frames held are then Still each side.
//
// Covers above 0 votes each face's covers over that many frames each side
// (temporal.Smoother.Covers): the workers (CoverWorkers) find them on each frame once its faces
// are smoothed, and a frame is processed once the frames Covers after it have theirs, so the
// halo is Covers frames wider.
type Window struct {
	K, Still, Before, Count int
	Track                   float64
	Covers                  int
}

// reach is how many frames each side frame t's smoothing reaches.
func (w Window) reach() int { return max(w.K, w.Still) }

// halo is how many frames each side of the written ones the stream analyses.
func (w Window) halo() int { return w.reach() + w.Covers }

// StreamWindow is Stream with the faces of each frame smoothed over time: the workers analyse
// frames in any order; one goroutine takes them in frame order and releases frame t, its faces
// smoothed, once frame t+H is analysed (H = max(K, Still), the window's reach; with covers, once
// frames t+Covers have theirs found: a reach of H + Covers; or the decode ended); the workers
// process the released frames in any order; the sink writes them in order. Each worker's
// goroutine does every part, processing first (it frees frames). At most 2·workers·batch +
// halo + 2 frames are in flight, in buffers allocated once: the halo's more than Stream (at
// 1080p, 6 MB a frame: 96 MB at the default K = 8, H = 16; 114 MB with the classic swap's
// covers), and the faces of as many frames again (5.6 KB a face, the embedding most of it).
// Every frame written is counted by prog; halo frames are not. It returns the frames written.
func StreamWindow(ctx context.Context, w, h int, src FrameSource, sink FrameSink, workers []Worker, prog progress.Counter, win Window) (int, error) {
	if len(workers) == 0 {
		return 0, errors.New("pipeline: no workers")
	}
	if prog == nil {
		prog = progress.Nop{}
	}
	tws := make([]TemporalWorker, len(workers))
	batch := 1
	for i, wk := range workers {
		tw, ok := wk.(TemporalWorker)
		if !ok {
			return 0, fmt.Errorf("pipeline: worker %T does not analyse apart from processing: a time window needs it", wk)
		}
		tws[i] = tw
		batch = max(batch, tw.BatchSize())
		if _, ok := wk.(CoverWorker); win.Covers > 0 && !ok {
			return 0, fmt.Errorf("pipeline: worker %T finds no covers: a vote over them needs it", wk)
		}
	}
	if win.Covers > 0 && (win.Track > 0 || win.K <= 0) {
		// The tracker's faces are not one for each face analysed, and no window follows none.
		return 0, errors.New("pipeline: covers are voted over only where faces are smoothed")
	}
	depth := 2*len(workers)*batch + win.halo() + 2
	_, scale := upscalerOf(workers)
	// The window holds the frames of its reach each side of the one it releases, and each worker one.
	depth = upscaledDepth(depth, min(depth, 2*win.halo()+2+len(workers)*batch), w, h, scale)
	free, release := newSlots(depth, w, h, scale)
	defer release()
	g, ctx := errgroup.WithContext(ctx)
	// Every channel holds every slot: no send blocks.
	ws := &windowStream{ctx: ctx, win: win, depth: depth, free: free, st: statsOf(workers),
		todo: make(chan *slot, depth), analysed: make(chan *slot, depth), find: make(chan *slot, depth), found: make(chan *slot, depth),
		ready: make(chan *slot, depth), done: make(chan *slot, depth)}

	g.Go(func() error { return decodeSlots(ctx, src, free, ws.todo) })

	var analysing, working sync.WaitGroup // analysed closes when no worker analyses, done when none works
	for _, wk := range tws {
		analysing.Add(1)
		working.Add(1)
		g.Go(func() error {
			defer working.Done()
			return ws.work(wk, sync.OnceFunc(analysing.Done))
		})
	}
	go func() {
		analysing.Wait()
		close(ws.analysed)
	}()
	go func() {
		working.Wait()
		close(ws.done)
	}()
	g.Go(ws.release)

	n := 0
	g.Go(func() error { return writeInOrder(ws.done, free, depth, win.Before, sink, prog, &n) })
	err := g.Wait()
	return n, err
}

// windowStream is one StreamWindow's frames on their way: decoded (todo), analysed, their faces
// smoothed (with covers: sent to find them, found), released with their faces smoothed (ready),
// processed (done), and back to free.
type windowStream struct {
	ctx                                      context.Context
	win                                      Window
	depth                                    int
	free                                     chan *slot
	todo, analysed, find, found, ready, done chan *slot
	st                                       *Stats
}

// written reports whether decoded frame index is one the stream processes and writes, not a
// halo frame.
func (ws *windowStream) written(index int) bool {
	return index >= ws.win.Before && index < ws.win.Before+ws.win.Count
}

// work is one worker's goroutine: it processes released frames first (that frees them), finds
// covers next (that releases frames), and analyses decoded ones otherwise; stopAnalysing is
// called once no frame is left to analyse.
func (ws *windowStream) work(wk TemporalWorker, stopAnalysing func()) error {
	todo, find, ready := ws.todo, ws.find, ws.ready // this goroutine's own: nil once closed
	defer stopAnalysing()
	before := ws.win.Before
	marks := marksOf(wk)
	var slots []*slot
	var imgs, outs []*raster.Image
	var faces [][]face.Face
	for todo != nil || find != nil || ready != nil {
		var s *slot
		var ok, fromReady, fromFind bool
		select { // processing first, then covers, then whatever comes
		case s, ok = <-ready:
			fromReady = true
		default:
			select {
			case s, ok = <-find:
				fromFind = true
			default:
				select {
				case s, ok = <-ready:
					fromReady = true
				case s, ok = <-find:
					fromFind = true
				case s, ok = <-todo:
				case <-ws.ctx.Done():
					return ws.ctx.Err()
				}
			}
		}
		switch {
		case !ok && fromReady:
			ready = nil
			continue
		case !ok && fromFind:
			find = nil
			continue
		case !ok:
			todo = nil
			stopAnalysing()
			continue
		case fromFind:
			if ws.ctx.Err() != nil {
				continue // stopped: no frame will be released
			}
			wk.(CoverWorker).FindCovers(s.img, s.smoothed)
			ws.found <- s
			continue
		case !fromReady:
			var err error
			if s.faces, err = wk.Analyse(s.img, s.faces[:0]); err != nil {
				return &FrameError{First: s.index - before, Last: s.index - before, Err: err}
			}
			s.colours.Of(s.img)
			ws.analysed <- s
			continue
		}
		slots, imgs, faces = append(slots[:0], s), append(imgs[:0], s.img), append(faces[:0], s.smoothed)
	more: // take what is already released, up to the batch size; never wait for more
		for len(slots) < wk.BatchSize() {
			select {
			case s2, ok := <-ready:
				if !ok {
					ready = nil
					break more
				}
				slots, imgs, faces = append(slots, s2), append(imgs, s2.img), append(faces, s2.smoothed)
			default:
				break more
			}
		}
		marks.number(slots, before) // the written frames' numbers, as Stream numbers its frames
		outs = outputs(wk, slots, outs)
		if err := wk.Apply(imgs, faces); err != nil {
			return &FrameError{First: slots[0].index - before, Last: slots[len(slots)-1].index - before, Err: err}
		}
		finals(wk, slots)
		marks.mark(slots)
		for _, s := range slots {
			ws.done <- s
		}
	}
	return nil
}

// release is the window, in frame order: it takes the analysed frames as they come and smooths
// frame t's faces (or tracks them) once frame t+H is analysed (H the window's reach), or the
// decode ended. Without covers it then releases frame t. With covers it sends each frame within
// Covers of the written ones to find them on its smoothed faces, and releases written frame t,
// its faces given the covers of frames t−Covers..t+Covers to vote over, once those are found.
func (ws *windowStream) release() error {
	defer close(ws.ready)
	defer close(ws.find)
	r := newReleaser(ws)
	analysed := ws.analysed
	for {
		r.progress()
		if analysed == nil && r.finding == 0 {
			return nil
		}
		select {
		case s, ok := <-analysed:
			if !ok {
				analysed, r.closed = nil, true
				continue
			}
			r.analysed(s)
		case s := <-ws.found:
			r.found(s)
		case <-ws.ctx.Done():
			return ws.ctx.Err()
		}
	}
}

// releaser is release's state. Its rings are indexed by frame mod size, more frames than a live
// index lies apart (those in flight, the windows of the oldest and the halo after the last
// written), so that each holds every live frame's own.
type releaser struct {
	ws          *windowStream
	size        int
	ring        []*slot // analysed frames not yet smoothed
	held        []*slot // written frames whose covers are found, waiting for the vote
	isFound     []bool
	hist        [][]face.Face // faces of the frames analysed, as analysed (and their covers)
	colours     []temporal.Histogram
	sm          temporal.Smoother
	tr          temporal.Tracker
	next, voted int  // the next frame to smooth, to vote for
	last        int  // the last frame in hist
	closed      bool // the decode ended
	finding     int  // frames out to find covers on
}

func newReleaser(ws *windowStream) *releaser {
	win := ws.win
	size := ws.depth + 2*win.halo() + 2
	r := &releaser{ws: ws, size: size, ring: make([]*slot, size), held: make([]*slot, size), isFound: make([]bool, size),
		hist: make([][]face.Face, size), colours: make([]temporal.Histogram, size), last: -1,
		tr: temporal.Tracker{Amount: win.K, Score: win.Track}}
	// a shot cut between frames s and s+1 ends every window there
	r.sm = temporal.Smoother{K: win.K, Still: win.Still, Covers: win.Covers, Cut: func(s int) bool { return temporal.IsCut(&r.colours[s%size], &r.colours[(s+1)%size]) }}
	return r
}

func (r *releaser) at(s int) []face.Face { return r.hist[s%r.size] }

// covered reports whether frame t's covers are found: it is within Covers of a written frame.
func (r *releaser) covered(t int) bool {
	w := r.ws.win
	return w.Covers > 0 && t >= w.Before-w.Covers && t < w.Before+w.Count+w.Covers
}

// drop gives s back unprocessed.
func (r *releaser) drop(s *slot) {
	if !r.ws.written(s.index) {
		// A halo frame: analysed, not processed. Its faces are counted by the rank
		// that writes it: faces found stay a count of the job's frames, once each.
		r.ws.st.add(facesFound, -len(s.faces))
	}
	r.ws.free <- s
}

func (r *releaser) smooth(t int, s *slot) {
	if r.ws.win.Track > 0 {
		s.smoothed = r.tr.Track(s.smoothed[:0], t, 0, r.last, r.at)
	} else {
		s.smoothed = r.sm.Smooth(s.smoothed[:0], t, 0, r.last, r.at)
	}
}

// votable reports whether written frame t's neighbours within Covers have their covers.
func (r *releaser) votable(t int) bool {
	c := r.ws.win.Covers
	for u := max(t-c, 0); u <= t+c; u++ {
		switch {
		case !r.covered(u):
		case u > r.last:
			if !r.closed {
				return false
			}
		case !r.isFound[u%r.size]:
			return false
		}
	}
	return true
}

// progress smooths, sends and releases every frame it can.
func (r *releaser) progress() {
	ws, c := r.ws, r.ws.win.Covers
	for r.next <= r.last && (r.next+ws.win.reach() <= r.last || r.closed) {
		t := r.next
		r.next++
		s := r.ring[t%r.size]
		r.ring[t%r.size] = nil
		switch {
		case ws.ctx.Err() != nil || !ws.written(t) && !r.covered(t):
			r.drop(s)
		case r.covered(t):
			r.smooth(t, s)
			r.finding++
			ws.find <- s
		default:
			r.smooth(t, s)
			ws.ready <- s
		}
	}
	for r.voted < r.next && (c == 0 || !ws.written(r.voted) || r.votable(r.voted)) {
		t := r.voted
		r.voted++
		if c == 0 || !ws.written(t) {
			continue // released or dropped above, or a halo frame found drops
		}
		s := r.held[t%r.size]
		r.held[t%r.size] = nil
		if ws.ctx.Err() != nil {
			ws.free <- s
			continue
		}
		r.sm.Vote(s.smoothed, t, 0, r.last, r.at)
		ws.ready <- s
	}
}

// analysed takes in an analysed frame, and the frames up to the first not yet analysed.
func (r *releaser) analysed(s *slot) {
	r.ring[s.index%r.size] = s
	for n := r.ring[(r.last+1)%r.size]; n != nil && n.index == r.last+1; n = r.ring[(r.last+1)%r.size] {
		r.last++
		r.hist[r.last%r.size] = append(r.hist[r.last%r.size][:0], n.faces...)
		r.colours[r.last%r.size] = n.colours
		r.isFound[r.last%r.size] = false
	}
}

// found takes in a frame whose covers are found: they go to its faces in hist.
func (r *releaser) found(s *slot) {
	r.finding--
	t := s.index
	h := r.hist[t%r.size]
	for i := range min(len(s.smoothed), len(h)) { // one smoothed face for each analysed one, in order
		h[i].Cover, h[i].Looked = s.smoothed[i].Cover, s.smoothed[i].Looked
	}
	r.isFound[t%r.size] = true
	if r.ws.written(t) {
		r.held[t%r.size] = s
	} else {
		r.drop(s)
	}
}

// decodeSlots reads src's frames, numbered from 0, into slots taken from free and sends them to
// todo, which it closes at the end (io.EOF), on src's error or when ctx ends.
func decodeSlots(ctx context.Context, src FrameSource, free <-chan *slot, todo chan<- *slot) error {
	defer close(todo)
	for i := 0; ; i++ {
		var s *slot
		select {
		case s = <-free:
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := src.Next(s.img.Bytes()); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		s.index = i
		select {
		case todo <- s:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// writeInOrder is the encode stage: it writes the slots arriving on done to sink in frame order
// (a ring of depth slots indexed by the written frame's number: index − first), counts each in
// *written and prog, and gives the slot back to free. Slots in flight span fewer than depth frames.
func writeInOrder(done <-chan *slot, free chan<- *slot, depth, first int, sink FrameSink, prog progress.Counter, written *int) error {
	frame := func(s *slot) []byte {
		if s.final != nil {
			return s.final.Bytes()
		}
		return s.img.Bytes()
	}
	write := func(s *slot) error { return sink.Write(frame(s)) }
	if ms, ok := sink.(MarkedSink); ok {
		write = func(s *slot) error { return ms.WriteMarked(frame(s), s.faced, s.id) }
	}
	ring := make([]*slot, depth)
	for s := range done {
		ring[(s.index-first)%depth] = s
		for n := *written; ring[n%depth] != nil && ring[n%depth].index-first == n; n = *written {
			r := ring[n%depth]
			ring[n%depth] = nil
			if err := write(r); err != nil {
				return err
			}
			*written = n + 1
			prog.Add(1)
			r.final = nil
			free <- r
		}
	}
	return nil
}
