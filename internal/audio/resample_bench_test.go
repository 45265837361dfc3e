package audio

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkResampleVoicePeak is prepare_voice's resample of a whole track at its worst: a
// length whose transforms have a large prime factor (Bluestein's), 14400021 samples a channel
// (5 min at 48 kHz; 4800007 after, a prime too) and 86400003 (30 min; 28800001 after). It
// reports the process's peak resident memory (VmHWM), so run one at a time in a process of its
// own:
//
//	go test ./internal/audio -run '^$' -bench 'ResampleVoicePeak/5min' -benchtime 1x
func BenchmarkResampleVoicePeak(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
	}{{"5min", 14400021}, {"30min", 86400003}} {
		b.Run(c.name, func(b *testing.B) {
			voice := make([]float32, c.n*Channels)
			for i := range voice {
				voice[i] = float32(math.Sin(float64(i) * 0.001))
			}
			b.ResetTimer()
			for range b.N {
				ResampleVoice(voice)
			}
			b.ReportMetric(float64(peakRSS(b)), "peak-RSS-bytes")
			b.ReportMetric(float64(len(voice)*4), "track-bytes")
		})
	}
}

// peakRSS is the process's VmHWM in bytes.
func peakRSS(b *testing.B) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}
