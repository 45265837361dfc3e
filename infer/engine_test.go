package infer_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// engineFixture opens fixture name (in dir) as an engine for workers at maxBatch.
func engineFixture(t testing.TB, dir, name string, maxBatch int, ec infer.EngineConfig) *infer.Engine {
	t.Helper()
	e, err := infer.NewEngine(openUnclosed(t, dir, name, maxBatch), ec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	return e
}

// openUnclosed is openFixture for a session whose closing is someone else's (an engine's).
func openUnclosed(t testing.TB, dir, name string, maxBatch int) *infer.Session {
	t.Helper()
	cfg := infer.SessionConfig{ModelsDir: dir, Library: testenv.ORTLibrary(t), MaxBatch: maxBatch, Logf: func(string, ...any) {}}
	s, err := infer.OpenSession(catalog.Must(name).Spec(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// itemInputs holds the inputs itemInput made, so each is generated once per test binary.
var itemInputs sync.Map

// itemInput is the input named name of test item id: values in [-1, 1) from a generator seeded
// by both, so any goroutine packs the same item alike.
func itemInput(id int, name string, n int) []float32 {
	key := fmt.Sprint(id, name, n)
	if v, ok := itemInputs.Load(key); ok {
		return v.([]float32)
	}
	seed := uint64(0)
	for _, c := range name {
		seed = seed*31 + uint64(c)
	}
	r := rand.New(rand.NewPCG(uint64(id), seed))
	v := make([]float32, n)
	for i := range v {
		v[i] = 2*r.Float32() - 1
	}
	itemInputs.Store(key, v)
	return v
}

// engineModels are the fixtures the engine tests run: batched float32 with two inputs (also
// around float16 weights), batched with one output of another shape, and an unbatched model
// with a float64 input of no batch axis (codeformer's weight, which makes its session batch
// 1); TestEngineMatchesBatchOne adds batched float16 inputs (fixtures.HalfIODir).
var engineModels = []string{"inswapper_128", "inswapper_128_fp16", "arcface_w600k_r50", "codeformer"}

// itemWeight is codeformer's weight for test item id, packed with the item like any input.
func itemWeight(id int) float64 { return 0.25 + float64(id)/64 }

// singleResults runs every item alone on a batch-1 session: the reference.
func singleResults(t *testing.T, dir, name string, items int) [][]byte {
	s := openFixture(t, dir, name, 1)
	out := make([][]byte, items)
	for id := range items {
		for _, in := range s.Inputs() {
			if in.Type == infer.Float64 {
				in.Float64()[0] = itemWeight(id)
			} else {
				in.SetFloat32(0, itemInput(id, in.Name, in.ItemLen()))
			}
		}
		if err := s.Run(1); err != nil {
			t.Fatal(err)
		}
		for _, o := range s.Outputs() {
			out[id] = append(out[id], o.Item(0).Bytes()...)
		}
	}
	return out
}

// TestEngineMatchesBatchOne runs items from many goroutines through one engine, in claims of
// 1 to 3 items that the batcher coalesces as the goroutines meet (full, all waiting, or the
// deadline): every item's outputs are bit-identical to the item run alone at batch 1, whatever
// the number of workers and the batch size. Under -race it is the engine's race test.
//
// The fixtures above compute exactly in any order (one-hot products, sums of a few terms); the
// heavy swapper (fixtures.WriteHeavy: eight chained dense 512×512 MatMuls per item, as a real
// network spends its time) is where a batch's shape could change the arithmetic (another GEMM
// blocking, another summation order): on the CPU provider it does not. A GPU provider chooses
// its kernels by shape; make gpu-check compares batch 8 and 32 with batch 1 there.
func TestEngineMatchesBatchOne(t *testing.T) {
	dir := fixtures.Dir(t, engineModels...)
	heavy := t.TempDir()
	if err := fixtures.WriteHeavy(filepath.Join(heavy, "inswapper_128.onnx"), "inswapper_128", 2<<20, 3); err != nil {
		t.Fatal(err)
	}
	type model struct{ dir, name string }
	var models []model
	for _, name := range engineModels {
		models = append(models, model{dir, name})
	}
	models = append(models, model{fixtures.HalfIODir(t), "inswapper_128_fp16"}, model{heavy, "inswapper_128"})
	for k, m := range models {
		dir, name := m.dir, m.name
		items, cases := 24, []struct{ maxBatch, workers int }{{8, 1}, {8, 3}, {4, 8}, {1, 4}, {1, 1}}
		switch {
		case name == "codeformer": // batch 1 whatever is asked, and 3 MB an item: fewer
			items, cases = 8, cases[3:]
		case k == len(models)-1: // the heavy swapper: 0.2 GFLOP an item, so fewer
			items, cases = 10, cases[1:3]
			name = "inswapper_128 (dense)"
		case k == len(models)-2:
			name = "inswapper_128_fp16 (float16 inputs)"
		}
		want := singleResults(t, dir, m.name, items)
		for _, c := range cases {
			e := engineFixture(t, dir, m.name, c.maxBatch, infer.EngineConfig{Workers: c.workers, Runs: c.workers})
			var wg sync.WaitGroup
			errs := make(chan error, c.workers)
			for w := range c.workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(w), 7))
					// Worker w takes items w, w+workers, … in claims of 1 to 3.
					var mine []int
					for id := w; id < items; id += c.workers {
						mine = append(mine, id)
					}
					for len(mine) > 0 {
						n := min(len(mine), 1+r.IntN(3), e.MaxBatch())
						if err := runItems(e, mine[:n], want); err != nil {
							errs <- fmt.Errorf("%s at max batch %d, %d workers: %w", name, c.maxBatch, c.workers, err)
							return
						}
						mine = mine[n:]
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			st := e.Stats()
			if st.Items != int64(items) {
				t.Errorf("%s at max batch %d, %d workers: %d items run, want %d", name, c.maxBatch, c.workers, st.Items, items)
			}
			if e.MaxBatch() == 1 && e.Batches() != c.workers {
				t.Errorf("%s at batch 1: %d batch buffers for %d workers", name, e.Batches(), c.workers)
			}
		}
	}
}

// runItems packs ids into one lease, runs it and compares each item's outputs with want[id],
// in place.
func runItems(e *infer.Engine, ids []int, want [][]byte) error {
	l, err := e.Claim(len(ids))
	if err != nil {
		return err
	}
	defer l.Release()
	for i, id := range ids {
		for k, t := range e.Signature().Inputs {
			if v := l.In(k, i); t.Type == infer.Float64 {
				v.Float64()[0] = itemWeight(id)
			} else {
				v.SetFloat32(0, itemInput(id, t.Name, v.Len()))
			}
		}
	}
	if err := l.Run(); err != nil {
		return err
	}
	for i, id := range ids {
		w := want[id]
		for k := range e.Signature().Outputs {
			out := l.Output(k, i).Bytes()
			if !bytes.Equal(out, w[:len(out)]) {
				return fmt.Errorf("item %d, output %d differs from its batch-1 result (lease of %d items)", id, k, len(ids))
			}
			w = w[len(out):]
		}
	}
	return nil
}

// TestEngineBatches follows the batcher's decisions where they are certain: eight workers'
// single items make one run of eight; a claim that does not fit spills into a second batch; a
// lone item runs at its deadline; an item released unrun still lets its batch run.
func TestEngineBatches(t *testing.T) {
	dir := fixtures.Dir(t, "arcface_w600k_r50")
	want := singleResults(t, dir, "arcface_w600k_r50", 10)

	// Eight workers, one item each: the eighth fills the batch. The deadlines here are long
	// enough never to pass unless the rule under test fails (Stats.Expired then says so).
	e := engineFixture(t, dir, "arcface_w600k_r50", 8, infer.EngineConfig{Workers: 8, Deadline: 20 * time.Second})
	var wg sync.WaitGroup
	for id := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := runItems(e, []int{id}, want); err != nil {
				t.Error("one run of 8:", err)
			}
		}()
	}
	wg.Wait()
	if st := e.Stats(); st.Runs != 1 || st.Items != 8 || st.Expired != 0 {
		t.Errorf("8 workers × 1 item: %d runs of %d items, %d at the deadline; want 1 run of 8, none", st.Runs, st.Items, st.Expired)
	}

	// Two workers claim 5 items each: the second claim fills the first batch (5+3) and opens a
	// second (2); once both wait, the open one runs without its deadline.
	e = engineFixture(t, dir, "arcface_w600k_r50", 8, infer.EngineConfig{Workers: 2, Deadline: 20 * time.Second})
	var ls [2]infer.Lease
	for w := range ls {
		var err error
		if ls[w], err = e.Claim(5); err != nil {
			t.Fatal(err)
		}
	}
	if p0, p1 := infer.LeaseParts(&ls[0]), infer.LeaseParts(&ls[1]); !slices.Equal(p0, []int{5}) || !slices.Equal(p1, []int{3, 2}) {
		t.Fatalf("claims of 5 and 5 at max batch 8: parts %v and %v, want [5] and [3 2]", p0, p1)
	}
	for w := range ls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := &ls[w]
			defer l.Release()
			for i := range 5 {
				l.Input("input", i).SetFloat32(0, itemInput(5*w+i, "input", 3*112*112))
			}
			if err := l.Run(); err != nil {
				t.Error(err)
				return
			}
			for i := range 5 {
				if !bytes.Equal(l.Output(0, i).Bytes(), want[5*w+i]) {
					t.Errorf("spilled claim: item %d differs from its batch-1 result", 5*w+i)
				}
			}
		}()
	}
	wg.Wait()
	if st := e.Stats(); st.Runs != 2 || st.Items != 10 || st.Expired != 0 {
		t.Errorf("claims of 5 and 5: %d runs of %d items, %d at the deadline; want 2 runs of 10, none", st.Runs, st.Items, st.Expired)
	}

	// One of eight workers: its item waits for nobody else but its deadline.
	e = engineFixture(t, dir, "arcface_w600k_r50", 8, infer.EngineConfig{Workers: 8, Deadline: time.Millisecond})
	if err := runItems(e, []int{9}, want); err != nil {
		t.Fatal("deadline:", err)
	}
	if st := e.Stats(); st.Runs != 1 || st.Items != 1 || st.Expired != 1 {
		t.Errorf("a lone item: %d runs of %d items, %d at the deadline; want 1 run of 1, at the deadline", st.Runs, st.Items, st.Expired)
	}

	// A worker that claims and releases without running (a packing error) does not hold its
	// batch back; the other worker's item is still right.
	e = engineFixture(t, dir, "arcface_w600k_r50", 8, infer.EngineConfig{Workers: 2, Deadline: 20 * time.Second})
	dropped, err := e.Claim(1)
	if err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := runItems(e, []int{3}, want); err != nil {
			t.Error("beside a dropped item:", err)
		}
	}()
	dropped.Release()
	wg.Wait()
	if st := e.Stats(); st.Items != 2 {
		t.Errorf("dropped item: %d items run, want 2 (the dropped one runs unread)", st.Items)
	}

	// A worker's claim, run and release allocate nothing.
	one := engineFixture(t, dir, "arcface_w600k_r50", 8, infer.EngineConfig{Workers: 1})
	if a := testing.AllocsPerRun(20, func() {
		l, err := one.Claim(3)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Run(); err != nil {
			t.Fatal(err)
		}
		l.Release()
	}); a != 0 {
		t.Errorf("claim, run, release: %v allocations", a)
	}

	if _, err := e.Claim(9); err == nil {
		t.Error("a claim of 9 at max batch 8 was accepted")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = e.Claim(1)
	testenv.CheckError(t, "claim after close", err, "arcface_w600k_r50", "Claim after Close")
}

// TestEngineSet: the models a rank's workers open through one set are one engine per file,
// whatever each opener asks; SetWorkers grows the batch-1 pools of engines open and to come; an
// engine's own Close leaves it to the set, whose Close ends them all.
func TestEngineSet(t *testing.T) {
	dir := fixtures.Dir(t, "arcface_w600k_r50", "gfpgan_1.4")
	set := infer.NewEngineSet(infer.EngineConfig{Workers: 1, Runs: 8})
	defer set.Close()
	cfg := infer.SessionConfig{ModelsDir: dir, Library: testenv.ORTLibrary(t), MaxBatch: 1, Engines: set, Logf: func(string, ...any) {}}
	open := func(name string, maxBatch int) *infer.Engine {
		t.Helper()
		c := cfg
		c.MaxBatch = maxBatch
		e, err := infer.OpenEngine(catalog.Must(name).Spec(), c)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	a := open("arcface_w600k_r50", 1)
	if b := open("arcface_w600k_r50", 8); b != a || a.MaxBatch() != 1 || a.Batches() != 1 {
		t.Fatalf("second open: engine %p (first %p), max batch %d, %d batch buffers; want the first, 1, 1", b, a, a.MaxBatch(), a.Batches())
	}
	// Dims shape the buffers: a second open asking other shapes is refused, naming both.
	c := cfg
	c.Dims = map[string][]int64{"input": {1, 3, 112, 112}}
	_, err := infer.OpenEngine(catalog.Must("arcface_w600k_r50").Spec(), c)
	testenv.CheckError(t, "second open with other dims", err, "arcface_w600k_r50", "dims none", "input=[1 3 112 112]")
	if err := set.SetWorkers(4); err != nil {
		t.Fatal(err)
	}
	g := open("gfpgan_1.4", 1)
	if a.Batches() != 4 || g.Batches() != 4 {
		t.Errorf("after SetWorkers(4): %d and %d batch buffers, want 4 and 4", a.Batches(), g.Batches())
	}
	if got := set.Engines(); len(got) != 2 || got["arcface_w600k_r50"] != a || got["gfpgan_1.4"] != g {
		t.Errorf("the set's engines %v, want arcface_w600k_r50 and gfpgan_1.4", got)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := runItems(a, []int{0}, singleResults(t, dir, "arcface_w600k_r50", 1)); err != nil {
		t.Fatalf("after the engine's own Close, its set's engine should still run: %v", err)
	}
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = a.Claim(1)
	testenv.CheckError(t, "claim after the set's Close", err, "arcface_w600k_r50", "Claim after Close")
	if again := open("arcface_w600k_r50", 1); again == a {
		t.Error("after Close the set handed out the closed engine")
	}
}

// TestLeaseCopies: a Lease copied and released twice gives its items back once; the batch it
// shares with another worker's live lease stays leased until that one is released too, and the
// released copy can no longer run.
func TestLeaseCopies(t *testing.T) {
	e := engineFixture(t, fixtures.Dir(t, "arcface_w600k_r50"), "arcface_w600k_r50", 8, infer.EngineConfig{Workers: 2, Deadline: 20 * time.Second})
	a, err := e.Claim(1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Claim(1) // the same batch as a's item
	if err != nil {
		t.Fatal(err)
	}
	copied := a
	done := make(chan struct{})
	go func() { // a's release runs it, and waits for b's item to run with it
		defer close(done)
		a.Release()
		copied.Release()
	}()
	if err := b.Run(); err != nil {
		t.Fatal(err)
	}
	<-done
	if free := infer.FreeBatches(e); free != e.Batches()-1 {
		t.Errorf("a lease released twice: %d of %d batch buffers free while another lease holds one", free, e.Batches())
	}
	if err := copied.Run(); err == nil {
		t.Error("a released lease's copy ran")
	}
	b.Release()
	if free := infer.FreeBatches(e); free != e.Batches() {
		t.Errorf("every lease released: %d of %d batch buffers free", free, e.Batches())
	}
}

// TestEngineCloseBounded: Close does not wait for ever on a lease a worker never released: after
// CloseWait it says which model, and closes once the lease comes back.
func TestEngineCloseBounded(t *testing.T) {
	before := infer.OpenSessions()
	e, err := infer.NewEngine(openUnclosed(t, fixtures.Dir(t, "arcface_w600k_r50"), "arcface_w600k_r50", 1), infer.EngineConfig{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	l, err := e.Claim(1)
	if err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { infer.CloseWait = d }(infer.CloseWait)
	infer.CloseWait = time.Millisecond
	testenv.CheckError(t, "close with a lease held", e.Close(), "arcface_w600k_r50", "still leased")
	if infer.OpenSessions() != before+1 {
		t.Errorf("a refused Close: %d sessions open, want %d (left open for the lease)", infer.OpenSessions(), before+1)
	}
	l.Release()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if infer.OpenSessions() != before {
		t.Errorf("after Close: %d sessions open, want %d", infer.OpenSessions(), before)
	}
}

// TestEngineRunsConcurrently: at batch 1 two workers' runs are inside ONNX Runtime on the shared
// session at the same moment, so no lock is held around a run. The first run to get there waits
// (yielding, a bounded number of times) for the second: behind a lock it would wait in vain.
func TestEngineRunsConcurrently(t *testing.T) {
	e := engineFixture(t, fixtures.Dir(t, "gfpgan_1.4"), "gfpgan_1.4", 1, infer.EngineConfig{Workers: 2, Runs: 2})
	infer.SetRunHook(func(s *infer.Session) {
		for i := 0; i < 1_000_000 && infer.InFlight(s) < 2; i++ {
			runtime.Gosched()
		}
	})
	defer infer.SetRunHook(nil)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := e.Claim(1)
			if err != nil {
				t.Error(err)
				return
			}
			defer l.Release()
			if err := l.Run(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if st := e.Stats(); st.MaxInFlight != 2 || st.Runs != 2 {
		t.Errorf("two workers at batch 1: %d runs, at most %d in flight at once, want 2 and 2", st.Runs, st.MaxInFlight)
	}
}

// TestEngineRunsBounded: a batch-1 engine keeps at most Runs buffers however many workers share
// it, so its buffers and the runtime's working memory per run in flight do not grow with the
// workers; the workers past the bound wait for a buffer and every item still runs.
func TestEngineRunsBounded(t *testing.T) {
	e := engineFixture(t, fixtures.Dir(t, "gfpgan_1.4"), "gfpgan_1.4", 1, infer.EngineConfig{Workers: 8, Runs: 2})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				l, err := e.Claim(1)
				if err != nil {
					t.Error(err)
					return
				}
				if err := l.Run(); err != nil {
					t.Error(err)
				}
				l.Release()
			}
		}()
	}
	wg.Wait()
	if st := e.Stats(); e.Batches() != 2 || st.Runs != 24 || st.MaxInFlight > 2 {
		t.Errorf("8 workers, 2 runs in flight at most: %d buffers, %d runs, %d in flight at once; want 2, 24, ≤ 2", e.Batches(), st.Runs, st.MaxInFlight)
	}
}

// BenchmarkEngineClaim is the batcher's own cost per item (claim, run of a trivial model,
// release) at batch 1 and 8 with one worker.
func BenchmarkEngineClaim(b *testing.B) {
	dir := fixtures.Dir(b, "arcface_w600k_r50")
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("batch%d", n), func(b *testing.B) {
			e := engineFixture(b, dir, "arcface_w600k_r50", n, infer.EngineConfig{Workers: 1})
			for b.Loop() {
				l, err := e.Claim(n)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Run(); err != nil {
					b.Fatal(err)
				}
				l.Release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/item")
		})
	}
}

// TestHeavyFixtures checks the memory benchmark's models at a small size: FaceFusion's
// signatures, every weight non-zero, inswapper's emap last, and their arithmetic against a
// float64 reference: output = x + mean(W[argmax(pick)]) + mean(x·Vᴸ), where the last mean is
// (column sums of x)·Vᴸ·1 / (rows·512).
func TestHeavyFixtures(t *testing.T) {
	dir := t.TempDir()
	for i, name := range fixtures.HeavyNames {
		path := filepath.Join(dir, name+".onnx")
		if err := fixtures.WriteHeavy(path, name, 4<<20, uint64(i+1)); err != nil {
			t.Fatal(err)
		}
		inits, err := infer.ReadInitializers(path)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]*infer.Initializer{}
		for k := range inits {
			byName[inits[k].Name] = &inits[k]
			if n := inits[k].Name; (n == "w" || n == "v") && slices.Contains(inits[k].Data, 0) {
				t.Errorf("%s: weights %s hold a zero", name, n)
			}
		}
		w, v := byName["w"], byName["v"]
		if w == nil || v == nil || len(w.Data)*4 > 4<<20 || len(w.Data)*4 < 3<<20 {
			t.Fatalf("%s: weights w %v, v %v: want about 4 MB of w and a 512×512 v", name, w != nil, v != nil)
		}
		if name == "inswapper_128" {
			if _, err := infer.Emap(path); err != nil {
				t.Fatal(err)
			}
		}
		s := openFixture(t, dir, name, 1)
		x, pick, layers, xRows := s.Inputs()[0], s.Inputs()[0], 1, 1536
		if name == "inswapper_128" {
			pick, layers, xRows = s.Input("source"), 8, 96
		}
		randomize(rand.New(rand.NewPCG(1, uint64(i))), x, 0, 1)
		if pick != x {
			randomize(rand.New(rand.NewPCG(2, uint64(i))), pick, 0, 1)
		}
		if err := s.Run(1); err != nil {
			t.Fatal(err)
		}
		p := pick.Float32()
		arg := 0
		for k := range p {
			if p[k] > p[arg] {
				arg = k
			}
		}
		cols := int(w.Dims[1])
		var a float64
		for _, f := range w.Data[arg*cols : (arg+1)*cols] {
			a += float64(f)
		}
		a /= float64(cols)
		xs := x.Float32()
		u := make([]float64, 512)
		for r := range xRows {
			for k := range 512 {
				u[k] += float64(xs[r*512+k])
			}
		}
		for range layers {
			next := make([]float64, 512)
			for k := range 512 {
				for c := range 512 {
					next[c] += u[k] * float64(v.Data[k*512+c])
				}
			}
			u = next
		}
		var b float64
		for _, f := range u {
			b += f
		}
		b /= float64(xRows * 512)
		got := s.Outputs()[0].Float32()
		for _, k := range []int{0, len(got) / 2, len(got) - 1} {
			if want := float64(xs[k]) + a + b; math.Abs(float64(got[k])-want) > 1e-4*(1+math.Abs(want)) {
				t.Errorf("%s: output[%d] = %v, want %v (x %v, gathered mean %v, product mean %v)", name, k, got[k], want, xs[k], a, b)
			}
		}
	}
}

// TestEngineSetRuns: the set's bound on batch-1 runs in flight (the rank's CPUs) holds for the
// engines it opens, however many workers it is sized for.
func TestEngineSetRuns(t *testing.T) {
	set := infer.NewEngineSet(infer.EngineConfig{Workers: 1})
	defer set.Close()
	set.SetRuns(2)
	if err := set.SetWorkers(8); err != nil {
		t.Fatal(err)
	}
	cfg := infer.SessionConfig{ModelsDir: fixtures.Dir(t, "gfpgan_1.4"), Library: testenv.ORTLibrary(t), MaxBatch: 1, Engines: set, Logf: func(string, ...any) {}}
	e, err := infer.OpenEngine(catalog.Must("gfpgan_1.4").Spec(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if e.Batches() != 2 {
		t.Errorf("8 workers, runs bounded at 2: %d batch buffers, want 2", e.Batches())
	}
}
