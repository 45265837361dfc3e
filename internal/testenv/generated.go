package testenv

import (
	"os"
	"strings"
	"testing"
)

// Splice replaces the part of doc from begin's line to end's (and the line break after end) by
// part; ok is false when doc lacks the markers.
func Splice(doc, part, begin, end string) (string, bool) {
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		return doc, false
	}
	stop := j + len(end)
	if stop < len(doc) && doc[stop] == '\n' {
		stop++
	}
	return doc[:i] + part + doc[stop:], true
}

// Generated holds the generated part of the page at path (between the lines begin and end,
// which part includes) to part; with -update it writes part there instead. A stale page fails
// the test with the lines of part the page lacks; changes names what likely changed, for the
// message.
func Generated(t testing.TB, path, part, begin, end, changes string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, ok := Splice(string(data), part, begin, end)
	if !ok {
		t.Fatalf("%s has no generated part (the lines %q and %q)", path, begin, end)
	}
	if doc == string(data) {
		return
	}
	if *Update {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the generated part of %s", path)
		return
	}
	t.Errorf("%s is stale: its generated part differs from this run's (%s); run %s and commit the page. Lines of this run not in the page:\n%s",
		path, changes, updateCommand(t), strings.Join(newLines(string(data), doc), "\n"))
}

// newLines are the lines of b that a lacks.
func newLines(a, b string) []string {
	have := map[string]bool{}
	for _, l := range strings.Split(a, "\n") {
		have[l] = true
	}
	var out []string
	for _, l := range strings.Split(b, "\n") {
		if !have[l] {
			out = append(out, l)
		}
	}
	return out
}
