package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Counted is a program that runs the real tool name (found as Tool finds it) and counts its
// runs: the path of a script to put where the code under test looks for the tool, and a
// function that says how many times it has run since the last call. The tool itself runs, with
// the same arguments, input and output: only the count is added.
func Counted(t testing.TB, name string) (path string, runs func() int) {
	t.Helper()
	real := Tool(t, name)
	dir := t.TempDir()
	log, path := filepath.Join(dir, "runs"), filepath.Join(dir, name)
	script := "#!/bin/sh\necho run >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, func() int {
		data, _ := os.ReadFile(log)
		os.Remove(log)
		return strings.Count(string(data), "run\n")
	}
}
