// Package logging is the program's one log: log/slog records written to stderr as one line each,
// at FaceFusion's four levels (error, warn, info, debug), printed when --log-level asks for that
// level or more.
//
// Every rank logs through it, and so does any library that logs through slog's default logger
// (main makes the job's log slog's default): a batch log mixes the program's lines with
// ffmpeg's, Slurm's and the shell's, and every rank's, so each line says when, how much it
// matters, and which rank said it:
//
//	2026-12-06T07:50:12.345Z INFO  [FACEFUSION] rank 0: a face was swapped in 20 of 20 frames
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// Level is how much a line matters: slog's levels, so that a library's slog lines are filtered
// with the program's. A logger prints the lines at its level and above.
type Level = slog.Level

const (
	Error = slog.LevelError // the job failed, or stopped without finishing: the line that says why
	Warn  = slog.LevelWarn  // the job goes on, but its output or its run is not what was asked for, or something was repaired
	Info  = slog.LevelInfo  // what the job did: progress, checkpoints, the join, the time it took
	Debug = slog.LevelDebug // detail for finding out why: settings in effect, each chunk
)

// levels are FaceFusion's --log-level choices (facefusion/choices.py), least output first; a
// line's level word is the name in capitals (slog's own names are the same words).
var levels = []struct {
	name  string
	level Level
}{{"error", Error}, {"warn", Warn}, {"info", Info}, {"debug", Debug}}

// Names are the --log-level choices, least output first.
func Names() []string {
	names := make([]string, len(levels))
	for i, l := range levels {
		names[i] = l.name
	}
	return names
}

// ParseLevel reads a --log-level value.
func ParseLevel(s string) (Level, error) {
	for _, l := range levels {
		if s == l.name {
			return l.level, nil
		}
	}
	return 0, fmt.Errorf("%s is not a log level (%s)", safefs.Excerpt(s), strings.Join(Names(), ", "))
}

// Logger is the program's face on a slog.Logger: printf-style methods, so a call site reads as
// the message it prints, each line one slog record. A nil *Logger discards everything.
type Logger struct {
	s *slog.Logger
}

// New logs to w the lines at level and above, without a rank (a process that has not joined
// the job yet).
func New(w io.Writer, level Level) *Logger {
	return &Logger{s: slog.New(NewHandler(w, level))}
}

// WithRank is l with every line naming MPI rank r.
func (l *Logger) WithRank(r int) *Logger {
	if l == nil {
		return nil
	}
	if h, ok := l.s.Handler().(*Handler); ok {
		return &Logger{s: slog.New(h.WithRank(r))}
	}
	return &Logger{s: l.s.With("rank", r)}
}

// Slog is the slog.Logger underneath: for slog's default, and for code that logs attributes.
func (l *Logger) Slog() *slog.Logger {
	if l == nil {
		return slog.New(discard{})
	}
	return l.s
}

// Enabled reports whether lines at level are printed.
func (l *Logger) Enabled(level Level) bool {
	return l != nil && l.s.Enabled(context.Background(), level)
}

// Level is the most detailed level printed (error for a nil logger, which prints nothing).
func (l *Logger) Level() Level {
	for i := len(levels) - 1; i >= 0; i-- {
		if l.Enabled(levels[i].level) {
			return levels[i].level
		}
	}
	return Error
}

// logf formats only a line that is printed: debug lines cost nothing at info.
func (l *Logger) logf(level Level, format string, args ...any) {
	if !l.Enabled(level) {
		return
	}
	l.s.Log(context.Background(), level, fmt.Sprintf(format, args...))
}

func (l *Logger) Errorf(format string, args ...any) { l.logf(Error, format, args...) }
func (l *Logger) Warnf(format string, args ...any)  { l.logf(Warn, format, args...) }
func (l *Logger) Infof(format string, args ...any)  { l.logf(Info, format, args...) }
func (l *Logger) Debugf(format string, args ...any) { l.logf(Debug, format, args...) }

// Writer is a writer whose every line becomes a record at level when such lines are printed,
// else io.Discard: for a reporter that writes lines of its own, such as periodic progress.
func (l *Logger) Writer(level Level) io.Writer {
	if !l.Enabled(level) {
		return io.Discard
	}
	return lineWriter{l, level}
}

type lineWriter struct {
	l     *Logger
	level Level
}

// Write logs each line of p (a write is whole lines: the reporters write a line at a time).
func (w lineWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimSuffix(string(p), "\n"), "\n") {
		w.l.s.Log(context.Background(), w.level, line)
	}
	return len(p), nil
}

// discard is the nil logger's handler.
type discard struct{}

func (discard) Enabled(context.Context, slog.Level) bool  { return false }
func (discard) Handle(context.Context, slog.Record) error { return nil }
func (d discard) WithAttrs([]slog.Attr) slog.Handler      { return d }
func (d discard) WithGroup(string) slog.Handler           { return d }
