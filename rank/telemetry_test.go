package rank

import (
	"encoding/json"
	"errors"
	"math"
	"sync"
	"testing"
	"time"
)

// readings is the one allowed stand-in for NVML (which cannot run without a GPU): a fixed list
// of samples, then an error for every further read.
type readings struct {
	mu   sync.Mutex
	list []GPUReading
	errs int
}

func (r *readings) Read() (GPUReading, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.list) == 0 {
		r.errs++
		return GPUReading{}, errors.New("GPU is lost")
	}
	g := r.list[0]
	r.list = r.list[1:]
	return g, nil
}

func TestGPUStatsAggregate(t *testing.T) {
	var s GPUStats
	for _, r := range []GPUReading{
		{Utilization: 0.2, MemoryUsedBytes: 3 << 30, PowerWatts: 100, TemperatureC: 50},
		{Utilization: 0.9, MemoryUsedBytes: 5 << 30, PowerWatts: 300, TemperatureC: 71},
		{Utilization: 0.4, MemoryUsedBytes: 4 << 30, PowerWatts: 200, TemperatureC: 64},
	} {
		s.add(r)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if s.Samples != 3 || !near(s.UtilizationMean, 0.5) || s.UtilizationMax != 0.9 || s.MemoryUsedMaxBytes != 5<<30 ||
		!near(s.PowerMeanWatts, 200) || s.PowerMaxWatts != 300 || s.TemperatureMaxC != 71 {
		t.Errorf("aggregate %+v", s)
	}
}

// The sampler runs on its own ticker; Stop returns what it saw, read errors counted apart.
func TestSamplerStops(t *testing.T) {
	src := &readings{list: []GPUReading{{Utilization: 1, PowerWatts: 10}, {Utilization: 0, PowerWatts: 30}}}
	s := StartSampler(src, GPUStats{Available: true, Name: "fake"}, time.Millisecond)
	for {
		src.mu.Lock()
		errs := src.errs
		src.mu.Unlock()
		if errs > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	got := s.Stop()
	if !got.Available || got.Name != "fake" || got.Samples != 2 || got.UtilizationMean != 0.5 || got.PowerMaxWatts != 30 ||
		got.ReadErrors == 0 || got.LastReadError != "GPU is lost" {
		t.Errorf("sampler %+v", got)
	}
	if again := s.Stop(); again.Samples != 2 {
		t.Errorf("a second Stop: %+v", again)
	}
}

// Without a GPU there is nothing to sample, and the one field says why.
func TestOpenGPUWithoutGPU(t *testing.T) {
	src, st := OpenGPU(Binding{Device: -1, Reason: "device = cpu requested"})
	if src != nil || st.Available || st.Reason != "device = cpu requested" {
		t.Errorf("CPU binding: %v %+v", src, st)
	}
	if got := StartSampler(nil, st, time.Millisecond).Stop(); got != st {
		t.Errorf("no source: %+v", got)
	}
}

func TestGPUStatsJSON(t *testing.T) {
	b, _ := json.Marshal(GPUStats{Reason: "no driver", Samples: 3})
	if string(b) != `{"available":false,"reason":"no driver"}` {
		t.Errorf("no GPU: %s", b)
	}
	b, _ = json.Marshal(GPUStats{Available: true, Name: "H200", Samples: 3, UtilizationMax: 0.5})
	var back GPUStats
	if err := json.Unmarshal(b, &back); err != nil || back.Name != "H200" || back.Samples != 3 || back.UtilizationMax != 0.5 {
		t.Errorf("a GPU: %s → %+v %v", b, back, err)
	}
}
