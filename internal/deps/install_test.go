package deps

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// noRoot are the tools a cluster user does not have: package managers and sudo.
var noRoot = []string{"apt", "apt-get", "apt-cache", "dpkg", "dpkg-query", "sudo"}

// lmodInit is where Debian's lmod package puts Lmod's bash set-up.
const lmodInit = "/usr/share/lmod/lmod/init/bash"

// shadowPath is a folder of links to every program on the real PATH (the first of each name, as
// a lookup finds it) except the names left out: a PATH without them.
func shadowPath(t *testing.T, leaveOut ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "path")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	skip := map[string]bool{}
	for _, n := range leaveOut {
		skip[n] = true
	}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			if skip[name] {
				continue
			}
			st, err := os.Stat(filepath.Join(d, name))
			if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
				continue
			}
			skip[name] = true // the first one on PATH wins
			if err := os.Symlink(filepath.Join(d, name), filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, n := range leaveOut {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			t.Fatalf("shadow PATH %s holds %s", dir, n)
		}
	}
	return dir
}

// withEnv is env with each KEY=VALUE of set replacing any KEY there, and each KEY of unset
// removed.
func withEnv(env []string, unset []string, set ...string) []string {
	drop := map[string]bool{}
	for _, k := range unset {
		drop[k] = true
	}
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		drop[k] = true
	}
	var out []string
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}

type ran struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, cmd *exec.Cmd) ran {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return ran{code, out.String(), errb.String()}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

// `make install` with no package manager and no sudo on PATH, then, in a bare environment,
// Debian's Lmod loads the installed module file: facefusion is on PATH, finds its runtime and
// models beside itself, swaps a face from another folder, and the installed batch script runs
// the facefusion on PATH. Without the module, a link to the binary finds the install too.
func TestInstallWithoutRoot(t *testing.T) {
	testenv.Full(t, "runs make install and a swap from the installed tree")
	root := testenv.Root(t)
	cache := testenv.Cache(t)
	testenv.ORTLibrary(t)
	testenv.Model(t, job.BlazeFaceFile)
	testenv.Model(t, job.DlibFile)
	if _, err := os.Stat(lmodInit); err != nil {
		t.Fatalf("test dependency %s is missing: run `make deps` (installs Debian's lmod)", lmodInit)
	}
	prefix := filepath.Join(t.TempDir(), "prefix")

	mk := exec.Command(testenv.Tool(t, "make"), "-C", root, "install", "PREFIX="+prefix, "CACHE="+cache)
	mk.Env = withEnv(os.Environ(), nil, "PATH="+shadowPath(t, noRoot...))
	r := run(t, mk)
	if r.code != 0 {
		t.Fatalf("make install without %v on PATH: exit %d\n%s%s", noRoot, r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "installing Debian packages") {
		t.Errorf("make install tried to install Debian packages:\n%s", r.stderr)
	}

	exe := filepath.Join(prefix, "bin", "facefusion")
	v := run(t, exec.Command(exe, "--version"))
	fields := strings.Fields(v.stdout)
	if v.code != 0 || len(fields) < 2 {
		t.Fatalf("%s --version: exit %d, %q", exe, v.code, v.stdout)
	}
	version := fields[1]
	module := filepath.Join(prefix, "share", "modulefiles", "facefusion", version+".lua")
	for _, f := range []struct{ installed, from string }{
		{exe, filepath.Join(root, "bin", "facefusion")},
		{filepath.Join(prefix, job.InstallRuntime), filepath.Join(cache, "ort", "libonnxruntime.so.1")},
		{filepath.Join(prefix, job.InstallModels, job.BlazeFaceFile), filepath.Join(cache, "models", job.BlazeFaceFile)},
		{filepath.Join(prefix, job.InstallModels, job.DlibFile), filepath.Join(cache, "models", job.DlibFile)},
		{filepath.Join(prefix, "share", "facefusion", "facefusion.sbatch"), filepath.Join(root, "sbatch", "facefusion.sbatch")},
		{filepath.Join(prefix, "share", "doc", "facefusion", "README.md"), filepath.Join(root, "README.md")},
		{filepath.Join(prefix, "share", "doc", "facefusion", "default.toml"), filepath.Join(root, "configs", "default.toml")},
		{filepath.Join(prefix, "share", "man", "man1", "facefusion.1"), filepath.Join(root, "docs", "facefusion.1")},
		{module, ""},
	} {
		st, err := os.Stat(f.installed)
		if err != nil {
			t.Errorf("not installed: %v", err)
			continue
		}
		if f.from == "" {
			continue
		}
		if src, err := os.Stat(f.from); err != nil || src.Size() != st.Size() {
			t.Errorf("%s: %d bytes, not a copy of %s (%v)", f.installed, st.Size(), f.from, err)
		}
	}
	if st, err := os.Stat(exe); err == nil && st.Mode()&0o111 == 0 {
		t.Errorf("%s is not executable: %v", exe, st.Mode())
	}

	// Another folder, a bare environment (a system PATH only, as any login shell has), Lmod.
	work := t.TempDir()
	copyFile(t, testenv.Sample(t, "grace_hopper.jpg"), filepath.Join(work, "grace_hopper.jpg"))
	copyFile(t, testenv.Sample(t, "astronaut.png"), filepath.Join(work, "astronaut.png"))
	const script = `set -eu
source "$1"
module use "$2/share/modulefiles"
module load facefusion
echo "module: $(type -t module) loaded $LOADEDMODULES from $_LMFILES_"
echo "on PATH: $(command -v facefusion)"
echo "set by hand or module: $(env | grep -E '^(FACEFUSION_(HOME|MODELS_DIR|CACHE|BIN)|ONNXRUNTIME_LIBRARY)=' | tr '\n' ' ')."
cd "$3"
facefusion models
facefusion run -s grace_hopper.jpg -t astronaut.png -o out.png 2>run.err
printf 'target_path = "astronaut.png"\n' >job.toml
rc=0
# No Slurm here: srun fails at once, after the script has named the binary it runs.
SLURM_CONF=/dev/null bash "$FACEFUSION_SBATCH" job.toml 2>sbatch.err || rc=$?
echo "sbatch script: exit $rc"
# Linked into a site's modulefiles tree, as sites publish modules.
module purge
module unuse "$2/share/modulefiles"
mkdir site && ln -s "$2/share/modulefiles/facefusion" site/facefusion
module use "$PWD/site"
module load facefusion
echo "linked module: $(command -v facefusion)"
# Without the module, through a link elsewhere: the binary still finds its install.
module purge
ln -s "$2/bin/facefusion" linked
echo "through a link:"
./linked models
`
	sh := exec.Command("/usr/bin/env", "-i", "PATH=/usr/local/bin:/usr/bin:/bin",
		"/bin/bash", "--noprofile", "--norc", "-c", script, "bash", lmodInit, prefix, work)
	sh.Dir = "/"
	r = run(t, sh)
	runErr, _ := os.ReadFile(filepath.Join(work, "run.err"))
	if r.code != 0 {
		t.Fatalf("module load and swap under env -i: exit %d\n%s%s\nrun: %s", r.code, r.stdout, r.stderr, runErr)
	}
	for _, want := range []string{
		"module: function loaded facefusion/" + version + " from " + module + "\n",
		"on PATH: " + exe + "\n",
		"set by hand or module: .\n",
		"models folder  " + filepath.Join(prefix, job.InstallModels) + " (from the install prefix of " + exe + ")\n",
		"ONNX Runtime   " + filepath.Join(prefix, job.InstallRuntime) + " (from the install prefix of " + exe + ")\n",
		"sbatch script: exit 1\n",
		"linked module: " + exe + "\n",
		"through a link:\nmodels folder  " + filepath.Join(prefix, job.InstallModels) + " (from the install prefix of " + exe + ")\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the module session does not print %q:\n%s%s", want, r.stdout, r.stderr)
		}
	}
	if !strings.Contains(string(runErr), "swapped in 1 of 1 frames") {
		t.Errorf("the swap did not swap the face:\n%s", runErr)
	}
	out, target := decodePNG(t, filepath.Join(work, "out.png")), decodePNG(t, filepath.Join(work, "astronaut.png"))
	if out.Bounds() != target.Bounds() {
		t.Fatalf("out.png is %v, the target %v", out.Bounds(), target.Bounds())
	}
	changed := 0
	b := out.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r1, g1, b1, _ := out.At(x, y).RGBA()
			r2, g2, b2, _ := target.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 {
				changed++
			}
		}
	}
	if changed < 1000 {
		t.Errorf("out.png differs from the target in %d pixels: no face was swapped", changed)
	}
	sbatchErr, _ := os.ReadFile(filepath.Join(work, "sbatch.err"))
	if !strings.Contains(string(sbatchErr), exe+" run --config job.toml") {
		t.Errorf("the installed batch script does not run %s from PATH:\n%s", exe, sbatchErr)
	}
}

// An OpenMPI whose ompi-c.pc pkg-config cannot find (a module that sets PATH only) still
// builds: need.sh describes it from mpicc --showme, and cgo builds collective with that; the
// made file goes once pkg-config finds the real one; with neither, it names what to load.
func TestNeedMPI(t *testing.T) {
	testenv.Full(t, "builds collective against an OpenMPI described by need.sh")
	root := testenv.Root(t)
	mpicc := testenv.Tool(t, "mpicc")
	need := filepath.Join(root, "internal", "deps", "need.sh")
	empty := t.TempDir() // pkg-config's own search path, emptied
	shim := filepath.Join(t.TempDir(), "pkgconfig")
	made := filepath.Join(shim, "ompi-c.pc")
	hidden := withEnv(os.Environ(), nil, "PKG_CONFIG_LIBDIR="+empty, "PKG_CONFIG_PATH="+shim, "MPI_PC_DIR="+shim)

	if r := run(t, exec.Command("pkg-config", "--exists", "ompi-c")); r.code != 0 {
		t.Fatalf("pkg-config finds no ompi-c here: run `make deps`")
	}
	pc := exec.Command("pkg-config", "--exists", "ompi-c")
	pc.Env = withEnv(hidden, []string{"PKG_CONFIG_PATH"})
	if r := run(t, pc); r.code == 0 {
		t.Fatalf("PKG_CONFIG_LIBDIR=%s does not hide ompi-c from pkg-config", empty)
	}

	cmd := exec.Command("bash", need, "mpi")
	cmd.Env = hidden
	r := run(t, cmd)
	if r.code != 0 || !strings.Contains(r.stderr, "made from "+mpicc+" --showme") {
		t.Fatalf("need.sh mpi with ompi-c hidden: exit %d, %q", r.code, r.stderr)
	}
	if _, err := os.Stat(made); err != nil {
		t.Fatalf("need.sh wrote no ompi-c.pc: %v", err)
	}
	build := exec.Command(testenv.Tool(t, "go"), "build", "./collective")
	build.Dir, build.Env = root, hidden
	if r := run(t, build); r.code != 0 {
		t.Fatalf("go build ./collective with the ompi-c.pc made from mpicc: exit %d\n%s", r.code, r.stderr)
	}

	cmd = exec.Command("bash", need, "mpi")
	cmd.Env = withEnv(os.Environ(), []string{"PKG_CONFIG_LIBDIR"}, "PKG_CONFIG_PATH="+shim, "MPI_PC_DIR="+shim)
	if r := run(t, cmd); r.code != 0 {
		t.Fatalf("need.sh mpi with ompi-c found: exit %d, %q", r.code, r.stderr)
	}
	if _, err := os.Stat(made); err == nil {
		t.Errorf("%s is still there though pkg-config finds the real ompi-c", made)
	}

	cmd = exec.Command("bash", need, "mpi")
	cmd.Env = withEnv(hidden, nil, "PATH="+shadowPath(t, append([]string{"mpicc"}, noRoot...)...))
	r = run(t, cmd)
	if r.code != 1 || !strings.Contains(r.stderr, "need: mpi is missing (no apt-get here") || !strings.Contains(r.stderr, "module load openmpi") {
		t.Errorf("need.sh mpi with no ompi-c, no mpicc and no apt-get: exit %d, %q; want exit 1 naming what to load", r.code, r.stderr)
	}
}

// make build records where libmpi is (RUNPATH), so the binary starts in a bare environment
// (cron, a login shell, a job that loads no MPI module): every -L folder of ompi-c and the
// folder of libmpi's soname are in it, and the loader searches it for libmpi.
func TestBuildRunpathFindsMPI(t *testing.T) {
	testenv.Full(t, "runs make build and the binary under env -i")
	root := testenv.Root(t)
	exe := filepath.Join(t.TempDir(), "facefusion")
	r := run(t, exec.Command(testenv.Tool(t, "make"), "-C", root, "build", "BIN="+exe))
	if r.code != 0 {
		t.Fatalf("make build: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	pc := run(t, exec.Command("pkg-config", "--libs-only-L", "ompi-c"))
	var want []string
	for _, f := range strings.Fields(pc.stdout) {
		d, ok := strings.CutPrefix(f, "-L")
		if !ok {
			continue
		}
		want = append(want, d)
		if real, err := filepath.EvalSymlinks(filepath.Join(d, "libmpi.so")); err == nil {
			want = append(want, filepath.Dir(real))
		}
	}
	if len(want) == 0 {
		t.Skipf("ompi-c names no -L folder (%q): libmpi is on the loader's default path", pc.stdout)
	}
	dyn := run(t, exec.Command(testenv.Tool(t, "readelf"), "-d", exe))
	var runpath []string
	for _, line := range strings.Split(dyn.stdout, "\n") {
		if _, v, ok := strings.Cut(line, "Library runpath: ["); ok {
			runpath = strings.Split(strings.TrimSuffix(strings.TrimSpace(v), "]"), ":")
		}
	}
	for _, d := range want {
		found := false
		for _, p := range runpath {
			found = found || p == d
		}
		if !found {
			t.Errorf("RUNPATH %q lacks %s (ompi-c: %q)\n%s", runpath, d, pc.stdout, dyn.stdout)
		}
	}

	bare := exec.Command("/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "LD_DEBUG=libs", exe, "--version")
	bare.Dir = "/"
	v := run(t, bare)
	if v.code != 0 || !strings.HasPrefix(v.stdout, "facefusion") {
		t.Fatalf("%s --version under env -i: exit %d, %q\n%s", exe, v.code, v.stdout, v.stderr)
	}
	searched := false
	for _, line := range strings.Split(v.stderr, "\n") {
		searched = searched || strings.Contains(line, "search path="+want[0]) && strings.Contains(line, "(RUNPATH from file "+exe+")")
	}
	if !searched {
		t.Errorf("the loader did not search the RUNPATH for libmpi:\n%s", v.stderr)
	}
}

// install.sh installs make fetch-gpu's provider libraries, licence and VERSION beside the
// runtime when the cache holds them, says so, and does nothing more when it does not; an
// incomplete ort-gpu folder stops it before it installs anything. A stand-in binary and
// runtime: what is checked is the copying, which runs in the fast tier.
func TestInstallGPUProviders(t *testing.T) {
	cache := t.TempDir()
	for name, body := range map[string]string{
		"ort/libonnxruntime.so.1": "runtime", "models/blazeface_front_128.onnx": "model",
	} {
		path := filepath.Join(cache, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(t.TempDir(), "facefusion")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho 'facefusion 9.9.9-test'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	install := func(prefix string) ran {
		return run(t, exec.Command("bash", "install.sh", prefix, bin, cache))
	}
	gpuFiles := []string{"libonnxruntime_providers_cuda.so", "libonnxruntime_providers_tensorrt.so", "libonnxruntime_providers_shared.so", "LICENSE", "VERSION"}

	prefix := t.TempDir()
	if r := install(prefix); r.code != 0 || strings.Contains(r.stderr, "providers") {
		t.Fatalf("install without ort-gpu: exit %d, %q; want no word of the providers", r.code, r.stderr)
	}
	for _, f := range gpuFiles {
		if _, err := os.Stat(filepath.Join(prefix, "lib", "facefusion", f)); !os.IsNotExist(err) {
			t.Errorf("install without ort-gpu installed %s: %v", f, err)
		}
	}

	gpu := filepath.Join(cache, "ort-gpu")
	if err := os.Mkdir(gpu, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range gpuFiles[:4] {
		if err := os.WriteFile(filepath.Join(gpu, f), []byte("body of "+f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fresh := filepath.Join(t.TempDir(), "prefix")
	if r := install(fresh); r.code == 0 || !strings.Contains(r.stderr, filepath.Join(gpu, "VERSION")+" is missing: run `make fetch-gpu`") {
		t.Errorf("install with ort-gpu lacking VERSION: exit %d, %q; want it refused naming the file", r.code, r.stderr)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("the refused install made %s: %v", fresh, err)
	}

	if err := os.WriteFile(filepath.Join(gpu, "VERSION"), []byte("1.29.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := install(prefix)
	if r.code != 0 || !strings.Contains(r.stderr, "ONNX Runtime 1.29.0's CUDA and TensorRT providers (make fetch-gpu) in "+filepath.Join(prefix, "lib", "facefusion")) {
		t.Fatalf("install with ort-gpu: exit %d, %q; want the providers said", r.code, r.stderr)
	}
	for _, f := range gpuFiles {
		src, _ := os.ReadFile(filepath.Join(gpu, f))
		if b, err := os.ReadFile(filepath.Join(prefix, "lib", "facefusion", f)); err != nil || !bytes.Equal(b, src) {
			t.Errorf("installed %s: %q, %v; want a copy of the cache's %q", f, b, err, src)
		}
	}
	if b, err := os.ReadFile(filepath.Join(prefix, job.InstallRuntime)); err != nil || string(b) != "runtime" {
		t.Errorf("the runtime beside them: %q, %v", b, err)
	}
}
