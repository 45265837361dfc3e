package audio

import (
	"bufio"
	"context"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkResampleVoicePeak is prepare_voice's resample of a whole track (ResampleVoiceMono,
// as rank 0 runs it) at its worst: lengths whose transforms have a large prime factor,
// 14400021 samples a channel (5 min at 48 kHz; 4800007 after, a prime too), 86400003 (30 min;
// 28800001 after) and 345600103 (2 h, a prime; 115200034 after, twice a prime); whole-5min is the
// in-memory whole-signal transform of the first, for comparison. It reports the process's peak
// resident memory (VmHWM, the track's 8 bytes a sample included) and the scratch the
// transforms take on disk at their largest (in $TMPDIR), so run one at a time in a process of
// its own:
//
//	go test ./internal/audio -run '^$' -bench 'ResampleVoicePeak/disk-2h' -benchtime 1x
func BenchmarkResampleVoicePeak(b *testing.B) {
	for _, c := range []struct {
		name  string
		n     int
		whole bool
	}{{"whole-5min", 14400021, true}, {"disk-5min", 14400021, false}, {"disk-30min", 86400003, false}, {"disk-2h", 345600103, false}} {
		b.Run(c.name, func(b *testing.B) {
			voice := make([]float32, c.n*Channels)
			for i := range voice {
				voice[i] = float32(math.Sin(float64(i) * 0.001))
			}
			b.ResetTimer()
			for range b.N {
				if c.whole {
					Mono(ResampleVoice(voice), Channels)
				} else if _, err := ResampleVoiceMono(context.Background(), voice, ""); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(peakRSS(b)), "peak-RSS-bytes")
			b.ReportMetric(float64(len(voice)*4), "track-bytes")
			if !c.whole {
				b.ReportMetric(float64(scratchBytes(c.n)), "scratch-bytes")
			}
		})
	}
}

// scratchBytes is what ResampleVoiceMono's transforms of a track of n samples a channel take
// on disk at their largest: the forward one's (n, bins of the output) or the inverse one's.
func scratchBytes(n int) int64 {
	num := VoiceSamples(n)
	size := func(n, count int) int64 {
		m1, m2 := diskLengths(n + count - 1)
		return int64(32 * m1 * m2)
	}
	return max(size(n, num/2+1), size(num, num))
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
