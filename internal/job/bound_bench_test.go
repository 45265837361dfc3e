package job

import (
	"fmt"
	"strings"
	"testing"
)

// boundSizes are the sizes of the keys and values the parsers are timed on: the time must grow
// with the input, not with its square.
var boundSizes = []struct {
	name string
	n    int
}{{"100kB", 100_000}, {"1MB", 1_000_000}, {"10MB", 10_000_000}}

// The parsers take bytes: the 10 MB inputs are over ConfigLimit, which a read refuses, but the
// parser must not depend on that limit to end in time, nor echo what it read in its error.
// The lines case is a key continued over a third of a million indented lines.
func BenchmarkIni(b *testing.B) {
	for _, s := range boundSizes {
		for _, c := range []struct{ kind, text string }{
			{"key", "[misc]\n" + strings.Repeat("k", s.n) + " = 1\n"},
			{"value", "[misc]\nlog_level = " + strings.Repeat("v", s.n) + "\n"},
			{"lines", "[processors]\nprocessors = face_swapper\n" + strings.Repeat(" x\n", s.n/3)},
		} {
			b.Run(fmt.Sprintf("%s-%s", c.kind, s.name), func(b *testing.B) {
				for b.Loop() {
					cfg := Default()
					if err := loadINI([]byte(c.text), "facefusion.ini", &cfg); err == nil {
						b.Fatal("no error")
					} else if len(err.Error()) > 1500 {
						b.Fatalf("error of %d bytes: %.300s", len(err.Error()), err)
					}
				}
			})
		}
	}
}

func BenchmarkConfig(b *testing.B) {
	for _, s := range boundSizes {
		for _, c := range []struct{ kind, text string }{
			{"key", strings.Repeat("k", s.n) + " = 1\n"},
			{"value", "log_level = \"" + strings.Repeat("v", s.n) + "\"\n"},
		} {
			b.Run(fmt.Sprintf("%s-%s", c.kind, s.name), func(b *testing.B) {
				for b.Loop() {
					cfg := Default()
					err := decode([]byte(c.text), "job.toml", &cfg)
					if err == nil {
						err = cfg.Validate()
					}
					if err == nil {
						b.Fatal("no error")
					} else if len(err.Error()) > 1500 {
						b.Fatalf("error of %d bytes: %.300s", len(err.Error()), err)
					}
				}
			})
		}
	}
}
