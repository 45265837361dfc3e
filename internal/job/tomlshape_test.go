package job

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Nesting that the TOML decoder pays for with the square of its depth is refused before it
// decodes, with the line; what job files hold (every TOML file of the repository) passes, and
// strings and comments that look like nesting are not counted.
func TestTOMLShape(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "configs", "*.toml"))
	more, _ := filepath.Glob(filepath.Join("..", "..", "sbatch", "*.toml"))
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatal("no TOML files found in configs/")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := checkShape(data); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	deep := func(n int) string { return "a = " + strings.Repeat("{b = ", n) + "1" + strings.Repeat("}", n) + "\n" }
	for _, ok := range []string{
		deep(maxTOMLDepth - 1),
		"a" + strings.Repeat(".b", maxTOMLDepth-1) + " = 1\n",
		"[a" + strings.Repeat(".b", maxTOMLDepth-2) + "]\nx = 1\n",
		"[a.b]\nc.d = [[1, 2], [3]]\ne = [{f = 1}, {g.h = 2}]\n",
		"x = \"" + strings.Repeat("{[.", 100) + "\"\n# " + strings.Repeat("{[.", 100) + "\ny = '''\n" + strings.Repeat("{", 100) + "\n'''\n",
		"v = 1.5\nw = [1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5]\n",
		"[[a.b]]\nc = {d.e = 1, f.g = 2}\n",
	} {
		if _, err := checkShape([]byte(ok)); err != nil {
			t.Errorf("%.60q: %v", ok, err)
		}
	}
	for _, bad := range []struct {
		text string
		line int
	}{
		{"x = 1\n" + deep(maxTOMLDepth), 2},
		{"a = " + strings.Repeat("[", 50_000), 1},
		{"a" + strings.Repeat(".b", maxTOMLDepth) + " = 1\n", 1},
		{"\n\n[a" + strings.Repeat(".b", 20_000) + "]\n", 3},
		{"c = {" + "d" + strings.Repeat(".e", maxTOMLDepth) + " = 1}\n", 1},
		{"s = \"\"\"\n\n\"\"\"\n" + deep(maxTOMLDepth), 4},
		// Each limit kept alone, their sum not: a dotted key's parts and the tables below it.
		{"k" + strings.Repeat(".a", 10) + " = " + strings.Repeat("{b = ", 10) + "1" + strings.Repeat("}", 10) + "\n", 1},
		{"[h" + strings.Repeat(".a", 10) + "]\nk" + strings.Repeat(".b", 10) + " = 1\n", 2},
	} {
		line, err := checkShape([]byte(bad.text))
		if err == nil || line != bad.line {
			t.Errorf("%.60q: line %d, %v; want refused at line %d", bad.text, line, err, bad.line)
		}
	}
}

// The config loader refuses a deeply nested file in one line, quickly (the decoder took 13 s
// and 5.8 GB for inline tables 12,000 deep).
func TestDeepConfigRefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "job.toml")
	os.WriteFile(p, []byte("a = "+strings.Repeat("{b = ", 50_000)+"1"+strings.Repeat("}", 50_000)+"\n"), 0o644)
	c := Default()
	err := LoadFile(p, &c)
	if err == nil || !strings.Contains(err.Error(), "config "+p+": line 1: a key path (tables, lists and dotted keys) more than 16 deep") || len(err.Error()) > 300 {
		t.Fatalf("got %v", err)
	}
}
