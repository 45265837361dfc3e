package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The limits for hand-written code: past these a function stops
// reading top-down, so it should be split into named steps instead.
const (
	maxBodyLines = 100
	maxParams    = 8
)

// generatedLine is the marker Go tools agree on (go help generate).
var generatedLine = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// TestFunctionSize fails for every function declaration or literal in the
// module's non-test, non-generated code whose body is longer than
// maxBodyLines or which takes more than maxParams parameters.
func TestFunctionSize(t *testing.T) {
	root := moduleRoot(t, "go")
	fset := token.NewFileSet()
	var found []string
	for _, path := range sourceFiles(t, root) {
		found = append(found, oversized(t, fset, root, path)...)
	}
	for _, f := range found {
		t.Error(f)
	}
}

// sourceFiles lists the module's .go files that are neither tests nor in
// folders the go tool ignores (testdata, hidden, underscore) or the
// .cache of models and media.
func sourceFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// oversized parses one file and describes each function in it over the
// limits as "file:line: name: what".
func oversized(t *testing.T, fset *token.FileSet, root, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if generatedLine.Match(src) {
		return nil
	}
	file, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(root, path)
	var found []string
	check := func(name string, typ *ast.FuncType, body *ast.BlockStmt) {
		if body == nil {
			return
		}
		pos := fset.Position(typ.Pos())
		// Counted brace to brace, both lines included.
		lines := fset.Position(body.Rbrace).Line - fset.Position(body.Lbrace).Line + 1
		if lines > maxBodyLines {
			found = append(found, fmt.Sprintf("%s:%d: %s: body of %d lines (limit %d)", rel, pos.Line, name, lines, maxBodyLines))
		}
		if n := paramCount(typ); n > maxParams {
			found = append(found, fmt.Sprintf("%s:%d: %s: %d parameters (limit %d)", rel, pos.Line, name, n, maxParams))
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch fn := n.(type) {
		case *ast.FuncDecl:
			check(funcName(fn), fn.Type, fn.Body)
		case *ast.FuncLit:
			check("func literal", fn.Type, fn.Body)
		}
		return true
	})
	return found
}

// paramCount counts parameters by name, so (a, b int) is two.
func paramCount(typ *ast.FuncType) int {
	n := 0
	for _, field := range typ.Params.List {
		if len(field.Names) == 0 {
			n++
		}
		n += len(field.Names)
	}
	return n
}

// funcName gives a declaration's name with its receiver type, as
// (*Fetcher).transfer.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	recv := fn.Recv.List[0].Type
	if idx, ok := recv.(*ast.IndexExpr); ok {
		recv = idx.X
	}
	if idx, ok := recv.(*ast.IndexListExpr); ok {
		recv = idx.X
	}
	star := ""
	if s, ok := recv.(*ast.StarExpr); ok {
		star, recv = "*", s.X
		if idx, ok := recv.(*ast.IndexExpr); ok {
			recv = idx.X
		}
		if idx, ok := recv.(*ast.IndexListExpr); ok {
			recv = idx.X
		}
	}
	name := "?"
	if id, ok := recv.(*ast.Ident); ok {
		name = id.Name
	}
	if star != "" {
		return fmt.Sprintf("(*%s).%s", name, fn.Name.Name)
	}
	return fmt.Sprintf("%s.%s", name, fn.Name.Name)
}

// TestOversizedCounts checks the measure itself on made-up files: a body of 101 lines
// counted brace to brace, a literal of 9 parameters, and neither in a generated file.
func TestOversizedCounts(t *testing.T) {
	dir := t.TempDir()
	long := "package p\n\nfunc long() {\n" + strings.Repeat("\t_ = 0\n", 99) + "}\n\n" +
		"func short() {\n" + strings.Repeat("\t_ = 0\n", 98) + "}\n\n" +
		"var f = func(a, b, c, d, e, f, g, h, i int) {}\n\n" +
		"var g = func(a, b, c, d, e, f, g, h int) {}\n\n" +
		"type T struct{}\n\nfunc (*T) m(a, b, c, d, e, f, g, h, i int) {}\n"
	write := func(name, src string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	fset := token.NewFileSet()
	got := oversized(t, fset, dir, write("p.go", long))
	want := []string{
		"p.go:3: long: body of 101 lines (limit 100)",
		"p.go:206: func literal: 9 parameters (limit 8)",
		"p.go:212: (*T).m: 9 parameters (limit 8)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("oversized reported\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	gen := "// Code generated by hand. DO NOT EDIT.\n\n" + long
	if got := oversized(t, fset, dir, write("gen.go", gen)); len(got) != 0 {
		t.Errorf("a generated file was measured: %v", got)
	}
}
