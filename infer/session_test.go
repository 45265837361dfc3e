package infer_test

import (
	"bufio"
	"fmt"
	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// detectorDims are the anchor detectors' shapes at 640×640.
func detectorDims(t testing.TB, s infer.Signature) map[string][]int64 {
	d := map[string][]int64{"input": {1, 3, 640, 640}}
	for i, o := range s.Outputs {
		n := []int64{12800, 3200, 800}[i%3]
		d[o.Name] = []int64{n, o.Shape[1]}
	}
	return d
}

type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func openFixture(t testing.TB, dir, name string, maxBatch int) *infer.Session {
	t.Helper()
	cfg := infer.SessionConfig{ModelsDir: dir, Library: testenv.ORTLibrary(t), MaxBatch: maxBatch, Logf: func(string, ...any) {}}
	if name == "scrfd_2.5g" || name == "retinaface_10g" {
		if err := infer.Init(cfg.Library); err != nil {
			t.Fatal(err)
		}
		sig, err := infer.ReadSignature(filepath.Join(dir, name+".onnx"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Dims = detectorDims(t, sig)
	}
	if m := catalog.Must(name); m.Kind == catalog.Colorizer { // sides follow frame_colorizer_size
		if err := infer.Init(cfg.Library); err != nil {
			t.Fatal(err)
		}
		sig, err := infer.ReadSignature(filepath.Join(dir, name+".onnx"))
		if err != nil {
			t.Fatal(err)
		}
		side := int64(m.Size)
		cfg.Dims = map[string][]int64{"input": {1, 3, side, side}, sig.Outputs[0].Name: {1, m.Want.Outputs[0].Shape[1], side, side}}
	}
	s, err := infer.OpenSession(catalog.Must(name).Spec(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func randomize(r *rand.Rand, b *infer.Buffer, lo, hi float32) {
	v := make([]float32, b.Len())
	for i := range v {
		v[i] = lo + (hi-lo)*r.Float32()
	}
	b.SetFloat32(0, v)
}

func readAll(b *infer.Buffer) []float32 {
	v := make([]float32, b.Len())
	b.GetFloat32(v, 0)
	return v
}

// TestContractsCoverIssueModels checks the table holds every model issue 5 names, with a
// fixture for each.
func TestContractsCoverIssueModels(t *testing.T) {
	got := map[string]bool{}
	for _, c := range catalog.All() {
		if c.Kind == catalog.DeepSwapper && !slices.Contains(fixtures.DeepSwapStandIns, c.Name) {
			continue // 157 alike: fixtures.DeepSwapStandIns stand for them
		}
		got[c.Name] = true
		if c.File != fixtures.File(c.Name) {
			t.Errorf("%s: file %q, the fixture's %s", c.Name, c.File, fixtures.File(c.Name))
		}
		if c.Size <= 0 {
			t.Errorf("%s: no input size", c.Name)
		}
	}
	for _, n := range fixtures.Names {
		if !got[n] {
			t.Errorf("no contract for %s", n)
		}
		delete(got, n)
	}
	for n := range got {
		t.Errorf("contract %s has no fixture", n)
	}
	if _, err := catalog.Lookup("inswapper_256"); err == nil || !strings.Contains(err.Error(), "inswapper_128") {
		t.Errorf("unknown model: error %v should list the known names", err)
	}
}

// TestFixturesLoad opens every fixture through its contract: names, shapes and element types
// are FaceFusion's, and a session runs.
func TestFixturesLoad(t *testing.T) {
	testenv.Full(t, "opens a session on every fixture model")
	dir := fixtures.Dir(t)
	for _, name := range fixtures.Names {
		s := openFixture(t, dir, name, 1)
		if err := s.Run(1); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if s.Spec().Name != name {
			t.Errorf("%s: contract %s", name, s.Spec().Name)
		}
	}
}

// TestWrongSignatureRefused puts a model with the wrong inputs under a known name: it is refused
// by the signature check, with one line naming file, expected and found signature.
func TestWrongSignatureRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "inswapper_128.onnx")
	if err := os.WriteFile(path, fixtures.WrongSignature(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := infer.OpenSession(catalog.Must("inswapper_128").Spec(), infer.SessionConfig{ModelsDir: dir, Library: testenv.ORTLibrary(t)})
	testenv.CheckError(t, "wrong signature", err, path, "wrong signature", "expected in(target[?,3,128,128]float32 source[?,512]float32)",
		"found in(input[1,3,128,128]float32) out(output[1,3,128,128]float32)", "use FaceFusion's own inswapper_128.onnx")

	// A real model of another kind under a swapper's name is refused the same way.
	blaze, err := os.ReadFile(testenv.Model(t, "blazeface_front_128.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gfpgan_1.4.onnx"), blaze, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = infer.OpenSession(catalog.Must("gfpgan_1.4").Spec(), infer.SessionConfig{ModelsDir: dir})
	testenv.CheckError(t, "blazeface as gfpgan", err, "gfpgan_1.4.onnx", "wrong signature", "input:0")

	_, err = infer.OpenSession(catalog.Must("codeformer").Spec(), infer.SessionConfig{ModelsDir: dir})
	testenv.CheckError(t, "missing model", err, filepath.Join(dir, "codeformer.onnx"), "not found", "models_dir")
}

func TestContractCheck(t *testing.T) {
	c, _ := catalog.Lookup("codeformer")
	good := infer.Signature{
		Inputs:  []infer.TensorSpec{{"weight", []int64{1}, infer.Float64}, {"input", []int64{1, 3, 512, 512}, infer.Float32}},
		Outputs: []infer.TensorSpec{{"anything", []int64{infer.Dyn, 3, 512, 512}, infer.Float32}},
	}
	if why := c.Check(good); why != "" {
		t.Errorf("FaceFusion's codeformer signature refused: %s", why)
	}
	dynamic := good
	dynamic.Inputs = []infer.TensorSpec{good.Inputs[0], {"input", []int64{infer.Dyn, 3, infer.Dyn, infer.Dyn}, infer.Float32}}
	if why := c.Check(dynamic); why != "" {
		t.Errorf("dynamic axes should accept FaceFusion's sizes: %s", why)
	}
	for what, bad := range map[string]infer.Signature{
		"weight float32": {Inputs: []infer.TensorSpec{{"weight", []int64{1}, infer.Float32}, good.Inputs[1]}, Outputs: good.Outputs},
		"size 256":       {Inputs: []infer.TensorSpec{good.Inputs[0], {"input", []int64{1, 3, 256, 256}, infer.Float32}}, Outputs: good.Outputs},
		"NHWC":           {Inputs: []infer.TensorSpec{good.Inputs[0], {"input", []int64{1, 512, 512, 3}, infer.Float32}}, Outputs: good.Outputs},
		"no weight":      {Inputs: good.Inputs[1:], Outputs: good.Outputs},
		"renamed":        {Inputs: []infer.TensorSpec{good.Inputs[0], {"image", []int64{1, 3, 512, 512}, infer.Float32}}, Outputs: good.Outputs},
		"output rank":    {Inputs: good.Inputs, Outputs: []infer.TensorSpec{{"o", []int64{3, 512, 512}, infer.Float32}}},
	} {
		if why := c.Check(bad); why == "" {
			t.Errorf("%s: accepted", what)
		}
	}
	fp16, _ := catalog.Lookup("inswapper_128_fp16")
	for _, dt := range []infer.DType{infer.Float32, infer.Float16} {
		s := infer.Signature{
			Inputs:  []infer.TensorSpec{{"target", []int64{1, 3, 128, 128}, dt}, {"source", []int64{1, 512}, dt}},
			Outputs: []infer.TensorSpec{{"output", []int64{1, 3, 128, 128}, dt}},
		}
		if why := fp16.Check(s); why != "" {
			t.Errorf("inswapper_128_fp16 with %s I/O refused: %s", dt, why)
		}
	}
}

// TestSwapperRoundTrip proves NCHW layout and the swapper stand-ins' arithmetic (the channel
// mix, the ramp, the source term; fixtures.SwapperMix), in float32, around float16 weights
// (inswapper_128_fp16, float32 inputs as FaceFusion feeds) and with float16 inputs and output
// (fixtures.HalfIOSwapper).
func TestSwapperRoundTrip(t *testing.T) {
	dir := fixtures.Dir(t, "inswapper_128", "inswapper_128_fp16", "hyperswap_1a_256")
	half := fixtures.HalfIODir(t)
	for _, m := range []struct {
		dir, name string
		wantType  infer.DType
	}{{dir, "inswapper_128", infer.Float32}, {dir, "inswapper_128_fp16", infer.Float32}, {dir, "hyperswap_1a_256", infer.Float32}, {half, "inswapper_128_fp16", infer.Float16}} {
		name, wantType := m.name, m.wantType
		s := openFixture(t, m.dir, name, 1)
		tgt, src, out := s.Input("target"), s.Input("source"), s.Outputs()[0]
		if tgt.Type != wantType || out.Type != wantType {
			t.Fatalf("%s: buffers %s/%s, want %s", name, tgt.Type, out.Type, wantType)
		}
		size := int(tgt.Shape[2])
		r := rand.New(rand.NewPCG(1, 2))
		randomize(r, tgt, 0, 1)
		randomize(r, src, -1, 1)
		if err := s.Run(1); err != nil {
			t.Fatal(err)
		}
		target, source, got := readAll(tgt), readAll(src), readAll(out)
		tol := float32(1e-5)
		if strings.HasSuffix(name, "fp16") {
			tol = 2e-3 // half-precision weights, or one rounding of a value below 2
		}
		var term [3]float32
		for c := range term {
			var v float64
			for j := range 512 {
				v += float64(fixtures.SwapperPick(j, c)) * float64(source[j])
			}
			term[c] = float32(fixtures.SourceGain * math.Tanh(v))
		}
		bad := 0
		for c := range 3 {
			for y := range size {
				for x := range size {
					i := c*size*size + y*size + x
					want := fixtures.SwapperRamp(c, x, y, size) + term[c]
					for d := range 3 {
						want += fixtures.SwapperMix[c][d] * target[d*size*size+y*size+x]
					}
					if abs32(got[i]-want) > tol && bad < 5 {
						bad++
						t.Errorf("%s: out[%d,%d,%d] = %v, want %v", name, c, y, x, got[i], want)
					}
				}
			}
		}
	}
}

// TestEnhancerStandIns runs every face enhancer's stand-in at its size: each output is
// fixtures.EnhancerOut of the input's three channels at that pixel (codeformer's float64
// weight included), at batch 2 where the model batches.
func TestEnhancerStandIns(t *testing.T) {
	testenv.Full(t, "runs every enhancer stand-in at its full size")
	var names []string
	for _, m := range catalog.Of(catalog.Enhancer) {
		names = append(names, m.Name)
	}
	dir := fixtures.Dir(t, names...)
	r := rand.New(rand.NewPCG(3, 5))
	for _, m := range catalog.Of(catalog.Enhancer) {
		s := openFixture(t, dir, m.Name, 2)
		in := s.Input("input")
		randomize(r, in, -1, 1)
		const w = 0.35
		hasWeight := false
		for _, b := range s.Inputs() {
			if b.Name == "weight" {
				b.Float64()[0], hasWeight = w, true
			}
		}
		n := min(2, s.MaxBatch())
		if err := s.Run(n); err != nil {
			t.Fatal(err)
		}
		x, out := readAll(in), readAll(s.Outputs()[0])
		size := m.Size
		hw := size * size
		for b := range n {
			for p := 0; p < hw; p += 97 { // a spread of pixels keeps the 2048 model quick
				xi := [3]float64{float64(x[b*3*hw+p]), float64(x[b*3*hw+hw+p]), float64(x[b*3*hw+2*hw+p])}
				for c := range 3 {
					want := fixtures.EnhancerOut(c, p%size, p/size, size, xi, w, hasWeight)
					if got := float64(out[b*3*hw+c*hw+p]); math.Abs(got-want) > 1e-5 {
						t.Fatalf("%s item %d: out[%d] at (%d, %d) = %v, want %v", m.Name, b, c, p%size, p/size, got, want)
					}
				}
			}
		}
		if m.Name == "codeformer" != hasWeight {
			t.Errorf("%s: weight input %v", m.Name, hasWeight)
		}
		s.Close()
	}
}

func abs32(v float32) float32 { return float32(math.Abs(float64(v))) }

// TestRecognizerAndMasks checks the stand-ins against their Go twins: arcface's channel and ramp
// means, the xseg channel-last mixes and ramps, bisenet's class planes, codeformer's float64
// weight input.
func TestRecognizerAndMasks(t *testing.T) {
	dir := fixtures.Dir(t, "arcface_w600k_r50", "xseg_1", "xseg_3", "bisenet_resnet_18", "codeformer", "2dfan4")
	r := rand.New(rand.NewPCG(3, 4))

	s := openFixture(t, dir, "arcface_w600k_r50", 1)
	in := s.Input("input")
	randomize(r, in, -1, 1)
	if err := s.Run(1); err != nil {
		t.Fatal(err)
	}
	want := fixtures.RecognizerEmbedding(in.Float32())
	for j, v := range s.Outputs()[0].Float32() {
		if math.Abs(float64(v)-want[j]) > 1e-5 {
			t.Fatalf("arcface: embedding[%d] = %v, want %v (fixtures.RecognizerEmbedding)", j, v, want[j])
		}
	}

	var x, out []float32
	for _, name := range []string{"xseg_1", "xseg_3"} {
		s = openFixture(t, dir, name, 1)
		in = s.Input("input")
		randomize(r, in, 0, 1)
		if err := s.Run(1); err != nil {
			t.Fatal(err)
		}
		x, out = in.Float32(), s.Outputs()[0].Float32()
		for p := range 256 * 256 {
			want := fixtures.OccluderOut(name, [3]float32{x[3*p], x[3*p+1], x[3*p+2]}, p%256, p/256)
			if abs32(out[p]-want) > 1e-5 {
				t.Fatalf("%s: mask[%d] = %v, want %v (NHWC channels mixed, plus the ramps)", name, p, out[p], want)
			}
		}
	}

	s = openFixture(t, dir, "bisenet_resnet_18", 1)
	in = s.Input("input")
	randomize(r, in, -2, 2)
	if err := s.Run(1); err != nil {
		t.Fatal(err)
	}
	x, out = in.Float32(), s.Outputs()[0].Float32()
	const plane = 512 * 512
	for p := 0; p < plane; p += 997 {
		want := fixtures.ParserScores("bisenet_resnet_18", [3]float32{x[p], x[plane+p], x[2*plane+p]}, p%512, p/512)
		for k, w := range want {
			if abs32(out[k*plane+p]-w) > 1e-4 {
				t.Fatalf("bisenet_resnet_18: class %d at %d = %v, want %v (NCHW channels mixed, plus the class's position terms)", k, p, out[k*plane+p], w)
			}
		}
	}

	s = openFixture(t, dir, "2dfan4", 1)
	in = s.Input("input")
	randomize(r, in, 0, 1)
	if err := s.Run(1); err != nil {
		t.Fatal(err)
	}
	wantPts := fixtures.FAN4Points(in.Float32())
	pts := s.Outputs()[0].Float32()
	for k := range 68 {
		for i := range 3 {
			if w := wantPts[k*3+i]; abs32(pts[k*3+i]-w) > 1e-4 {
				t.Fatalf("2dfan4: point %d,%d = %v, want %v", k, i, pts[k*3+i], w)
			}
		}
	}
}

// TestDetectorConstants reads the anchor detector's nine outputs at 640 and yoloface's output.
func TestDetectorConstants(t *testing.T) {
	dir := fixtures.Dir(t, "scrfd_2.5g", "yoloface_8n")
	s := openFixture(t, dir, "scrfd_2.5g", 1)
	if err := s.Run(1); err != nil {
		t.Fatal(err)
	}
	want := fixtures.DetectorOutputs()
	for i, o := range s.Outputs() {
		got := o.Float32()
		if len(got) != len(want[i]) {
			t.Fatalf("scrfd output %d: %d values, want %d", i, len(got), len(want[i]))
		}
		for j := range got {
			if got[j] != want[i][j] {
				t.Fatalf("scrfd output %d[%d] = %v, want %v", i, j, got[j], want[i][j])
			}
		}
	}
	y := openFixture(t, dir, "yoloface_8n", 1)
	if err := y.Run(1); err != nil {
		t.Fatal(err)
	}
	if got := y.Outputs()[0].Float32()[4*8400+100]; got != fixtures.TheFace.Score {
		t.Errorf("yoloface score of candidate 100 = %v, want %v", got, fixtures.TheFace.Score)
	}
	if y.MaxBatch() != 1 {
		t.Errorf("a detector batches %d", y.MaxBatch())
	}
}

// TestBatchEqualsSingle runs 5 items at once and one at a time: results are identical.
func TestBatchEqualsSingle(t *testing.T) {
	dir := fixtures.Dir(t, "inswapper_128", "arcface_w600k_r50")
	for _, name := range []string{"inswapper_128", "arcface_w600k_r50"} {
		const n = 5
		s := openFixture(t, dir, name, 8)
		if s.MaxBatch() != 8 {
			t.Fatalf("%s: max batch %d, want 8", name, s.MaxBatch())
		}
		r := rand.New(rand.NewPCG(5, 6))
		for _, in := range s.Inputs() {
			randomize(r, in, -1, 1)
		}
		inputs := make([][]float32, len(s.Inputs()))
		for i, in := range s.Inputs() {
			inputs[i] = readAll(in)
		}
		if err := s.Run(n); err != nil {
			t.Fatal(err)
		}
		out := s.Outputs()[0]
		batched := readAll(out)
		for k := range n {
			for i, in := range s.Inputs() {
				in.SetFloat32(0, inputs[i][k*in.ItemLen():(k+1)*in.ItemLen()])
			}
			if err := s.Run(1); err != nil {
				t.Fatal(err)
			}
			single := out.Float32()[:out.ItemLen()]
			for j, v := range single {
				if v != batched[k*out.ItemLen()+j] {
					t.Fatalf("%s: item %d value %d: batch %d gives %v, batch 1 gives %v", name, k, j, n, batched[k*out.ItemLen()+j], v)
				}
			}
		}
		testenv.CheckError(t, "batch 9", s.Run(9), "batch 9 outside 1..8")
	}
}

// TestBuffersOutsideHeap checks every buffer starts on a page, in its own anonymous read-write
// mapping followed by the PROT_NONE guard page (so not in the Go heap).
func TestBuffersOutsideHeap(t *testing.T) {
	s := openFixture(t, fixtures.Dir(t, "inswapper_128"), "inswapper_128", 4)
	maps := readMaps(t)
	for _, b := range append(s.Inputs(), s.Outputs()...) {
		p := uintptr(unsafe.Pointer(&b.Bytes()[0]))
		if p%uintptr(os.Getpagesize()) != 0 {
			t.Errorf("%s: buffer at %#x is not page-aligned", b.Name, p)
		}
		span := (uintptr(len(b.Bytes())) + uintptr(os.Getpagesize()) - 1) / uintptr(os.Getpagesize()) * uintptr(os.Getpagesize())
		var data, guard *vma
		for i := range maps {
			if maps[i].start <= p && p < maps[i].end {
				data = &maps[i]
			}
			if maps[i].start <= p+span && p+span < maps[i].end {
				guard = &maps[i]
			}
		}
		if data == nil || data.perms != "rw-p" || data.path != "" || data.end != p+span {
			t.Errorf("%s: buffer %#x+%d is not in its own anonymous rw mapping: %+v", b.Name, p, span, data)
		}
		if guard == nil || guard.perms != "---p" {
			t.Errorf("%s: no guard page after the buffer: %+v", b.Name, guard)
		}
	}
	var goHeap []byte = make([]byte, 1<<20)
	g := uintptr(unsafe.Pointer(&goHeap[0]))
	for _, b := range s.Inputs() {
		p := uintptr(unsafe.Pointer(&b.Bytes()[0]))
		for _, m := range maps {
			if m.start <= p && p < m.end && m.start <= g && g < m.end {
				t.Errorf("%s shares a mapping with the Go heap", b.Name)
			}
		}
	}
}

type vma struct {
	start, end uintptr
	perms      string
	path       string
}

func readMaps(t *testing.T) []vma {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []vma
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		var v vma
		if _, err := fmt.Sscanf(fs[0], "%x-%x", &v.start, &v.end); err != nil {
			t.Fatal(err)
		}
		v.perms = fs[1]
		if len(fs) > 5 {
			v.path = fs[5]
		}
		out = append(out, v)
	}
	return out
}

func TestRunAllocatesNothing(t *testing.T) {
	s := openFixture(t, fixtures.HalfIODir(t), "inswapper_128_fp16", 4)
	for _, n := range []int{1, 4} {
		if a := testing.AllocsPerRun(20, func() {
			if err := s.Run(n); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("Run(%d) allocates %v times", n, a)
		}
	}
}

func TestPinnedLogLine(t *testing.T) {
	infer.ResetPinNote()
	var l logLines
	s, err := infer.OpenSession(catalog.Must("gfpgan_1.4").Spec(), infer.SessionConfig{ModelsDir: fixtures.Dir(t, "gfpgan_1.4"), Library: testenv.ORTLibrary(t), Logf: l.logf})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// This machine has no CUDA runtime: one line says why the buffers are not pinned.
	if len(l.lines) != 1 || !strings.HasPrefix(l.lines[0], "buffers not pinned: ") || !strings.Contains(l.lines[0], "libcudart") {
		t.Errorf("log lines %q, want one \"buffers not pinned: …libcudart…\"", l.lines)
	}
	for _, b := range s.Inputs() {
		if b.Pinned() {
			t.Errorf("%s pinned without CUDA", b.Name)
		}
	}
}

// TestProvidersWithoutGPU: on this machine (no GPU, CPU-only ONNX Runtime), cuda or tensorrt
// alone is refused with a clear error; a list ending in cpu falls back with one log line.
func TestProvidersWithoutGPU(t *testing.T) {
	dir := fixtures.Dir(t, "gfpgan_1.4")
	lib := testenv.ORTLibrary(t)
	for _, ps := range [][]string{{"cuda"}, {"tensorrt"}, {"tensorrt", "cuda"}} {
		_, err := infer.OpenSession(catalog.Must("gfpgan_1.4").Spec(), infer.SessionConfig{ModelsDir: dir, Library: lib, Execution: infer.Execution{Providers: ps}, Logf: func(string, ...any) {}})
		testenv.CheckError(t, strings.Join(ps, " "), err, "gfpgan_1.4.onnx", "execution providers "+strings.Join(ps, " "), "none is available", "add cpu")
	}
	infer.SpendPinNote() // keep the pinning line out of this test's log
	var l logLines
	s, err := infer.OpenSession(catalog.Must("gfpgan_1.4").Spec(), infer.SessionConfig{ModelsDir: dir, Library: lib,
		Execution: infer.Execution{Providers: []string{"TensorRT", "cuda", "cpu"}, TensorRTFP16: true, TensorRTCacheDir: t.TempDir()}, Logf: l.logf})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Providers(); len(got) != 1 || got[0] != "cpu" {
		t.Errorf("providers %v, want [cpu]", got)
	}
	if len(l.lines) != 1 || !strings.Contains(l.lines[0], "using cpu; unavailable: tensorrt: ") || !strings.Contains(l.lines[0], "cuda: ") {
		t.Errorf("log lines %q, want one fallback line naming tensorrt and cuda", l.lines)
	}
	if err := s.Run(1); err != nil {
		t.Fatal(err)
	}
	_, err = infer.ParseProviders([]string{"cuda", "rocm"})
	testenv.CheckError(t, "unknown provider", err, `"rocm"`, "tensorrt, cuda or cpu")
}

// BenchmarkSessionBatch runs the inswapper fixture at batch 1 and batch 8; ns/item is the cost
// of one face.
func BenchmarkSessionBatch(b *testing.B) {
	dir := fixtures.Dir(b, "inswapper_128")
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("batch%d", n), func(b *testing.B) {
			s := openFixture(b, dir, "inswapper_128", n)
			for b.Loop() {
				if err := s.Run(n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/item")
		})
	}
}

// TestScalarInput: a 0-d input (styleganex_age's 'direction', FaceFusion's numpy.array(x)) is
// passed at each run with the value its buffer holds then: the stand-in's output moves by the
// direction's gain per channel.
func TestScalarInput(t *testing.T) {
	dir := fixtures.Dir(t, "styleganex_age")
	s := openFixture(t, dir, "styleganex_age", 1)
	out := func(d float32) [3]float32 {
		s.Input("direction").Item(0).Float32()[0] = d
		if err := s.Run(1); err != nil {
			t.Fatal(err)
		}
		o := s.Outputs()[0].Item(0).Float32()
		plane := len(o) / 3
		return [3]float32{o[0], o[plane], o[2*plane]}
	}
	a, b := out(0), out(2)
	for c := range 3 {
		want := 2 * fixtures.AgeDirGain[c][0]
		if d := b[c] - a[c]; d < want-1e-5 || d > want+1e-5 {
			t.Errorf("channel %d: direction 2 moves the output by %v, want %v", c, d, want)
		}
	}
}
