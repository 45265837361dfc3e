package rank

import (
	"encoding/json"
	"sync"
	"time"
)

// GPUReading is one sample of a GPU's state.
type GPUReading struct {
	Utilization     float64 // 0..1: the share of the last sample period a kernel ran
	MemoryUsedBytes uint64
	PowerWatts      float64
	TemperatureC    float64
}

// GPUSource reads a GPU's state: NVML on a GPU node, a fixed list in the sampler's tests.
type GPUSource interface {
	Read() (GPUReading, error)
}

// GPUStats is a rank's GPU in the run report: what it is and what the samples saw. Without a
// GPU (no NVIDIA driver, CPU execution) Available is false and Reason says why, and nothing
// else is set.
type GPUStats struct {
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`

	Name             string `json:"name,omitempty"`
	UUID             string `json:"uuid,omitempty"`
	MemoryTotalBytes uint64 `json:"memory_total_bytes,omitempty"`

	Samples            int     `json:"samples"`
	UtilizationMean    float64 `json:"utilization_mean"` // 0..1
	UtilizationMax     float64 `json:"utilization_max"`  // 0..1
	MemoryUsedMaxBytes uint64  `json:"memory_used_max_bytes"`
	PowerMeanWatts     float64 `json:"power_mean_watts"`
	PowerMaxWatts      float64 `json:"power_max_watts"`
	TemperatureMaxC    float64 `json:"temperature_max_celsius"`
	ReadErrors         int     `json:"read_errors,omitempty"` // samples NVML failed to give
	LastReadError      string  `json:"last_read_error,omitempty"`
	utilSum, powerSum  float64
}

// MarshalJSON writes a rank without a GPU as one field: available false, and why.
func (s GPUStats) MarshalJSON() ([]byte, error) {
	if !s.Available {
		return json.Marshal(struct {
			Available bool   `json:"available"`
			Reason    string `json:"reason"`
		}{false, s.Reason})
	}
	type plain GPUStats // without this method
	return json.Marshal(plain(s))
}

// add folds one reading into the statistics.
func (s *GPUStats) add(r GPUReading) {
	s.Samples++
	s.utilSum += r.Utilization
	s.powerSum += r.PowerWatts
	s.UtilizationMean = s.utilSum / float64(s.Samples)
	s.PowerMeanWatts = s.powerSum / float64(s.Samples)
	s.UtilizationMax = max(s.UtilizationMax, r.Utilization)
	s.MemoryUsedMaxBytes = max(s.MemoryUsedMaxBytes, r.MemoryUsedBytes)
	s.PowerMaxWatts = max(s.PowerMaxWatts, r.PowerWatts)
	s.TemperatureMaxC = max(s.TemperatureMaxC, r.TemperatureC)
}

// Sampler reads a GPU on a ticker in its own goroutine. Nothing in the frame path waits for
// it: the samples are folded in under a lock held only for the arithmetic, never across a
// read, and Stop does not wait for a read in flight.
type Sampler struct {
	mu    sync.Mutex
	stats GPUStats
	stop  chan struct{}
	once  sync.Once
}

// StartSampler samples src every period, from now until Stop; base is the GPU's description
// (Available, Name, UUID, memory). A nil src samples nothing: Stop returns base as it is.
func StartSampler(src GPUSource, base GPUStats, every time.Duration) *Sampler {
	s := &Sampler{stats: base, stop: make(chan struct{})}
	if src == nil {
		return s
	}
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		sample := func() {
			r, err := src.Read()
			s.mu.Lock()
			defer s.mu.Unlock()
			if err != nil {
				s.stats.ReadErrors++
				s.stats.LastReadError = err.Error()
				return
			}
			s.stats.add(r)
		}
		sample() // a job shorter than the period still gets one sample
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				select {
				case <-s.stop:
					return
				default:
				}
				sample()
			}
		}
	}()
	return s
}

// Stop ends the sampling and returns the statistics so far.
func (s *Sampler) Stop() GPUStats {
	s.once.Do(func() { close(s.stop) })
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// OpenGPU is the telemetry of binding b: its NVML source and description, or no source and
// Available false with the reason (CPU execution, no NVIDIA driver, NVML's error).
func OpenGPU(b Binding) (GPUSource, GPUStats) {
	if b.CPU() {
		return nil, GPUStats{Reason: b.Reason}
	}
	src, info, err := openNVMLSource(b.Visible)
	if err != nil {
		return nil, GPUStats{Reason: err.Error()}
	}
	return src, GPUStats{Available: true, Name: info.Name, UUID: info.UUID, MemoryTotalBytes: info.MemoryBytes}
}
