package audio

import (
	"context"
	"errors"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// smallBlocks makes the disk transform's blocks a few values, so that a short signal crosses
// many of them (and a block's edge falls mid-row), for the test.
func smallBlocks(t *testing.T, values int) {
	old := diskBlock
	diskBlock = values
	t.Cleanup(func() { diskBlock = old })
}

// The disk transform's first count bins agree with the definition's, for lengths prime (997,
// 1009), twice a prime, smooth and 1, counts of a few bins to all of them, blocks of 1 to
// whole rows; and its folder is gone after close, with nothing else in its parent touched.
func TestDiskDFTMatchesDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	parent := t.TempDir()
	keep := parent + "/theirs"
	if err := os.WriteFile(keep, []byte("a file the transform did not make"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ n, count, block int }{
		{997, 997, 7}, {1009, 170, 64}, {2 * 503, 168, 1}, {960, 961 / 2, 1 << 10}, {1, 1, 4}, {2, 2, 3}, {3001, 3001, 100},
	} {
		smallBlocks(t, c.block)
		x := randomSignal(rng, c.n)
		want := dft(x, false)
		d, err := newDiskDFT(context.Background(), parent, c.n, c.count, &diskBuffers{})
		if err != nil {
			t.Fatal(err)
		}
		got := make([]complex128, c.count)
		seen := make([]int, c.count)
		if err := d.transform(func(j int) complex128 { return x[j] }, func(k int, v complex128) { got[k] = v; seen[k]++ }); err != nil {
			t.Fatal(err)
		}
		dir := d.dir
		if err := d.close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("n=%d: its folder %s is left after close (%v)", c.n, dir, err)
		}
		var worst, scale float64
		for k := range got {
			if seen[k] != 1 {
				t.Fatalf("n=%d: bin %d handed %d times", c.n, k, seen[k])
			}
			worst = max(worst, cmplx.Abs(got[k]-want[k]))
			scale = max(scale, cmplx.Abs(want[k]))
		}
		t.Logf("n=%d, count %d: max error %.3g of %.3g", c.n, c.count, worst, scale)
		if worst > 1e-12*max(scale, 1) {
			t.Errorf("n=%d, count %d: max error %g (of %g)", c.n, c.count, worst, scale)
		}
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a file beside the transform's folders is gone: %v", err)
	}
}

// A track transformed on disk gives the whole-signal resample (each channel's Resample, in
// memory, then their mean) to within 1e-13 of its peak, at lengths a channel prime (100003;
// 33334 after), twice a prime (2·50021), smooth (96000) and one whose resampled length is
// prime (3·10007+1), with blocks that split rows; and the scratch folder is gone after.
func TestResampleOnDiskMatchesWhole(t *testing.T) {
	smallBlocks(t, 1<<12)
	defer TransformOnDiskAbove(0)()
	rng := rand.New(rand.NewPCG(13, 14))
	scratch := t.TempDir()
	for _, n := range []int{100003, 2 * 50021, 96000, 3*10007 + 1} {
		voice := make([]float32, n*Channels)
		for i := range voice {
			voice[i] = float32(rng.NormFloat64() * (1 + math.Sin(float64(i)*1e-4)))
		}
		want := Mono(ResampleVoice(voice), Channels)
		got, err := ResampleVoiceMono(context.Background(), voice, scratch)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("n=%d: %d samples, want %d", n, len(got), len(want))
		}
		worst, peak := 0.0, Peak(want)
		for i := range want {
			worst = max(worst, math.Abs(got[i]-want[i]))
		}
		t.Logf("n=%d → %d: max difference %.3g of peak %.3g", n, len(want), worst, peak)
		if worst > 1e-13*peak {
			t.Errorf("n=%d: the resample on disk differs from the whole-signal one by %.3g (peak %.3g)", n, worst, peak)
		}
	}
	if left, err := os.ReadDir(scratch); err != nil || len(left) != 0 {
		t.Errorf("the scratch folder holds %v after the resamples (%v)", left, err)
	}
}

// A scratch folder that cannot be made is an error that says what it was for, not a panic
// or a resample without it.
func TestResampleOnDiskNoScratch(t *testing.T) {
	defer TransformOnDiskAbove(0)()
	notDir := t.TempDir() + "/file"
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ResampleVoiceMono(context.Background(), make([]float32, 2*3001), notDir)
	if err == nil || !strings.Contains(err.Error(), "scratch folder") {
		t.Errorf("a scratch parent that is a file: %v, want the scratch folder's error", err)
	}
}

// A stop during the transform on disk ends it with the context's error, and its scratch
// folder is gone: a feature-length track's resample takes minutes on rank 0, more than a
// scheduler's TERM window.
func TestResampleOnDiskStops(t *testing.T) {
	smallBlocks(t, 1<<10)
	defer TransformOnDiskAbove(0)()
	scratch := t.TempDir()
	ctx := &stopAfter{Context: context.Background(), left: 5}
	_, err := ResampleVoiceMono(ctx, make([]float32, 2*100003), scratch)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a stop mid-transform: %v, want context.Canceled", err)
	}
	if left, err := os.ReadDir(scratch); err != nil || len(left) != 0 {
		t.Errorf("the scratch folder holds %v after a stop (%v)", left, err)
	}
}

// stopAfter is a context stopped once Err has been asked left times: a stop in the middle
// of a transform, whatever the machine's speed.
type stopAfter struct {
	context.Context
	left int
}

func (s *stopAfter) Err() error {
	if s.left--; s.left < 0 {
		return context.Canceled
	}
	return nil
}

// A stop ends the voice extractor between windows.
func TestExtractVoiceStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ExtractVoice(ctx, make([]int16, 2*VoiceChunk*3), scaleModel{}, 1)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a stopped extractor: %v, want context.Canceled", err)
	}
}

// ScratchBytes is what the resample's two transforms on disk write at their largest, the
// forward one's or the inverse's files, for lengths prime and smooth; 0 for a track that is
// resampled in memory.
func TestScratchBytes(t *testing.T) {
	if ScratchBytes(48000) != 0 {
		t.Errorf("a 1 s track takes %d bytes of scratch, want 0 (in memory)", ScratchBytes(48000))
	}
	defer TransformOnDiskAbove(0)()
	for _, n := range []int{3001, 48000, 100003} {
		num := VoiceSamples(n)
		var largest int64
		for _, c := range [][2]int{{n, num/2 + 1}, {num, num}} { // ResampleVoiceMono's two
			d, err := newDiskDFT(context.Background(), t.TempDir(), c[0], c[1], &diskBuffers{})
			if err != nil {
				t.Fatal(err)
			}
			if err := d.transform(func(int) complex128 { return 0 }, func(int, complex128) {}); err != nil {
				t.Fatal(err)
			}
			var size int64
			for _, f := range []*os.File{d.kern, d.data} {
				st, err := f.Stat()
				if err != nil {
					t.Fatal(err)
				}
				size += st.Size()
			}
			largest = max(largest, size)
			if err := d.close(); err != nil {
				t.Fatal(err)
			}
		}
		if got := ScratchBytes(n); got != largest {
			t.Errorf("n=%d: ScratchBytes %d, the transforms wrote %d", n, got, largest)
		}
	}
}

// A scratch folder removed while the transform runs (a cleaner of temp folders) is no failure:
// the open files serve to the end, the bins are the definition's, and close has nothing left
// to remove.
func TestDiskDFTScratchRemoved(t *testing.T) {
	const n, count = 1009, 100
	d, err := newDiskDFT(context.Background(), t.TempDir(), n, count, &diskBuffers{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(d.dir); err != nil {
		t.Fatal(err)
	}
	x := make([]complex128, n)
	for j := range x {
		x[j] = complex(math.Sin(float64(j)), 0)
	}
	got := make([]complex128, count)
	if err := d.transform(func(j int) complex128 { return x[j] }, func(k int, v complex128) { got[k] = v }); err != nil {
		t.Fatalf("the transform with its folder removed: %v", err)
	}
	if err := d.close(); err != nil {
		t.Errorf("close with the folder already removed: %v, want nil", err)
	}
	for k := range got {
		var want complex128
		for j, v := range x {
			want += v * cmplx.Exp(complex(0, -2*math.Pi*float64(j*k%n)/n))
		}
		if cmplx.Abs(got[k]-want) > 1e-9*n {
			t.Fatalf("bin %d: %v, want %v", k, got[k], want)
		}
	}
}

// A stop while a batch of windows runs ends it after the model run in progress: the windows
// queued behind it for the model are not run (with the real extractor on a CPU node, each is
// seconds, and a batch as many windows as the node has cores).
func TestExtractVoiceStopsInABatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := &stoppingModel{stop: cancel}
	_, err := ExtractVoice(ctx, make([]int16, 2*(3*VoiceStep+1)), m, 4) // four windows, one batch
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a stop mid-batch: %v, want context.Canceled", err)
	}
	if m.runs != 1 {
		t.Errorf("the model ran %d times after the stop came in its first run, want 1", m.runs)
	}
}

// stoppingModel is scaleModel that stops its context in its first run, and counts its runs.
type stoppingModel struct {
	scaleModel
	stop func()
	runs int // guarded by ExtractVoice's lock on the model
}

func (m *stoppingModel) Run(in []float32, blocks int) ([]float32, error) {
	m.runs++
	m.stop()
	return m.scaleModel.Run(in, blocks)
}
