package report

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// jsonNames are the JSON field names of t and of every struct it holds (through pointers,
// slices and maps), each once, in the order met.
func jsonNames(t reflect.Type, seen map[reflect.Type]bool, out *[]string) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || name == "" {
			continue // time.Time and the like: a value, not fields
		}
		if !slices.Contains(*out, name) {
			*out = append(*out, name)
		}
		jsonNames(f.Type, seen, out)
	}
}

// fieldCell is a backquoted name in the first cell of a row of the page's field table.
var fieldCell = regexp.MustCompile("`([a-z0-9_]+)(?:\\[\\])?`")

// TestDocsObservability: docs/observability.md names every field of the run report, and its
// field table names no field the report no longer has.
func TestDocsObservability(t *testing.T) {
	data, err := os.ReadFile("../../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	var names []string
	jsonNames(reflect.TypeOf(Report{}), map[reflect.Type]bool{}, &names)
	var missing []string
	for _, n := range names {
		if !strings.Contains(page, "`"+n+"`") && !strings.Contains(page, "`"+n+"[]`") {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		t.Errorf("docs/observability.md does not name these run report fields (as `name`): %s", strings.Join(missing, ", "))
	}
	var gone []string
	inTable := false
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "| field |") {
			inTable = true
			continue
		}
		if !inTable {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "|"), "|")
		for _, m := range fieldCell.FindAllStringSubmatch(first, -1) {
			if !slices.Contains(names, m[1]) {
				gone = append(gone, m[1])
			}
		}
	}
	if !inTable {
		t.Fatal("docs/observability.md has no field table (a line starting \"| field |\")")
	}
	if len(gone) > 0 {
		t.Errorf("docs/observability.md's field table names fields the run report does not have: %s", strings.Join(gone, ", "))
	}
}
