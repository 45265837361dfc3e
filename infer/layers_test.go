package infer

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestBoundaryImportsNothingOfTheProject keeps infer the thin ONNX Runtime boundary: its
// non-test files import the standard library and third-party modules only.
func TestBoundaryImportsNothingOfTheProject(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files here: %v", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			if strings.Contains(imp.Path.Value, "github.com/facefusion-hpc/facefusion") {
				t.Errorf("%s imports %s: infer must not depend on the rest of the project", f, imp.Path.Value)
			}
		}
	}
}
