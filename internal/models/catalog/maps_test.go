package catalog

import "testing"

// TestSideTablesNameModels keeps the per-name side tables honest: a misspelt key would silently
// drop a model's published sums or its download base.
func TestSideTablesNameModels(t *testing.T) {
	for name := range published {
		if _, ok := table[name]; !ok {
			t.Errorf("published facts for %q, which is not in the table", name)
		}
	}
	for name := range distribution {
		if _, ok := table[name]; !ok {
			t.Errorf("distribution facts for %q, which is not in the table", name)
		}
	}
	for name, m := range table {
		if m.Kind == DeepSwapper { // one base per scope (addDeepSwappers)
			continue
		}
		if _, ok := distribution[name]; !ok || m.Base == "" && m.Package == "" || m.Licence == "" {
			t.Errorf("%s: no download base or licence", name)
		}
	}
}
