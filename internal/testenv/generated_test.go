package testenv

import "testing"

func TestSplice(t *testing.T) {
	const begin, end = "<!-- b -->", "<!-- e -->"
	for _, c := range []struct{ doc, want string }{
		{"head\n" + begin + "\nold\n" + end + "\ntail\n", "head\n" + begin + "\nnew\n" + end + "\ntail\n"},
		{begin + "\nold\n" + end, begin + "\nnew\n" + end + "\n"}, // end as the last line, no break after it
	} {
		got, ok := Splice(c.doc, begin+"\nnew\n"+end+"\n", begin, end)
		if !ok || got != c.want {
			t.Errorf("Splice(%q) = %q, %v; want %q", c.doc, got, ok, c.want)
		}
	}
	for _, doc := range []string{"no markers\n", end + "\n" + begin + "\n", begin + "\n"} {
		if got, ok := Splice(doc, "x", begin, end); ok || got != doc {
			t.Errorf("Splice(%q) = %q, %v; want the doc unchanged and false", doc, got, ok)
		}
	}
}
