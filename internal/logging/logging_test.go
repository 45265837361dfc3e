package logging

import (
	"bytes"
	"strings"
	"testing"
)

// Each level prints its own lines and the more important ones, never the more detailed.
func TestLevelsFilter(t *testing.T) {
	for _, level := range []Level{Error, Warn, Info, Debug} {
		var b bytes.Buffer
		l := New(&b, level)
		l.Errorf("e %d", 1)
		l.Warnf("w")
		l.Infof("i\n")
		l.Debugf("d")
		want := []string{"facefusion: e 1", "facefusion: w", "facefusion: i", "facefusion: d"}[:level+1]
		got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("level %v printed %q, want %q", level, got, want)
		}
		if l.Writer(Info) == &b != (level >= Info) {
			t.Errorf("level %v: Writer(Info) is the log: %v", level, l.Writer(Info) == &b)
		}
	}
}

func TestParseLevel(t *testing.T) {
	for i, n := range Names() {
		if l, err := ParseLevel(n); err != nil || l != Level(i) || l.String() != n {
			t.Errorf("%s: %v, %v", n, l, err)
		}
	}
	if _, err := ParseLevel("warning"); err == nil || !strings.Contains(err.Error(), "error, warn, info, debug") {
		t.Errorf("warning: %v, want the four names", err)
	}
}

func TestNilLoggerDiscards(t *testing.T) {
	var l *Logger
	l.Errorf("x")
	if l.Enabled(Error) || l.Level() != Error {
		t.Error("a nil logger prints")
	}
}
