// Package logging is the program's one log: lines on stderr, each at one of FaceFusion's four
// levels (error, warn, info, debug), printed when --log-level asks for that level or more.
//
// Every rank logs through it. Lines keep the "facefusion: " prefix the log has always had; the
// level decides whether a line is printed, not how it looks, so a batch log at the default
// level reads as it did before levels existed.
package logging

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// Level is how much a line matters; a logger prints the lines at its level and below.
type Level int

const (
	Error Level = iota // the job failed, or stopped without finishing: the line that says why
	Warn               // the job goes on, but its output or its run is not what was asked for, or something was repaired
	Info               // what the job did: progress, checkpoints, the join, the time it took
	Debug              // detail for finding out why: settings in effect, each chunk
)

// names are FaceFusion's --log-level choices (facefusion/choices.py), indexed by Level.
var names = [...]string{Error: "error", Warn: "warn", Info: "info", Debug: "debug"}

// Names are the --log-level choices, least output first.
func Names() []string { return append([]string(nil), names[:]...) }

func (l Level) String() string {
	if l >= 0 && int(l) < len(names) {
		return names[l]
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// ParseLevel reads a --log-level value.
func ParseLevel(s string) (Level, error) {
	for i, n := range names {
		if s == n {
			return Level(i), nil
		}
	}
	return 0, fmt.Errorf("%s is not a log level (%s)", safefs.Excerpt(s), strings.Join(names[:], ", "))
}

// prefix starts every line, as it always has: a batch log mixes the program's lines with
// ffmpeg's, Slurm's and the shell's.
const prefix = "facefusion: "

// Logger writes lines at or below its level to one writer, a line at a time. A nil *Logger
// discards everything.
type Logger struct {
	mu    sync.Mutex
	w     io.Writer
	level Level
}

// New logs to w the lines at level and below.
func New(w io.Writer, level Level) *Logger { return &Logger{w: w, level: level} }

// Enabled reports whether lines at level are printed.
func (l *Logger) Enabled(level Level) bool { return l != nil && level <= l.level }

// Level is the most detailed level printed (error for a nil logger, which prints nothing).
func (l *Logger) Level() Level {
	if l == nil {
		return Error
	}
	return l.level
}

func (l *Logger) logf(level Level, format string, args ...any) {
	if !l.Enabled(level) {
		return
	}
	line := prefix + fmt.Sprintf(format, args...)
	if !strings.HasSuffix(line, "\n") {
		line += "\n"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	io.WriteString(l.w, line)
}

func (l *Logger) Errorf(format string, args ...any) { l.logf(Error, format, args...) }
func (l *Logger) Warnf(format string, args ...any)  { l.logf(Warn, format, args...) }
func (l *Logger) Infof(format string, args ...any)  { l.logf(Info, format, args...) }
func (l *Logger) Debugf(format string, args ...any) { l.logf(Debug, format, args...) }

// Writer is the logger's writer when lines at level are printed, else io.Discard: for output
// that is not made of lines, such as a progress bar.
func (l *Logger) Writer(level Level) io.Writer {
	if !l.Enabled(level) {
		return io.Discard
	}
	return l.w
}

// std is the process's logger: stderr at info until main has read --log-level.
var std atomic.Pointer[Logger]

func init() { std.Store(New(os.Stderr, Info)) }

// Default is the process's logger, for code that runs deep below main (a model session's
// provider fallback) and has no logger handed to it.
func Default() *Logger { return std.Load() }

// SetDefault makes l the process's logger; main calls it once it knows the log level.
func SetDefault(l *Logger) { std.Store(l) }
