package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// SharedModel is a real model file from ../shared/models beside the repository (FaceFusion's
// own files, never committed: see its README). A missing file fails the test, in CI too.
func SharedModel(t testing.TB, name string) string {
	t.Helper()
	path := filepath.Join(Root(t), "..", "shared", "models", name)
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Fatalf("test dependency %s is missing: the project's shared folder (../shared/models beside the checkout) must hold FaceFusion's %s", path, name)
	}
	return path
}
