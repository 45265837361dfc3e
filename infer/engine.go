package infer

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultDeadline is how long a batch that is not full waits for more items after its first
// one. 2 ms is about one batch of swapper crops on a GPU and a tenth of a frame's CPU work
// (decode, detect, align, pack) on one core: items that workers produce at the same time still
// meet in one run, while a worker never idles longer than a fraction of its own frame. A batch
// runs sooner when it is full or when every worker of the rank already waits on the engine
// (nothing more can come), so one worker never pays the deadline at all.
const DefaultDeadline = 2 * time.Millisecond

// EngineConfig sizes an engine's batcher.
type EngineConfig struct {
	// Workers is the number of goroutines that share the engine (a rank's pipeline workers),
	// 0 meaning 1. It sizes the pool of batch buffers: one per worker for a model that runs at
	// batch 1, up to Runs, so that many workers' runs proceed at once; at most three for a
	// batched model (one filling while one runs and one hands its results back). When every
	// worker waits on the engine, the open batch runs without waiting for its deadline.
	Workers int
	// Runs bounds the batch-1 runs in flight on the session, and with them the buffers and the
	// runtime's working memory each run in flight takes (its activations: tens of MB for a
	// detector at 640): 0 means the CPUs the process may run on (runtime.NumCPU reads the
	// affinity mask). More runs than cores buy no speed on the CPU provider and would make a
	// rank's memory grow with its workers; a worker past the bound waits for a free buffer, as
	// it would wait for a core.
	Runs int
	// Deadline is how long a batch that is not full waits for more items: 0 means
	// DefaultDeadline, a negative value none (each Claim's items run on their own).
	Deadline time.Duration
}

// Engine is one model on one ONNX Runtime session, shared by every worker of a rank: one copy of
// the weights in memory (host or GPU) however many workers there are.
//
// A worker Claims items, packs its inputs straight into the batch buffer (Lease.Input), calls
// Run, reads its results where the model wrote them (Lease.Output) and Releases. The batcher puts
// the items of every worker into the open batch and runs it when it is full (the session's
// MaxBatch, execution_batch_size), when its deadline passes (EngineConfig.Deadline), or when every
// worker waits on it; each worker gets its own items' results back. A model that runs at batch 1
// (its file fixes the batch axis, or batch 1 is configured) has one batch buffer per worker, and
// their runs proceed at the same time on the shared session: no lock is held around a run.
//
// An item's result does not depend on the other items of its batch, nor on the batch's size or
// the item's place in it (TestEngineMatchesBatchOne): the output is the same for any number of
// workers and ranks.
type Engine struct {
	set      *EngineSet // the set that shares it and closes it; nil when its opener does
	sess     *Session
	name     string // the model's name and file, for errors
	path     string
	maxBatch int
	workers  int
	inFlight int // the most batch-1 runs in flight (EngineConfig.Runs)
	deadline time.Duration
	batches  []*batch

	mu      sync.Mutex
	freed   sync.Cond // a batch went back to free
	free    []*batch
	open    *batch   // the batch taking claims, nil when none
	blocked int      // leases waiting in Run
	closed  bool     // no more claims
	done    bool     // the session and buffers are closed
	claims  []*claim // released claims' records, for the next Claims

	runs, items atomic.Int64
	expired     atomic.Int64
}

// batch is one tensor set and its place in the batcher's cycle: free → open (taking claims) →
// sealed (full or past its deadline) → running once every claimed item is packed → finished →
// free again once every lease released it.
type batch struct {
	e        *Engine
	set      *tensorSet
	timer    *time.Timer
	done     sync.Cond // finished became true
	claimed  int
	ready    int
	released int
	due      time.Time // when the open batch's deadline passes
	sealed   bool
	running  bool
	finished bool
	err      error
}

// NewEngine shares s among cfg.Workers workers; the engine owns s from then on (Engine.Close
// closes it). s's own tensor set becomes the first batch buffer.
func NewEngine(s *Session, cfg EngineConfig) (*Engine, error) {
	if s == nil || s.sess == nil {
		return nil, fmt.Errorf("engine: no open session")
	}
	e := &Engine{sess: s, name: s.spec.Name, path: s.path, maxBatch: s.maxBatch, workers: max(cfg.Workers, 1), inFlight: runsFor(cfg), deadline: cfg.Deadline}
	if e.deadline == 0 {
		e.deadline = DefaultDeadline
	}
	e.freed.L = &e.mu
	e.addBatch(&s.tensorSet)
	if err := e.grow(e.workers); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

// OpenEngine opens the model spec describes as OpenSession does, as an engine: the one of
// cfg.Engines for that file, opened by the first caller and shared by every later one, or,
// without a set, an engine of the caller's own for one worker.
func OpenEngine(spec Spec, cfg SessionConfig) (*Engine, error) {
	if cfg.Engines != nil {
		return cfg.Engines.open(spec, cfg)
	}
	s, err := OpenSession(spec, cfg)
	if err != nil {
		return nil, err
	}
	e, err := NewEngine(s, EngineConfig{Workers: 1})
	if err != nil {
		s.Close()
		return nil, err
	}
	return e, nil
}

// batchesFor is the number of batch buffers an engine keeps for workers: one each at batch 1, up
// to runs, at most three when batched.
func batchesFor(maxBatch, workers, runs int) int {
	if maxBatch > 1 {
		return min(workers, 3)
	}
	return min(workers, runs)
}

// runsFor is EngineConfig.Runs with its default.
func runsFor(cfg EngineConfig) int {
	if cfg.Runs > 0 {
		return cfg.Runs
	}
	return max(runtime.NumCPU(), 1)
}

// grow sizes e for workers: more batch buffers when batch-1 runs need one per worker.
func (e *Engine) grow(workers int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.workers = max(e.workers, workers)
	for len(e.batches) < batchesFor(e.maxBatch, e.workers, e.inFlight) {
		ts, err := e.sess.newSet()
		if err != nil {
			return err
		}
		e.addBatch(ts)
	}
	return nil
}

func (e *Engine) addBatch(ts *tensorSet) {
	b := &batch{e: e, set: ts}
	b.done.L = &e.mu
	b.timer = time.AfterFunc(time.Hour, b.expire)
	b.timer.Stop()
	e.batches = append(e.batches, b)
	e.free = append(e.free, b)
}

// The shared session itself is not handed out: its tensor set is the engine's first batch
// buffer, and a caller running it would race with the batcher. What callers need of it:

// Spec is what the model was opened and checked as.
func (e *Engine) Spec() Spec { return e.sess.spec }

// Path is the model file.
func (e *Engine) Path() string { return e.sess.path }

// Signature is the file's own signature (dynamic axes as Dyn).
func (e *Engine) Signature() Signature { return e.sess.found }

// Providers are the execution providers in use, in order of preference.
func (e *Engine) Providers() []string { return e.sess.providers }

// Shapes are the resolved shapes of the engine's input and output buffers (at MaxBatch for a
// batched model), in file order.
func (e *Engine) Shapes() (inputs, outputs []TensorSpec) {
	spec := func(bs []*Buffer) []TensorSpec {
		out := make([]TensorSpec, len(bs))
		for i, b := range bs {
			out[i] = TensorSpec{Name: b.Name, Type: b.Type, Shape: append([]int64(nil), b.Shape...)}
		}
		return out
	}
	return spec(e.sess.inputs), spec(e.sess.outputs)
}

// MaxBatch is the most items one Claim may take (and one run holds).
func (e *Engine) MaxBatch() int { return e.maxBatch }

// Batches is the number of batch buffers (runs that can be in flight at once).
func (e *Engine) Batches() int { return len(e.batches) }

// EngineStats count an engine's runs since it opened.
type EngineStats struct {
	// Runs is the number of model runs, Items the items they held: Items/Runs is the mean
	// batch.
	Runs, Items int64
	// Expired is the number of batches sealed by their deadline (the others were full, or
	// every worker waited on them).
	Expired int64
	// MaxInFlight is the most runs that were inside ONNX Runtime on the session at once.
	MaxInFlight int
}

// Stats are the engine's counts so far.
func (e *Engine) Stats() EngineStats {
	return EngineStats{Runs: e.runs.Load(), Items: e.items.Load(), Expired: e.expired.Load(), MaxInFlight: int(e.sess.maxInFlight.Load())}
}

// part is a lease's run of consecutive items in one batch.
type part struct {
	b   *batch
	pos int // the first item's place in the batch
	n   int
}

// Lease is a worker's claim on n items of the engine's batch buffers. Pack each item's inputs
// into Input(name, i), call Run, read Output(k, i), then Release. A Lease is used by the
// goroutine that claimed it; the views it gives are valid until Release.
//
// A Lease is a handle: its copies are the same claim. Once one of them is released, Run and
// Release of any copy leave the engine alone (the claim's record serves later claims, and its
// generation tells a released handle from the live one), so a second Release can never free a
// batch buffer's next cycle under another worker.
type Lease struct {
	c   *claim
	gen uint64
}

// claim is a Lease's record, reused by the engine's later claims (a claim allocates nothing).
type claim struct {
	e         *Engine
	parts     [2]part // a claim fills the open batch and may spill into a new one
	nparts    int
	n         int
	submitted bool
	gen       uint64 // advanced by every Claim and Release of the record; under e.mu
}

// Claim takes n items (1 ≤ n ≤ MaxBatch) in the open batch, or in a new one when the open one
// has too little room (a claim then spans two batches). It waits while every batch buffer is in
// use; it never waits while holding items, so claims cannot deadlock.
func (e *Engine) Claim(n int) (Lease, error) {
	if n < 1 || n > e.maxBatch {
		return Lease{}, fmt.Errorf("model %s %s: claim of %d items outside 1..%d (the engine's max batch)", e.name, e.path, n, e.maxBatch)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		if e.closed {
			return Lease{}, fmt.Errorf("model %s %s: Claim after Close", e.name, e.path)
		}
		room := 0
		if e.open != nil {
			room = e.maxBatch - e.open.claimed
		}
		if n <= room || len(e.free) > 0 {
			break
		}
		e.freed.Wait()
	}
	var l *claim
	if k := len(e.claims); k > 0 {
		l, e.claims = e.claims[k-1], e.claims[:k-1]
	} else {
		l = &claim{e: e}
	}
	l.gen++
	l.parts, l.nparts, l.n, l.submitted = [2]part{}, 0, n, false
	if o := e.open; o != nil {
		k := min(n, e.maxBatch-o.claimed)
		l.parts[0] = part{b: o, pos: o.claimed, n: k}
		l.nparts = 1
		o.claimed += k
		if o.claimed == e.maxBatch {
			e.seal(o)
		}
		n -= k
	}
	if n > 0 {
		b := e.free[len(e.free)-1]
		e.free = e.free[:len(e.free)-1]
		b.reset(n)
		l.parts[l.nparts] = part{b: b, n: n}
		l.nparts++
		switch {
		case n == e.maxBatch || e.deadline < 0:
			b.sealed = true
		default:
			e.open = b
			b.due = time.Now().Add(e.deadline)
			b.timer.Reset(e.deadline)
		}
	}
	return Lease{c: l, gen: l.gen}, nil
}

// reset starts a free batch's next cycle with n items claimed. Called with e.mu held.
func (b *batch) reset(n int) {
	b.claimed, b.ready, b.released = n, 0, 0
	b.sealed, b.running, b.finished, b.err = false, false, false, nil
}

// seal closes the open batch to claims. Called with e.mu held.
func (e *Engine) seal(b *batch) {
	if e.open == b {
		e.open = nil
		b.timer.Stop()
	}
	b.sealed = true
}

// runnable reports whether b can run now, and marks it running. Called with e.mu held.
func (b *batch) runnable() bool {
	if b.sealed && !b.running && b.ready == b.claimed {
		b.running = true
		return true
	}
	return false
}

// expire is the open batch's deadline: it seals the batch and runs it when its items are packed
// (otherwise the last worker to pack runs it). A timer left from an earlier cycle of b finds b
// no longer open, or not yet due, and does nothing.
func (b *batch) expire() {
	e := b.e
	e.mu.Lock()
	if e.open != b || time.Now().Before(b.due) {
		e.mu.Unlock()
		return
	}
	e.seal(b)
	e.expired.Add(1)
	run := b.runnable()
	e.mu.Unlock()
	if run {
		e.execute(b)
	}
}

// execute runs b's claimed items on the shared session and wakes their leases. It holds no
// lock while the model runs.
func (e *Engine) execute(b *batch) {
	err := e.sess.runSet(b.set, b.claimed)
	e.runs.Add(1)
	e.items.Add(int64(b.claimed))
	e.mu.Lock()
	b.finished, b.err = true, err
	b.done.Broadcast()
	e.mu.Unlock()
}

// Len is the number of items claimed.
func (l *Lease) Len() int {
	if l.c == nil {
		return 0
	}
	return l.c.n
}

// item finds item i's batch and place.
func (l *Lease) item(i int) (*tensorSet, int) {
	c := l.c
	if c == nil || i < 0 || i >= c.n {
		panic(fmt.Sprintf("infer: lease item %d outside 0..%d", i, l.Len()-1))
	}
	p := c.parts[0]
	if i >= p.n {
		i -= p.n
		p = c.parts[1]
	}
	return p.b.set, p.pos + i
}

// Input is item i's part of the input named name (FaceFusion's input names: input, target,
// source, weight); it panics when the model has no such input.
func (l *Lease) Input(name string, i int) View {
	ts, pos := l.item(i)
	for _, b := range ts.inputs {
		if b.Name == name {
			return b.Item(pos)
		}
	}
	panic("infer: model " + l.c.e.name + " has no input " + name)
}

// In is item i's part of input k (file order).
func (l *Lease) In(k, i int) View {
	ts, pos := l.item(i)
	return ts.inputs[k].Item(pos)
}

// Output is item i's part of output k (file order, the contract's positional order).
func (l *Lease) Output(k, i int) View {
	ts, pos := l.item(i)
	return ts.outputs[k].Item(pos)
}

// Run hands the lease's packed items to the batcher and waits until the batches holding them
// have run. The worker whose item completes a sealed batch runs it in its own goroutine.
func (l *Lease) Run() error {
	c := l.c
	if c == nil {
		return fmt.Errorf("infer: Run of a lease never claimed")
	}
	e := c.e
	e.mu.Lock()
	if c.gen != l.gen {
		e.mu.Unlock()
		return fmt.Errorf("model %s %s: Run of a released lease", e.name, e.path)
	}
	if c.submitted {
		e.mu.Unlock()
		return fmt.Errorf("model %s %s: a lease runs once", e.name, e.path)
	}
	c.submitted = true
	var run [3]*batch
	k := 0
	e.blocked++
	for _, p := range c.parts[:c.nparts] {
		p.b.ready += p.n
		if p.b.runnable() {
			run[k] = p.b
			k++
		}
	}
	// Every worker waits here: no item can join the open batch, so it runs now.
	if o := e.open; o != nil && e.blocked >= e.workers {
		e.seal(o)
		if o.runnable() {
			run[k] = o
			k++
		}
	}
	e.mu.Unlock()
	for _, b := range run[:k] {
		e.execute(b)
	}
	var err error
	e.mu.Lock()
	for _, p := range c.parts[:c.nparts] {
		for !p.b.finished {
			p.b.done.Wait()
		}
		if err == nil {
			err = p.b.err
		}
	}
	e.blocked--
	e.mu.Unlock()
	return err
}

// Release gives the lease's items back; a lease never run is run first (its batch needs every
// claimed item before it can run), its results unread. Release is safe to call more than once,
// on any copy of the lease: only the first gives the items back.
func (l *Lease) Release() {
	c := l.c
	if c == nil {
		return
	}
	e := c.e
	e.mu.Lock()
	if c.gen != l.gen {
		e.mu.Unlock()
		return
	}
	if !c.submitted {
		e.mu.Unlock()
		l.Run()
		e.mu.Lock()
		if c.gen != l.gen { // a copy released it meanwhile
			e.mu.Unlock()
			return
		}
	}
	for _, p := range c.parts[:c.nparts] {
		p.b.released += p.n
		if p.b.released == p.b.claimed {
			e.free = append(e.free, p.b)
			e.freed.Broadcast()
		}
	}
	c.gen++
	e.claims = append(e.claims, c)
	e.mu.Unlock()
}

// CloseWait bounds how long Close waits for leases still held: a worker that leaked one must
// not hang its rank's exit until Slurm's time limit.
var CloseWait = 30 * time.Second

// Close waits until every batch is released (at most CloseWait), then closes the session and its
// buffers; an engine of an EngineSet is left to the set's Close. A lease still held after
// CloseWait is an error naming the model, and the session and buffers are left open (a worker may
// still write into them; a later Close, once it is released, closes them). It is safe to call
// more than once.
func (e *Engine) Close() error {
	if e.set != nil {
		return nil
	}
	return e.close()
}

func (e *Engine) close() error {
	e.mu.Lock()
	if e.done {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.freed.Broadcast()
	timedOut := false
	timer := time.AfterFunc(CloseWait, func() {
		e.mu.Lock()
		timedOut = true
		e.freed.Broadcast()
		e.mu.Unlock()
	})
	for len(e.free) < len(e.batches) && !timedOut {
		e.freed.Wait()
	}
	timer.Stop()
	if timedOut {
		held := len(e.batches) - len(e.free)
		e.mu.Unlock()
		return fmt.Errorf("model %s %s: %d of %d batch buffers still leased %v after Close began (a worker never released its lease): the session is left open", e.name, e.path, held, len(e.batches), CloseWait)
	}
	e.done = true
	e.mu.Unlock()
	var errs []error
	for _, b := range e.batches {
		b.timer.Stop()
		if b.set != &e.sess.tensorSet {
			errs = append(errs, b.set.close()...)
		}
	}
	errs = append(errs, e.sess.Close())
	return errors.Join(errs...)
}

// EngineSet shares engines among a rank's workers: the first OpenEngine of a model file with
// SessionConfig.Engines set opens it (with that caller's SessionConfig), every later one gets
// the same engine, whatever its own MaxBatch (an adapter claims at most Engine.MaxBatch items).
// A later open with other Dims is refused: its buffers would have the first caller's shapes.
// One set per rank, closed once its workers are done.
type EngineSet struct {
	mu       sync.Mutex
	workers  int
	runs     int
	deadline time.Duration
	engines  map[string]*Engine // by model file
}

// NewEngineSet makes an empty set whose engines serve cfg.Workers workers.
func NewEngineSet(cfg EngineConfig) *EngineSet {
	return &EngineSet{workers: max(cfg.Workers, 1), runs: cfg.Runs, deadline: cfg.Deadline, engines: map[string]*Engine{}}
}

func (s *EngineSet) open(spec Spec, cfg SessionConfig) (*Engine, error) {
	path, err := filepath.Abs(filepath.Join(cfg.ModelsDir, spec.File))
	if err != nil {
		return nil, fmt.Errorf("model %s: %v", spec.Name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.engines[path]; ok {
		if !sameDims(e.sess.dims, cfg.Dims) {
			return nil, fmt.Errorf("model %s %s: already open on this rank with dims %s, asked again with %s: one engine per model file has one shape", spec.Name, path, dimsString(e.sess.dims), dimsString(cfg.Dims))
		}
		return e, nil
	}
	sess, err := OpenSession(spec, cfg)
	if err != nil {
		return nil, err
	}
	e, err := NewEngine(sess, EngineConfig{Workers: s.workers, Runs: s.runs, Deadline: s.deadline})
	if err != nil {
		sess.Close()
		return nil, err
	}
	e.set = s
	s.engines[path] = e
	return e, nil
}

// SetRuns bounds the batch-1 runs in flight of the set's engines, open and to come, at n (see
// EngineConfig.Runs); buffers already made stay.
func (s *EngineSet) SetRuns(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs = max(n, 1)
	for _, e := range s.engines {
		e.mu.Lock()
		e.inFlight = s.runs
		e.mu.Unlock()
	}
}

// SetWorkers sizes the set for n workers: the open engines grow their batch buffers (a model
// that runs at batch 1 keeps one per worker), and later ones open so.
func (s *EngineSet) SetWorkers(n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.workers = max(s.workers, n)
	for _, e := range s.engines {
		if err := e.grow(s.workers); err != nil {
			return err
		}
	}
	return nil
}

// Engines are the open engines, by model name.
func (s *EngineSet) Engines() map[string]*Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]*Engine, len(s.engines))
	for _, e := range s.engines {
		out[e.name] = e
	}
	return out
}

// Close closes every engine of the set (each waits for its leases, at most CloseWait) and
// empties it; the set may open engines again afterwards.
func (s *EngineSet) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for path, e := range s.engines {
		if err := e.close(); err != nil {
			errs = append(errs, err) // kept: a later Close closes it once its lease is back
			continue
		}
		delete(s.engines, path)
	}
	return errors.Join(errs...)
}

// sameDims reports whether two SessionConfig.Dims give the same shapes (nil and empty alike).
func sameDims(a, b map[string][]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !slices.Equal(v, w) {
			return false
		}
	}
	return true
}

// dimsString writes Dims in name order: "input=[1 3 640 640]", or "none".
func dimsString(d map[string][]int64) string {
	if len(d) == 0 {
		return "none"
	}
	keys := slices.Sorted(maps.Keys(d))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, d[k])
	}
	return strings.Join(parts, " ")
}
