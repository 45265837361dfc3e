package infer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	ort "github.com/yalue/onnxruntime_go"
)

// SessionConfig says how to open one of FaceFusion's model files.
type SessionConfig struct {
	// ModelsDir holds the model files under FaceFusion's names (models_dir, --models-dir).
	ModelsDir string
	// Library is the ONNX Runtime shared library; "" uses the one already loaded (Init).
	Library string
	Execution
	// MaxBatch is the largest batch Run accepts; the buffers are sized for it once. 0 means 1.
	// A model whose file has no dynamic batch axis (and every detector) runs at batch 1 only:
	// MaxBatch is then lowered to 1 (see Session.MaxBatch).
	MaxBatch int
	// Dims gives the full shape of a tensor (by its name in the file) whose non-batch axes are
	// dynamic and not fixed by the contract: a detector's input at --face-detector-size and its
	// anchor outputs. The batch axis of a batched tensor is ignored here.
	Dims map[string][]int64
	// SHA256 is the model file's expected sha256 in hex; "" skips the check. FaceFusion's
	// MODEL.hash (CRC32) beside the file is checked whenever it exists.
	SHA256 string
	// Logf receives the session's few log lines (provider fallback, buffers not pinned);
	// nil means the process log's warnings.
	Logf func(format string, args ...any)
	// Engines, when set, shares OpenEngine's engines among the rank's workers: one session
	// per model file (EngineSet).
	Engines *EngineSet
}

// Warnf is where the lines of sessions opened without a Logf go: slog's default logger, which
// the program makes its log.
var Warnf = func(format string, args ...any) {
	slog.Warn(fmt.Sprintf("warning: "+format, args...))
}

func (c *SessionConfig) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
		return
	}
	Warnf(format, args...)
}

// Session is one of FaceFusion's models on one ONNX Runtime session, with its inputs and outputs
// in buffers allocated once (page-aligned, outside the Go heap, pinned when the CUDA runtime is
// there). Fill Inputs, call Run, read Outputs: a run allocates nothing. A Session is used by one
// goroutine at a time; an Engine shares one session among many (engine.go).
type Session struct {
	spec      Spec
	path      string
	found     Signature
	providers []string
	maxBatch  int
	batched   bool
	dims      map[string][]int64 // SessionConfig.Dims, for an engine's further tensor sets
	inferred  map[string][]int64 // ONNX Runtime's shapes, read only when needed (inferredDim)
	logf      func(format string, args ...any)
	sess      *ort.DynamicAdvancedSession
	tensorSet // the buffers Run uses
	// inFlight counts the runs inside ONNX Runtime now, maxInFlight the most at once.
	inFlight, maxInFlight atomic.Int32
}

// tensorSet is the memory one run in flight needs: a buffer per input and output, sized for the
// session's largest batch, and batch-n views of them bound for every n.
type tensorSet struct {
	inputs  []*Buffer
	outputs []*Buffer
	// bindings[n-1] binds batch-n views of the buffers; tensors[n-1] are those views.
	bindings []*ort.IoBinding
	tensors  [][]ort.Value
	// scalars[n-1] are the 0-d outputs of binding n-1 (LivePortrait's pose): ONNX Runtime
	// writes a 0-d output only into a 0-d value, which the binding library makes over its own
	// memory alone, so each run's value is copied into the output's buffer.
	scalars [][]scalarOut
}

// scalarOut is a 0-d float32 output and the value ONNX Runtime writes it into.
type scalarOut struct {
	buf *Buffer
	val *ort.Scalar[float32]
}

// copyScalars copies binding n-1's 0-d outputs into their buffers after a run.
func (ts *tensorSet) copyScalars(n int) {
	if n-1 >= len(ts.scalars) {
		return
	}
	for _, o := range ts.scalars[n-1] {
		binary.LittleEndian.PutUint32(o.buf.mem.data, math.Float32bits(o.val.GetData()))
	}
}

// OpenSession opens the model spec describes from cfg.ModelsDir. The file's integrity (.hash,
// sha256) and signature are checked first; a mismatch is refused before any session exists,
// with one line naming the file, the expected and the found signature.
func OpenSession(c Spec, cfg SessionConfig) (*Session, error) {
	path := filepath.Join(cfg.ModelsDir, c.File)
	if err := statModel(c, path); err != nil {
		return nil, err
	}
	if _, err := VerifyModel(path, cfg.SHA256, false); err != nil {
		return nil, err
	}
	if err := ensureRuntime(Options{Library: cfg.Library}); err != nil {
		return nil, err
	}
	found, err := ReadSignature(path)
	if err != nil {
		return nil, fmt.Errorf("model %s %s: %w", c.Name, path, err)
	}
	if why := Check(c.Want, found); why != "" {
		return nil, signatureError(c, path, why, found)
	}
	s := &Session{spec: c, path: path, found: found}
	if err := s.open(cfg); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func statModel(c Spec, path string) error {
	st, err := ModelStat(path)
	if err != nil {
		return fmt.Errorf("model %s %s: not found: put %s in models_dir (--models-dir)", c.Name, path, c.own())
	}
	if st.IsDir() {
		return fmt.Errorf("model %s %s: is a directory, not an .onnx file: put %s in models_dir", c.Name, path, c.own())
	}
	return nil
}

// signatureError is the one-line refusal of a file whose inputs/outputs are not the contract's.
func signatureError(c Spec, path, why string, found Signature) error {
	return fmt.Errorf("model %s %s: wrong signature (%s): expected %s; found %s: use %s",
		c.Name, path, why, c.Want, found, c.own())
}

// own is the file that belongs under c's name: FaceFusion's, or the package's that publishes it
// (Published.By).
func (c Spec) own() string {
	if c.Published.By != "" {
		return fmt.Sprintf("the %s of %s", c.File, c.Published.By)
	}
	return "FaceFusion's own " + c.File
}

// ReadSignature reads a model file's inputs and outputs as ONNX Runtime reports them, from the
// file itself (fileSignature): no session, no weights read, no runtime needed.
func ReadSignature(path string) (Signature, error) {
	sig, err := fileSignature(path)
	if errors.Is(err, errChanged) {
		return Signature{}, fmt.Errorf("%v: let whatever writes it finish, then run again", err)
	}
	if err != nil {
		return Signature{}, fmt.Errorf("not a loadable ONNX model (%s): replace the file", oneLine(err))
	}
	return sig, nil
}

// open resolves the batch axis, creates the session and its tensor set.
func (s *Session) open(cfg SessionConfig) error {
	c := s.spec
	s.maxBatch = max(cfg.MaxBatch, 1)
	s.batched = c.Batched
	for _, t := range append(append([]TensorSpec(nil), s.found.Inputs...), s.found.Outputs...) {
		if len(t.Shape) < 2 || t.Shape[0] != Dyn {
			s.batched = false
		}
	}
	if !s.batched {
		s.maxBatch = 1
	}
	s.dims, s.logf = cfg.Dims, cfg.logf

	so, err := sessionOptions(Options{IntraOpThreads: cfg.Threads})
	if err != nil {
		return err
	}
	defer so.Destroy()
	used, note, err := applyProviders(so, cfg.Execution)
	if err != nil {
		return fmt.Errorf("model %s %s: %w", c.Name, s.path, err)
	}
	if note != "" {
		cfg.logf("model %s: %s", c.Name, note)
	}
	s.providers = used
	names := func(ts []TensorSpec) []string {
		out := make([]string, len(ts))
		for i, t := range ts {
			out[i] = t.Name
		}
		return out
	}
	if data, ok := preloadedData(s.path); ok {
		// The bytes this process holds; a model they cannot open alone (its weights in a file
		// beside it) is opened from its path, as without them.
		s.sess, err = ort.NewDynamicAdvancedSessionWithONNXData(data, names(s.found.Inputs), names(s.found.Outputs), so)
	}
	if s.sess == nil {
		s.sess, err = ort.NewDynamicAdvancedSession(s.path, names(s.found.Inputs), names(s.found.Outputs), so)
	}
	if err != nil {
		return fmt.Errorf("model %s %s: cannot create a session: %s", c.Name, s.path, oneLine(err))
	}
	openSessions.Add(1)
	set, err := s.newSet()
	if err != nil {
		return err
	}
	s.tensorSet = *set
	return nil
}

// newSet maps a tensor set's buffers, pins them and binds their batch views.
func (s *Session) newSet() (*tensorSet, error) {
	c := s.spec
	ts := &tensorSet{}
	fail := func(err error) (*tensorSet, error) {
		ts.close()
		return nil, err
	}
	for _, t := range s.found.Inputs {
		b, err := s.buffer(t, inputSpec(c.Want, t.Name), s.dims)
		if err != nil {
			return fail(err)
		}
		ts.inputs = append(ts.inputs, b)
	}
	for i, t := range s.found.Outputs {
		b, err := s.buffer(t, c.Want.Outputs[i], s.dims)
		if err != nil {
			return fail(err)
		}
		ts.outputs = append(ts.outputs, b)
	}
	ts.pinAll(s.logf)
	for n := 1; n <= s.maxBatch; n++ {
		if err := ts.bind(s.sess, n); err != nil {
			return fail(fmt.Errorf("model %s %s: cannot bind batch %d tensors: %s", c.Name, s.path, n, oneLine(err)))
		}
	}
	return ts, nil
}

func inputSpec(c Signature, name string) TensorSpec {
	for _, t := range c.Inputs {
		if t.Name == name {
			return t
		}
	}
	return TensorSpec{}
}

// buffer resolves t's shape at the maximum batch and maps its memory. A dynamic axis takes, in
// order: the batch size (axis 0 of a batched model), the contract's fixed size, cfg.Dims.
func (s *Session) buffer(t, want TensorSpec, dims map[string][]int64) (*Buffer, error) {
	shape := append([]int64(nil), t.Shape...)
	if t.Shape == nil { // rank unknown in the file: the contract's rank, every axis to resolve
		shape = make([]int64, len(want.Shape))
		for i := range shape {
			shape[i] = Dyn
		}
	}
	if len(shape) == 0 && (isInput(s.found, t.Name) && t.Type != Float32 && t.Type != Float64 ||
		!isInput(s.found, t.Name) && t.Type != Float32) {
		// A 0-d input (styleganex_age's 'direction') is bound as a scalar at each run
		// (bindScalars), a 0-d output (LivePortrait's pose) read from one after it; other types
		// are not needed by any model.
		return nil, fmt.Errorf("model %s %s: %s is a 0-d tensor, which this program passes only as a float input or a float32 output", s.spec.Name, s.path, t)
	}
	given := dims[t.Name]
	if given != nil && len(given) != len(shape) {
		return nil, fmt.Errorf("model %s %s: dims for %s have %d axes, the model has %d (%s)", s.spec.Name, s.path, t.Name, len(given), len(shape), t)
	}
	for i, d := range shape {
		switch {
		case d >= 0:
		case i == 0 && s.batched:
			shape[i] = int64(s.maxBatch)
		case i < len(want.Shape) && want.Shape[i] >= 0:
			shape[i] = want.Shape[i]
		case given != nil && given[i] > 0:
			shape[i] = given[i]
		case i == 0 && len(shape) > 2:
			shape[i] = 1 // an unbatched model's dynamic batch axis: FaceFusion runs batch 1
		case s.inferredDim(t.Name, i) > 0:
			shape[i] = s.inferredDim(t.Name, i)
		default:
			return nil, fmt.Errorf("model %s %s: %s has a dynamic axis %d: give its shape in SessionConfig.Dims", s.spec.Name, s.path, t, i)
		}
	}
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	item := n
	if s.batched {
		item = n / shape[0]
	}
	if t.Type.Size() == 0 {
		return nil, fmt.Errorf("model %s %s: %s has an unsupported element type", s.spec.Name, s.path, t)
	}
	mem, err := newRegion(int(n) * t.Type.Size())
	if err != nil {
		return nil, fmt.Errorf("model %s %s: %s: %w", s.spec.Name, s.path, t.Name, err)
	}
	itemShape := shape
	if s.batched {
		itemShape = append([]int64{1}, shape[1:]...)
	}
	return &Buffer{Name: t.Name, Type: t.Type, Shape: shape, Batched: s.batched, mem: mem, item: int(item), itemShape: itemShape}, nil
}

// inferredDim is axis i of tensor name as ONNX Runtime's shape inference fixes it where the
// file leaves it dynamic, or -1. It is asked only for an axis nothing else resolves, and costs
// a throwaway session the first time.
func (s *Session) inferredDim(name string, i int) int64 {
	if s.inferred == nil {
		s.inferred = map[string][]int64{}
		if ins, outs, err := inputOutputInfo(s.path); err == nil {
			for _, info := range append(ins, outs...) {
				s.inferred[info.Name] = info.Dimensions
			}
		}
	}
	if d := s.inferred[name]; i < len(d) {
		return d[i]
	}
	return -1
}

// UnpinnedNote starts the log line that says a session's buffers are not pinned: a cost for
// GPU execution, none for CPU execution.
const UnpinnedNote = "buffers not pinned"

// pinNote makes "buffers not pinned" one log line per process, not one per session.
var pinNote sync.Once

func (ts *tensorSet) pinAll(logf func(format string, args ...any)) {
	for _, b := range append(append([]*Buffer(nil), ts.inputs...), ts.outputs...) {
		if err := pin(b.mem.data); err != nil {
			pinNote.Do(func() { logf("%s: %s", UnpinnedNote, oneLine(err)) })
			return
		}
		b.mem.pinned = true
	}
}

// bind creates batch-n tensors over the first n items of every buffer and an IoBinding for them.
func (ts *tensorSet) bind(sess *ort.DynamicAdvancedSession, n int) error {
	b, err := sess.CreateIoBinding()
	if err != nil {
		return err
	}
	ts.bindings = append(ts.bindings, b)
	var vals []ort.Value
	defer func() { ts.tensors = append(ts.tensors, vals) }()
	view := func(buf *Buffer) (ort.Value, error) {
		shape := append([]int64(nil), buf.Shape...)
		size := len(buf.mem.data)
		if buf.Batched {
			shape[0] = int64(n)
			size = n * buf.item * buf.Type.Size()
		}
		return ort.NewCustomDataTensor(ort.NewShape(shape...), buf.mem.data[:size], ort.TensorElementDataType(buf.Type))
	}
	var scalars []scalarOut
	defer func() { ts.scalars = append(ts.scalars, scalars) }()
	for i, buf := range append(append([]*Buffer(nil), ts.inputs...), ts.outputs...) {
		var v ort.Value
		var err error
		switch {
		case len(buf.Shape) == 0 && i < len(ts.inputs):
			continue // bound at each run by bindScalars: onnxruntime_go's tensors have an axis
		case len(buf.Shape) == 0:
			if buf.Type != Float32 {
				return fmt.Errorf("output %s: a 0-d output of type %v (only float32 is taken)", buf.Name, buf.Type)
			}
			var sv *ort.Scalar[float32]
			if sv, err = ort.NewEmptyScalar[float32](); err == nil {
				v = sv
				scalars = append(scalars, scalarOut{buf, sv})
			}
		default:
			v, err = view(buf)
		}
		if err != nil {
			return err
		}
		vals = append(vals, v)
		if i < len(ts.inputs) {
			err = b.BindInput(buf.Name, v)
		} else {
			err = b.BindOutput(buf.Name, v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// close releases the set's bindings, tensors and buffers (those made so far, after a failure).
func (ts *tensorSet) close() []error {
	var errs []error
	for _, b := range ts.bindings {
		errs = append(errs, b.Destroy())
	}
	ts.bindings = nil
	for _, vs := range ts.tensors {
		for _, v := range vs {
			errs = append(errs, v.Destroy())
		}
	}
	ts.tensors, ts.scalars = nil, nil
	for _, b := range append(append([]*Buffer(nil), ts.inputs...), ts.outputs...) {
		errs = append(errs, b.mem.free())
	}
	ts.inputs, ts.outputs = nil, nil
	return errs
}

// Run runs the model on the first n batch items of the input buffers and writes the first n
// items of the output buffers. n is 1 for unbatched models.
func (s *Session) Run(n int) error { return s.runSet(&s.tensorSet, n) }

// runSet runs the model on the first n items of ts. ONNX Runtime allows concurrent runs of one
// session, each on its own tensor set: an Engine's batches run so.
func (s *Session) runSet(ts *tensorSet, n int) error {
	if s.sess == nil {
		return fmt.Errorf("model %s %s: Run after Close", s.spec.Name, s.path)
	}
	if n < 1 || n > s.maxBatch {
		return fmt.Errorf("model %s %s: batch %d outside 1..%d (the session's max batch)", s.spec.Name, s.path, n, s.maxBatch)
	}
	in := s.inFlight.Add(1)
	for {
		m := s.maxInFlight.Load()
		if in <= m || s.maxInFlight.CompareAndSwap(m, in) {
			break
		}
	}
	if testHookRun != nil {
		testHookRun(s)
	}
	scalars, err := ts.bindScalars(ts.bindings[n-1])
	if err == nil {
		err = s.sess.RunWithBinding(ts.bindings[n-1])
		destroyAll(scalars)
	}
	s.inFlight.Add(-1)
	if err != nil {
		return fmt.Errorf("model %s %s: inference failed: %s", s.spec.Name, s.path, oneLine(err))
	}
	ts.copyScalars(n)
	return nil
}

// testHookRun, when set, is called as a run enters ONNX Runtime, inside every lock a caller
// may hold around it.
var testHookRun func(*Session)

// Spec is what the model was opened and checked as.
func (s *Session) Spec() Spec { return s.spec }

// Path is the model file.
func (s *Session) Path() string { return s.path }

// Signature is the file's own signature (dynamic axes as Dyn).
func (s *Session) Signature() Signature { return s.found }

// Providers are the execution providers in use, in order of preference.
func (s *Session) Providers() []string { return s.providers }

// MaxBatch is the largest n Run accepts (1 when the model has no dynamic batch axis).
func (s *Session) MaxBatch() int { return s.maxBatch }

// Inputs are the input buffers in file order.
func (s *Session) Inputs() []*Buffer { return s.inputs }

// Outputs are the output buffers in file order (the contract's positional order).
func (s *Session) Outputs() []*Buffer { return s.outputs }

// Input is the input buffer named name (FaceFusion's input names: input, target, source,
// weight), or nil.
func (s *Session) Input(name string) *Buffer {
	for _, b := range s.inputs {
		if b.Name == name {
			return b
		}
	}
	return nil
}

// Close releases the session, its tensors and buffers. It is safe to call more than once.
func (s *Session) Close() error {
	errs := s.tensorSet.close()
	if s.sess != nil {
		errs = append(errs, s.sess.Destroy())
		s.sess = nil
		openSessions.Add(-1)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("model %s %s: close: %s", s.spec.Name, s.path, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return nil
}

// openSessions counts the ONNX Runtime sessions of the process not yet closed.
var openSessions atomic.Int64

// OpenSessions is the number of model sessions open in the process now (each engine holds one):
// what a rank that closed its models must be back to, whatever way its setup ended.
func OpenSessions() int { return int(openSessions.Load()) }

func ortReady() bool { return ort.IsInitialized() }

func isInput(sig Signature, name string) bool {
	for _, t := range sig.Inputs {
		if t.Name == name {
			return true
		}
	}
	return false
}

// bindScalars binds ts's 0-d inputs to b as scalars holding their buffers' values, to be
// destroyed once the run is over. Sets without 0-d inputs allocate nothing.
func (ts *tensorSet) bindScalars(b *ort.IoBinding) ([]ort.Value, error) {
	var vals []ort.Value
	for _, buf := range ts.inputs {
		if len(buf.Shape) != 0 {
			continue
		}
		var v ort.Value
		var err error
		if buf.Type == Float64 {
			v, err = ort.NewScalar(buf.Item(0).Float64()[0])
		} else {
			v, err = ort.NewScalar(buf.Item(0).Float32()[0])
		}
		if err == nil {
			vals = append(vals, v)
			err = b.BindInput(buf.Name, v)
		}
		if err != nil {
			destroyAll(vals)
			return nil, err
		}
	}
	return vals, nil
}

func destroyAll(vals []ort.Value) {
	for _, v := range vals {
		v.Destroy()
	}
}
