package infer_test

import (
	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"slices"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// ResolveProviders, which the resume fingerprint records, says what a real session with the
// same Execution uses: the same providers after the same fallback, or the same refusal.
func TestResolveProvidersIsWhatSessionsUse(t *testing.T) {
	dir := fixtures.Dir(t, "gfpgan_1.4")
	lib := testenv.ORTLibrary(t)
	for _, ps := range [][]string{nil, {"cpu"}, {"cuda", "cpu"}, {"tensorrt", "cuda", "cpu"}, {"cuda"}} {
		ex := infer.Execution{Providers: ps}
		s, serr := infer.OpenSession(catalog.Must("gfpgan_1.4").Spec(), infer.SessionConfig{ModelsDir: dir, Library: lib, Execution: ex, Logf: func(string, ...any) {}})
		got, err := infer.ResolveProviders(ex)
		if serr != nil {
			if err == nil || !strings.Contains(serr.Error(), err.Error()) {
				t.Errorf("%v: the session is refused (%v), ResolveProviders says %v, %v", ps, serr, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, s.Providers()) {
			t.Errorf("%v: ResolveProviders %v (%v), the session uses %v", ps, got, err, s.Providers())
		}
		s.Close()
	}
}

// The default providers are FaceFusion's: the first the runtime has, in its order (cuda,
// tensorrt, cpu). This CPU build of the runtime has cpu alone, and with no provider library
// set, says that is why not the others.
func TestDefaultProvidersAreTheRuntimes(t *testing.T) {
	if err := infer.Init(testenv.ORTLibrary(t)); err != nil {
		t.Fatal(err)
	}
	a, err := infer.AvailableProviders()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Available, []string{"cpu"}) || !slices.Equal(a.Default(), []string{"cpu"}) || a.GPU() {
		t.Errorf("available %v, default %v, want cpu alone", a.Available, a.Default())
	}
	if why := a.Why(); why != "cuda: no CUDA provider library (run `make fetch-gpu`, or set execution_provider_library); tensorrt: no TensorRT provider library (run `make fetch-gpu`, or set execution_provider_library)" {
		t.Errorf("why not a GPU provider: %q, want the provider libraries missing", why)
	}
	if got, err := infer.ResolveProviders(infer.Execution{}); err != nil || !slices.Equal(got, []string{"cpu"}) {
		t.Errorf("no providers given: resolved %v (%v), want FaceFusion's default cpu", got, err)
	}
}
