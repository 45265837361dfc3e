package archtest

import (
	"bytes"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// module is the module's import path: the packages it prefixes are the ones the table places.
const module = "github.com/facefusion-hpc/facefusion"

// tableFile is where the table lives, for the messages that ask to change it.
const tableFile = "internal/archtest/layers_test.go"

// layer is one floor of the module: its packages, by path below the module ("internal/job"; a
// final "/*" stands for every package one level below that no layer names, "internal/processors/*").
type layer struct {
	name string
	pkgs []string
	// peers: the layer's packages may import one another. Only the test support's do: a
	// production package imports strictly downward.
	peers bool
}

// layers are the module's packages, bottom to top: a package imports only packages of lower
// layers (of its own only where the layer says peers). A new package goes into the lowest
// layer above everything it imports.
var layers = []layer{
	{name: "leaves", pkgs: []string{"collective", "configs", "internal/audio", "internal/deps", "internal/fault", "internal/geom", "internal/hugepage",
		"internal/mp4", "internal/progress", "internal/safefs", "internal/slurm", "internal/wire", "rank"}},
	{name: "pixels, faces and the log", pkgs: []string{"internal/face", "internal/logging", "internal/raster"}},
	{name: "image operations and the ONNX Runtime boundary", pkgs: []string{"infer", "internal/align", "internal/jpeg",
		"internal/landmark", "internal/swap", "internal/temporal"}},
	{name: "media and model facts", pkgs: []string{"internal/video", "internal/models/catalog"}},
	{name: "models' pre- and post-processing", pkgs: []string{"internal/models/facemodel"}},
	{name: "model adapters", pkgs: []string{"internal/models/adapters"}},
	{name: "settings and the job folder", pkgs: []string{"internal/job", "lustre"}},
	{name: "run report", pkgs: []string{"internal/report"}},
	{name: "output paths and the report's readers", pkgs: []string{"internal/outpath", "internal/metrics", "internal/scaling", "internal/download"}},
	{name: "resolved settings", pkgs: []string{"internal/spec"}},
	{name: "the processor interface and compositing", pkgs: []string{"internal/processors", "internal/processors/composite"}},
	{name: "one processor each", pkgs: []string{"internal/processors/*"}},
	{name: "frame pipeline", pkgs: []string{"internal/pipeline"}},
	{name: "parallel join", pkgs: []string{"internal/join"}},
	{name: "one job across ranks", pkgs: []string{"internal/driver"}},
	{name: "batches", pkgs: []string{"internal/batch"}},
	{name: "command", pkgs: []string{"cmd/facefusion"}},
	{name: "test support", peers: true, pkgs: []string{"internal/clitest", "internal/testenv", "internal/slurmtest", "internal/ranktest",
		"internal/processors/processortest",
		"internal/conformance", "internal/deps/gpucheck", "infer/fixtures", "infer/fixtures/gen", "infer/enginebench",
		"collective/internal/mpitest", "cmd/facefusion/e2e/*", "internal/archtest"}},
}

// media are the packages of images and video: the job folder (lustre) is files and names only.
var media = []string{"internal/video", "internal/mp4", "internal/raster", "internal/jpeg"}

// pkg is one package of the module as go list gives it, its paths below the module.
type pkg struct {
	path    string
	imports []string // the module's packages its non-test files import
	deps    []string // the module's packages it depends on, directly or not
}

// TestLayers: every non-test import of every package of the module points to a lower layer;
// the job folder holds no media and the ONNX Runtime boundary stands on the leaves.
func TestLayers(t *testing.T) {
	pkgs := modulePackages(t)
	t.Run("ImportsPointDown", func(t *testing.T) { importsPointDown(t, pkgs) })
	t.Run("JobFolderHasNoMedia", func(t *testing.T) { jobFolderHasNoMedia(t, pkgs) })
	t.Run("InferStandsOnLeaves", func(t *testing.T) { inferStandsOnLeaves(t, pkgs) })
}

// importsPointDown checks each package's imports against the table; a package missing from
// it fails, asking to place it.
func importsPointDown(t *testing.T, pkgs []pkg) {
	for _, p := range pkgs {
		from, ok := layerOf(p.path)
		if !ok {
			t.Errorf("%s is in no layer: add %s to the layer table in %s", p.path, p.path, tableFile)
			continue
		}
		for _, imp := range p.imports {
			to, ok := layerOf(imp)
			if !ok || to < from || to == from && layers[from].peers {
				continue // a package in no layer is reported as such
			}
			t.Errorf("%s (layer %d, %s) imports %s (layer %d, %s): a package imports only lower layers; move the code down, or change the table in %s",
				p.path, from, layers[from].name, imp, to, layers[to].name, tableFile)
		}
	}
}

// jobFolderHasNoMedia: the job folder is layout, durable writes, claims and the manifest; what
// its segments hold is the video package's.
func jobFolderHasNoMedia(t *testing.T, pkgs []pkg) {
	p := find(t, pkgs, "lustre")
	for _, d := range p.deps {
		if slices.Contains(media, d) {
			t.Errorf("lustre depends on the media package %s: pass what it needs (a name, an extension) from the caller", d)
		}
	}
}

// inferStandsOnLeaves: the ONNX Runtime boundary stands on the leaves alone; the models above
// it (catalog, facemodel, adapters) are the ones that know FaceFusion.
func inferStandsOnLeaves(t *testing.T, pkgs []pkg) {
	p := find(t, pkgs, "infer")
	for _, d := range p.deps {
		if l, ok := layerOf(d); !ok || l != 0 {
			t.Errorf("infer depends on %s, outside the leaves (%s)", d, strings.Join(layers[0].pkgs, " "))
		}
	}
}

// find is the package at path.
func find(t *testing.T, pkgs []pkg, path string) pkg {
	t.Helper()
	for _, p := range pkgs {
		if p.path == path {
			return p
		}
	}
	t.Fatalf("no package %s in the module", path)
	return pkg{}
}

// TestTableIsOneToOne: a package pattern is in one layer, once.
func TestTableIsOneToOne(t *testing.T) {
	seen := map[string]string{}
	for _, l := range layers {
		for _, p := range l.pkgs {
			if was, ok := seen[p]; ok {
				t.Errorf("%s is in the layers %q and %q", p, was, l.name)
			}
			seen[p] = l.name
		}
	}
}

// layerOf is the index of the layer of the package at p (below the module). A package named
// in a layer is in that one, whatever "/*" pattern also matches it (a test-support package
// among the processors).
func layerOf(p string) (int, bool) {
	for i, l := range layers {
		if slices.Contains(l.pkgs, p) {
			return i, true
		}
	}
	for i, l := range layers {
		for _, pat := range l.pkgs {
			if dir, ok := strings.CutSuffix(pat, "/*"); ok && path.Dir(p) == dir {
				return i, true
			}
		}
	}
	return 0, false
}

// modulePackages lists the module's packages with go list, in both builds of collective (MPI
// through cgo, and the stub without it), so that every file's imports count.
func modulePackages(t *testing.T) []pkg {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command, to list the packages: %v", err)
	}
	root := moduleRoot(t, goTool)
	byPath := map[string]*pkg{}
	var order []string
	for _, tags := range []string{"", "nompi"} {
		cmd := exec.Command(goTool, "list", "-tags="+tags, "-f", `{{.ImportPath}}|{{join .Imports " "}}|{{join .Deps " "}}`, "./...")
		cmd.Dir = root
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -tags=%s ./... in %s: %v\n%s", tags, root, err, stderr.String())
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			parts := strings.SplitN(line, "|", 3)
			if len(parts) != 3 {
				t.Fatalf("go list printed %q", line)
			}
			p, ok := below(parts[0])
			if !ok {
				continue
			}
			if byPath[p] == nil {
				byPath[p] = &pkg{path: p}
				order = append(order, p)
			}
			byPath[p].imports = addOwn(byPath[p].imports, parts[1])
			byPath[p].deps = addOwn(byPath[p].deps, parts[2])
		}
	}
	pkgs := make([]pkg, 0, len(order))
	for _, p := range order {
		pkgs = append(pkgs, *byPath[p])
	}
	return pkgs
}

// moduleRoot is the folder holding the module's go.mod.
func moduleRoot(t *testing.T, goTool string) string {
	t.Helper()
	out, err := exec.Command(goTool, "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == "/dev/null" {
		t.Fatalf("go env GOMOD: %q, %v: run the test inside the module", gomod, err)
	}
	return filepath.Dir(gomod)
}

// below is an import path below the module ("internal/job"), and whether it is the module's.
func below(importPath string) (string, bool) {
	if importPath == module {
		return ".", true
	}
	return strings.CutPrefix(importPath, module+"/")
}

// addOwn adds to list the module's packages among the space-separated import paths, once each.
func addOwn(list []string, paths string) []string {
	for _, ip := range strings.Fields(paths) {
		if p, ok := below(ip); ok && !slices.Contains(list, p) {
			list = append(list, p)
		}
	}
	return list
}
