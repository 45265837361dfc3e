package testenv

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Update is the -update flag of every test binary that imports testenv: golden files (Golden)
// and other expected files a test keeps are rewritten from this run instead of compared. One
// flag for the module, defined here because every test package that keeps such files imports
// testenv (a second flag.Bool("update") in the same binary would panic).
var Update = flag.Bool("update", false, "rewrite the expected files (testdata/*.golden; the generated parts of docs pages) from this run")

// packageDir is the folder of the test's package: go test starts a test binary there, and a
// test may change its working folder (t.Chdir) before it compares.
var packageDir, _ = os.Getwd()

// A Mask is one step of a golden file's normalisation: what legitimately differs between runs
// (a temp folder, a time, a host name, a duration) becomes a fixed placeholder, so that the
// compare sees everything else byte for byte. Pattern is a regular expression; With may use
// its groups ($1).
type Mask struct{ Pattern, With string }

// Literal is the mask that replaces the text s (a path under t.TempDir(), a host name) by with.
func Literal(s, with string) Mask { return Mask{Pattern: regexp.QuoteMeta(s), With: with} }

// Golden compares got, normalised by masks (applied in order), with testdata/NAME.golden in
// the test's package folder, byte for byte; with -update it writes the file instead. A
// difference fails the test with the first line that differs, both versions, and the command
// that rewrites the file.
func Golden(t testing.TB, name string, got []byte, masks ...Mask) {
	t.Helper()
	for _, m := range masks {
		got = regexp.MustCompile(m.Pattern).ReplaceAll(got, []byte(m.With))
	}
	rel := filepath.Join("testdata", name+".golden") // what the messages name: the package's file
	path := filepath.Join(packageDir, rel)
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file %s: %v: create it with %s", rel, err, updateCommand(t))
	}
	if bytes.Equal(got, want) {
		return
	}
	line, g, w := firstDifference(string(got), string(want))
	t.Errorf("output differs from %s at line %d:\n got: %q\nwant: %q\nif the change is meant, rewrite the file with %s and review its diff",
		rel, line, g, w, updateCommand(t))
}

// firstDifference is the first line (1-based) where got and want differ, and that line of
// each ("(end of file)" past the last).
func firstDifference(got, want string) (line int, g, w string) {
	gl, wl := strings.SplitAfter(got, "\n"), strings.SplitAfter(want, "\n")
	at := func(lines []string, i int) string {
		if i < len(lines) && lines[i] != "" { // "": after the final line break
			return lines[i]
		}
		return "(end of file)"
	}
	for i := 0; ; i++ {
		if a, b := at(gl, i), at(wl, i); a != b {
			return i + 1, a, b
		}
	}
}

// updateCommand is the go test command that rewrites the golden files of t's test.
func updateCommand(t testing.TB) string {
	pkg := "."
	if rel, err := filepath.Rel(Root(t), packageDir); err == nil && !strings.HasPrefix(rel, "..") {
		pkg = "./" + filepath.ToSlash(rel)
	}
	top, _, _ := strings.Cut(t.Name(), "/")
	return fmt.Sprintf("`go test %s -run '^%s$' -update`", pkg, top)
}
