package testenv

import "testing"

// The failure message names the first line that differs and both versions, an added or a
// missing last line included.
func TestFirstDifference(t *testing.T) {
	for _, c := range []struct {
		got, want, g, w string
		line            int
	}{
		{"a\nb\nc\n", "a\nB\nc\n", "b\n", "B\n", 2},
		{"a\nb\n", "a\nb\nc\n", "(end of file)", "c\n", 3},
		{"a\nb", "a\nb\n", "b", "b\n", 2},
		{"", "a\n", "(end of file)", "a\n", 1},
	} {
		line, g, w := firstDifference(c.got, c.want)
		if line != c.line || g != c.g || w != c.w {
			t.Errorf("%q against %q: line %d, %q, %q; want line %d, %q, %q", c.got, c.want, line, g, w, c.line, c.g, c.w)
		}
	}
}
