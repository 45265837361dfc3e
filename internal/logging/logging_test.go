package logging

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Each level prints its own lines and the more important ones, never the more detailed.
func TestLevelsFilter(t *testing.T) {
	for i, level := range []Level{Error, Warn, Info, Debug} {
		var b bytes.Buffer
		l := New(&b, level)
		l.Errorf("e %d", 1)
		l.Warnf("w")
		l.Infof("i\n")
		l.Debugf("d")
		want := []string{"e 1", "w", "i", "d"}[:i+1]
		got := Messages(b.String())
		if strings.Join(got, "|") != strings.Join(want, "|") || strings.Count(b.String(), "\n") != i+1 {
			t.Errorf("level %v printed %q, want %q", level, b.String(), want)
		}
		if (l.Writer(Info) != io.Discard) != (level <= Info) || l.Level() != level {
			t.Errorf("level %v: Writer(Info) discards: %v, Level %v", level, l.Writer(Info) == io.Discard, l.Level())
		}
	}
}

// A line: its timestamp in UTC that sorts as text, the level in FaceFusion's word, the tag,
// the rank once the process has one, the message unchanged.
func TestLineFormat(t *testing.T) {
	var b bytes.Buffer
	l := New(&b, Debug)
	l.Warnf("no rank yet: %s", "x")
	l.WithRank(3).Debugf("joined")
	l.WithRank(0).Errorf("two\nlines")
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []*regexp.Regexp{
		regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z WARN  \[FACEFUSION\] no rank yet: x$`),
		regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z DEBUG \[FACEFUSION\] rank 3: joined$`),
		regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ERROR \[FACEFUSION\] rank 0: two\\nlines$`),
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), b.String())
	}
	for i, re := range want {
		if !re.MatchString(lines[i]) {
			t.Errorf("line %q, want %v", lines[i], re)
		}
	}
	p, ok := ParseLine(lines[1])
	if !ok || p.Level != "DEBUG" || p.Rank != 3 || p.Message != "joined" || time.Since(p.Time) > time.Minute {
		t.Errorf("read back %+v, %v", p, ok)
	}
	if p, ok := ParseLine(lines[0]); !ok || p.Rank != -1 {
		t.Errorf("read back %+v, %v: want no rank", p, ok)
	}
	if _, ok := ParseLine("frame=  20 fps=0.0 q=-1.0"); ok {
		t.Error("ffmpeg's line read as the log's")
	}
}

// A library's slog lines, through the same handler, share the levels and the line; their
// attributes stay on the line.
func TestSlogRecords(t *testing.T) {
	var b bytes.Buffer
	s := New(&b, Info).WithRank(1).Slog()
	s.Debug("hidden")
	s.With("model", "inswapper 128").WithGroup("gpu").Warn("slow", "id", 2, "why", "a\nb")
	got := Messages(b.String())
	if len(got) != 1 || got[0] != `slow model="inswapper 128" gpu.id=2 gpu.why="a\nb"` {
		t.Errorf("got %q", got)
	}
	if l, _ := ParseLine(strings.TrimSuffix(b.String(), "\n")); l.Level != "WARN" || l.Rank != 1 {
		t.Errorf("read back %+v", l)
	}
	var d bytes.Buffer
	h := NewHandler(&d, slog.LevelError)
	if h.Enabled(context.Background(), slog.LevelWarn) || !h.Enabled(context.Background(), slog.LevelError) {
		t.Error("the handler's level is not held")
	}
}

// Writer's lines are records of their own: a progress line gets the prefix.
func TestWriterLines(t *testing.T) {
	var b bytes.Buffer
	w := New(&b, Info).WithRank(0).Writer(Info)
	io.WriteString(w, "progress: 1/2 frames\n")
	io.WriteString(w, "progress: 2/2 frames\n")
	if got := Messages(b.String()); len(got) != 2 || got[1] != "progress: 2/2 frames" {
		t.Errorf("got %q from %q", got, b.String())
	}
}

func TestParseLevel(t *testing.T) {
	for _, n := range Names() {
		if l, err := ParseLevel(n); err != nil || strings.ToLower(l.String()) != n {
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
	l.WithRank(1).Infof("y")
	l.Slog().Error("z")
	if l.Enabled(Error) || l.Level() != Error || l.Writer(Error) != io.Discard {
		t.Error("a nil logger prints")
	}
}
