package logging

import (
	"context"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

// TimeLayout is a line's timestamp: RFC 3339 in UTC with milliseconds, one width always, so the
// lines of every rank on every node, merged, sort by time as text.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// tag names the program on its lines the way FaceFusion's logger does ([FACEFUSION.CORE]).
const tag = "[FACEFUSION]"

// Handler is a slog.Handler writing each record as one line:
//
//	TIME LEVEL [FACEFUSION] rank R: MESSAGE key=value ...
//
// with no rank before the process has joined the job. A line break inside a message or a value
// is written as \n: a batch log is read, grepped and sorted a line at a time.
type Handler struct {
	mu     *sync.Mutex // shared by the handlers derived from one: one writer, whole lines
	w      io.Writer
	level  slog.Leveler
	rank   int    // -1: none
	attrs  string // the preformatted attributes of WithAttrs, each with its leading space
	prefix string // the open groups, "g1.g2."
}

// NewHandler writes to w the records at level and above.
func NewHandler(w io.Writer, level slog.Leveler) *Handler {
	return &Handler{mu: new(sync.Mutex), w: w, level: level, rank: -1}
}

// WithRank is h naming MPI rank r on every line.
func (h *Handler) WithRank(r int) *Handler {
	c := *h
	c.rank = r
	return &c
}

func (h *Handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	b.WriteString(t.UTC().Format(TimeLayout))
	b.WriteByte(' ')
	lv := r.Level.String()
	b.WriteString(lv)
	b.WriteString(strings.Repeat(" ", max(1, 6-len(lv)))) // the tags line up: WARN, INFO, ERROR, DEBUG
	b.WriteString(tag)
	if h.rank >= 0 {
		b.WriteString(" rank ")
		b.WriteString(strconv.Itoa(h.rank))
		b.WriteByte(':')
	}
	b.WriteByte(' ')
	b.WriteString(oneLine(strings.TrimRight(r.Message, "\n")))
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		writeAttr(&b, h.prefix, a)
		return true
	})
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	if len(as) == 0 {
		return h
	}
	c := *h
	var b strings.Builder
	for _, a := range as {
		writeAttr(&b, h.prefix, a)
	}
	c.attrs += b.String()
	return &c
}

func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.prefix += name + "."
	return &c
}

// writeAttr writes " key=value", groups flattened to "group.key"; an empty attribute is none.
func writeAttr(b *strings.Builder, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		if a.Key != "" {
			prefix += a.Key + "."
		}
		for _, g := range a.Value.Group() {
			writeAttr(b, prefix, g)
		}
		return
	}
	b.WriteByte(' ')
	b.WriteString(quoted(prefix + a.Key))
	b.WriteByte('=')
	b.WriteString(quoted(a.Value.String()))
}

// quoted is s as it stands when it is one plain word, else Go-quoted: a value never splits
// into two attributes or two lines.
func quoted(s string) string {
	if s == "" || strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) || r == '"' || r == '=' }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// oneLine keeps a message on its line.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s)
}

// Line is a log line read back: for tests and tools that read a log.
type Line struct {
	Time    time.Time
	Level   string // as written: ERROR, WARN, INFO, DEBUG
	Rank    int    // -1: none
	Message string // the message and any attributes
}

var lineRE = regexp.MustCompile(`^(\S+) (ERROR|WARN|INFO|DEBUG)\s+\[FACEFUSION\](?: rank (\d+):)? (.*)$`)

// ParseLine reads one line of the log (without its newline); ok is false for a line that is not
// one of the log's (ffmpeg's, the shell's, a progress bar).
func ParseLine(s string) (l Line, ok bool) {
	m := lineRE.FindStringSubmatch(s)
	if m == nil {
		return Line{}, false
	}
	t, err := time.Parse(TimeLayout, m[1])
	if err != nil {
		return Line{}, false
	}
	l = Line{Time: t, Level: m[2], Rank: -1, Message: m[4]}
	if m[3] != "" {
		l.Rank, _ = strconv.Atoi(m[3])
	}
	return l, true
}

// Messages are the messages of the log's lines in text, in order, other lines left out.
func Messages(text string) []string {
	var msgs []string
	for _, s := range strings.Split(text, "\n") {
		if l, ok := ParseLine(s); ok {
			msgs = append(msgs, l.Message)
		}
	}
	return msgs
}
