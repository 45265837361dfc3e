package deps

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gpu-check-parts.sh carries a bundle in parts, one call each, as the GPU node gets them: a
// round trip through three parts staged by three calls gives the bundle back, file for file;
// a part that is missing, or damaged in transit or in the stage, and a file the manifest does
// not vouch for, are each refused in one line naming it. A generated 2.6 MB bundle in 1 MiB
// parts: the same script cuts the provider libraries into 56 MiB ones.
func TestGPUCheckParts(t *testing.T) {
	dir := t.TempDir()
	bundle := filepath.Join(dir, "bundle")
	big := make([]byte, 2_600_000)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range big {
		big[i] = byte(r.Uint32())
	}
	files := map[string][]byte{
		"lib/big.so": big,
		"run.sh":     []byte("echo \"run.sh ran with $*\"\n"),
	}
	for name, b := range files {
		path := filepath.Join(bundle, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stage := filepath.Join(dir, "stage")
	parts := func(args ...string) ran {
		cmd := exec.Command("bash", append([]string{"gpu-check-parts.sh"}, args...)...)
		cmd.Env = withEnv(os.Environ(), nil, "GPU_CHECK_STAGE="+stage)
		return run(t, cmd)
	}
	all := filepath.Join(dir, "parts")
	if p := parts("pack", bundle, all, "1"); p.code != 0 {
		t.Fatalf("pack: exit %d, %s", p.code, p.stderr)
	}
	for _, name := range []string{"part-01", "part-02", "part-03"} {
		if st, err := os.Stat(filepath.Join(all, name)); err != nil || st.Size() > 1<<20 {
			t.Fatalf("%s: %v, %v; want a part of 1 MiB at most", name, st, err)
		}
	}
	if _, err := os.Stat(filepath.Join(all, "part-04")); err == nil {
		t.Fatal("2.6 MB in 1 MiB parts made a fourth part")
	}
	self, _ := os.ReadFile("gpu-check-parts.sh")
	if b, err := os.ReadFile(filepath.Join(all, "gpu-check-parts.sh")); err != nil || !bytes.Equal(b, self) {
		t.Errorf("the parts folder holds no copy of gpu-check-parts.sh for a node without the repository: %v", err)
	}
	// carry is what one call carries: MANIFEST and the named parts (a damaged copy for flip).
	carry := func(name string, flip bool, parts ...string) string {
		d := filepath.Join(dir, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		copyFile(t, filepath.Join(all, "MANIFEST"), filepath.Join(d, "MANIFEST"))
		for _, p := range parts {
			copyFile(t, filepath.Join(all, p), filepath.Join(d, p))
			if flip {
				corrupt(t, filepath.Join(d, p))
			}
		}
		return d
	}

	if p := parts("stage", carry("call1", false, "part-01")); p.code != 0 || !strings.Contains(p.stderr, "holds 1 of 3 parts; still to stage: part-02 part-03") {
		t.Errorf("stage part-01: exit %d, %q", p.code, p.stderr)
	}
	damaged := carry("call2-damaged", true, "part-02")
	if p := parts("stage", damaged); p.code != 1 || !strings.Contains(p.stderr, filepath.Join(damaged, "part-02")+" has sha256 ") || !strings.Contains(p.stderr, "damaged; refused") {
		t.Errorf("stage a damaged part-02: exit %d, %q; want it refused", p.code, p.stderr)
	}
	if p := parts("stage", carry("call2", false, "part-02")); p.code != 0 || !strings.Contains(p.stderr, "holds 2 of 3 parts; still to stage: part-03") {
		t.Errorf("stage part-02: exit %d, %q", p.code, p.stderr)
	}
	manifestOnly := carry("manifest-only", false)
	if p := parts("run", manifestOnly, "x"); p.code != 1 || !strings.Contains(p.stderr, stage+" lacks part-03: stage each") || strings.Contains(p.stdout, "run.sh ran") {
		t.Errorf("run without part-03: exit %d, %q, %q; want it refused naming part-03", p.code, p.stdout, p.stderr)
	}
	corrupt(t, filepath.Join(stage, "part-01"))
	if p := parts("unpack", carry("call3-staged-damage", false, "part-03")); p.code != 1 || !strings.Contains(p.stderr, stage+" lacks part-01:") {
		t.Errorf("unpack with a staged part-01 damaged: exit %d, %q; want part-01 named", p.code, p.stderr)
	}
	if p := parts("stage", carry("call1-again", false, "part-01")); p.code != 0 || !strings.Contains(p.stderr, "holds all 3 parts") {
		t.Errorf("stage part-01 again: exit %d, %q", p.code, p.stderr)
	}
	p := parts("run", manifestOnly, "--batches", "1")
	if p.code != 0 || p.stdout != "run.sh ran with --batches 1\n" {
		t.Fatalf("run with every part staged: exit %d, %q, %q", p.code, p.stdout, p.stderr)
	}
	for name, want := range files {
		if b, err := os.ReadFile(filepath.Join(stage, "bundle", name)); err != nil || !bytes.Equal(b, want) {
			t.Errorf("reassembled %s: %d bytes, %v; want the bundle's %d", name, len(b), err, len(want))
		}
	}

	// A manifest whose file sum does not match what the parts hold: the unpacked file is refused.
	m, err := os.ReadFile(filepath.Join(manifestOnly, "MANIFEST"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(m), "\n")
	for i, l := range lines {
		if strings.HasSuffix(l, "  bundle/lib/big.so") {
			lines[i] = strings.Repeat("0", 64) + "  bundle/lib/big.so"
		}
	}
	if err := os.WriteFile(filepath.Join(manifestOnly, "MANIFEST"), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if p := parts("unpack", manifestOnly); p.code != 1 || !strings.Contains(p.stderr, "the reassembled bundle's lib/big.so has sha256 ") {
		t.Errorf("unpack under a manifest that does not vouch for lib/big.so: exit %d, %q", p.code, p.stderr)
	}

	// A copy into the stage that fails (here: its temporary name leads nowhere) fails the
	// call instead of reporting the stage as it was.
	if err := os.Symlink(filepath.Join(dir, "nowhere", "MANIFEST"), filepath.Join(stage, "MANIFEST.part")); err != nil {
		t.Fatal(err)
	}
	if p := parts("stage", carry("call-copy-fails", false)); p.code == 0 || strings.Contains(p.stderr, "holds all 3 parts") {
		t.Errorf("stage with a copy that fails: exit %d, %q; want it to fail", p.code, p.stderr)
	}
}

// corrupt flips one byte in the middle of path.
func corrupt(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// gpu-check.sh names make fetch-gpu, before it builds anything, when the cache lacks the
// provider libraries the bundle carries.
func TestGPUCheckNeedsFetchGPU(t *testing.T) {
	cache := t.TempDir()
	for _, f := range []string{"ort/libonnxruntime.so.1", "models/blazeface_front_128.onnx", "models/fr_feature.onnx", "samples/grace_hopper.png", "demo/target.mp4"} {
		path := filepath.Join(cache, f)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "gpu-check")
	cmd := exec.Command("bash", "gpu-check.sh", cache)
	cmd.Env = withEnv(os.Environ(), nil, "GPU_CHECK_DIR="+out)
	r := run(t, cmd)
	want := filepath.Join(cache, "ort-gpu", "libonnxruntime_providers_cuda.so") + " is missing: run `make fetch-gpu`"
	if r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("gpu-check.sh without ort-gpu: exit %d, %q; want %q", r.code, r.stderr, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the refused gpu-check.sh made %s: %v", out, err)
	}
}
