package infer_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/catalog"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

func TestHashFiles(t *testing.T) {
	dir := fixtures.Dir(t, "gfpgan_1.4")
	path := filepath.Join(dir, "gfpgan_1.4.onnx")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	crc := fmt.Sprintf("%08x", crc32.ChecksumIEEE(data))
	sum := sha256.Sum256(data)
	sha := hex.EncodeToString(sum[:])
	if infer.HashPath(path) != filepath.Join(dir, "gfpgan_1.4.hash") {
		t.Errorf("hash path %s", infer.HashPath(path))
	}
	if err := infer.VerifyModel(path, ""); err != nil {
		t.Errorf("no .hash, no sha256: %v", err)
	}
	if err := infer.VerifyModel(path, sha); err != nil {
		t.Errorf("right sha256: %v", err)
	}
	testenv.CheckError(t, "wrong sha256", infer.VerifyModel(path, "00"+sha[2:]), path, "sha256 "+sha, "replace it")

	// FaceFusion writes the 8 hex digits with no newline.
	if err := os.WriteFile(infer.HashPath(path), []byte(crc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := infer.VerifyModel(path, sha); err != nil {
		t.Errorf("right .hash: %v", err)
	}
	list := func() infer.ModelReport {
		rs, err := infer.ListModels(dir, []infer.Spec{catalog.Must("gfpgan_1.4").Spec(), catalog.Must("codeformer").Spec()}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rs[1].State != infer.ModelMissing {
			t.Errorf("codeformer: %s, want missing", rs[1].State)
		}
		return rs[0]
	}
	if err := infer.Init(testenv.ORTLibrary(t)); err != nil {
		t.Fatal(err)
	}
	if r := list(); r.State != infer.ModelVerified {
		t.Errorf("gfpgan with its .hash: %s %s, want verified", r.State, r.Detail)
	}
	wrong := "0badf00d"
	if wrong == crc {
		wrong = "0badf00e"
	}
	if err := os.WriteFile(infer.HashPath(path), []byte(wrong+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.CheckError(t, "wrong .hash", infer.VerifyModel(path, ""), path, "CRC32 "+crc, infer.HashPath(path), wrong)
	if r := list(); r.State != infer.ModelMismatched || r.Detail == "" {
		t.Errorf("gfpgan with a wrong .hash: %s, want mismatched with a reason", r.State)
	}
	_, err = infer.OpenSession(catalog.Must("gfpgan_1.4").Spec(), infer.SessionConfig{ModelsDir: dir})
	testenv.CheckError(t, "open with a wrong .hash", err, "does not match", wrong)

	if err := os.WriteFile(infer.HashPath(path), []byte("not hex"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.CheckError(t, "garbage .hash", infer.VerifyModel(path, ""), "not an 8-digit CRC32")

	// No checksum, right signature: found. Wrong signature: mismatched.
	if err := os.Remove(infer.HashPath(path)); err != nil {
		t.Fatal(err)
	}
	if r := list(); r.State != infer.ModelFound {
		t.Errorf("gfpgan without checksums: %s, want found", r.State)
	}
	if err := os.WriteFile(path, fixtures.WrongSignature(), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := list(); r.State != infer.ModelMismatched {
		t.Errorf("gfpgan with a wrong signature: %s, want mismatched", r.State)
	}
}

// TestEmap reads inswapper's emap (the last initializer) back from the fixtures, float32 and
// float16, without ONNX Runtime.
func TestEmap(t *testing.T) {
	dir := fixtures.Dir(t, "inswapper_128", "inswapper_128_fp16", "gfpgan_1.4")
	want := fixtures.Emap()
	for _, name := range []string{"inswapper_128", "inswapper_128_fp16"} {
		got, err := infer.Emap(filepath.Join(dir, name+".onnx"))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d values", name, len(got))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: emap[%d] = %v, want %v", name, i, got[i], want[i])
			}
		}
	}
	_, err := infer.Emap(filepath.Join(dir, "gfpgan_1.4.onnx"))
	testenv.CheckError(t, "emap of gfpgan", err, "gfpgan_1.4.onnx", "not FaceFusion's inswapper")
	bad := filepath.Join(dir, "truncated.onnx")
	b, _ := os.ReadFile(filepath.Join(dir, "inswapper_128.onnx"))
	if err := os.WriteFile(bad, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = infer.Emap(bad)
	testenv.CheckError(t, "truncated file", err, bad, "truncated")
}

// TestInitializersOfRealModel decodes a file from a real exporter (BlazeFace, tf2onnx): every
// float initializer holds exactly the product of its dims.
func TestInitializersOfRealModel(t *testing.T) {
	inits, err := infer.ReadInitializers(testenv.Model(t, "blazeface_front_128.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	floats := 0
	for _, in := range inits {
		if in.Type != infer.Float32 {
			continue
		}
		floats++
		n := int64(1)
		for _, d := range in.Dims {
			n *= d
		}
		if int64(len(in.Data)) != n {
			t.Errorf("%s: %d values for dims %v", in.Name, len(in.Data), in.Dims)
		}
	}
	if floats < 10 {
		t.Errorf("only %d float initializers in BlazeFace", floats)
	}
}

// f16Reference converts by search: the half value nearest to f, ties to the even pattern.
func f16Reference(f float32) uint16 {
	if math.IsNaN(float64(f)) {
		return 0x7e00
	}
	sign := uint16(0)
	if math.Signbit(float64(f)) {
		sign = 0x8000
	}
	a := math.Abs(float64(f))
	if a >= 65520 { // halfway between 65504 and the next (absent) step rounds to Inf
		return sign | 0x7c00
	}
	best, bestD := uint16(0), math.Inf(1)
	lo, hi := 0, 0x7bff
	for lo < hi { // largest pattern with value <= a
		mid := (lo + hi + 1) / 2
		if float64(infer.F32From16(uint16(mid))) <= a {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	for _, h := range []int{lo, lo + 1} {
		if h > 0x7bff {
			continue
		}
		d := math.Abs(float64(infer.F32From16(uint16(h))) - a)
		if d < bestD || (d == bestD && h&1 == 0) {
			best, bestD = uint16(h), d
		}
	}
	return sign | best
}

func TestFloat16Conversion(t *testing.T) {
	for h := range 1 << 16 {
		f := infer.F32From16(uint16(h))
		if math.IsNaN(float64(f)) {
			continue
		}
		if got := infer.F16(f); got != uint16(h) {
			t.Fatalf("F16(F32From16(%#04x) = %v) = %#04x", h, f, got)
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 200000 {
		var f float32
		switch i % 3 {
		case 0:
			f = math.Float32frombits(r.Uint32())
		case 1:
			f = float32(r.NormFloat64() * 1e-5) // subnormal halves
		default:
			f = float32(r.NormFloat64() * 100)
		}
		if math.IsNaN(float64(f)) {
			continue
		}
		if got, want := infer.F16(f), f16Reference(f); got != want {
			t.Fatalf("F16(%v) = %#04x, want %#04x", f, got, want)
		}
	}
}

func BenchmarkF16(b *testing.B) {
	v := make([]float32, 3*128*128)
	for i := range v {
		v[i] = float32(i%256) / 255
	}
	out := make([]uint16, len(v))
	b.SetBytes(int64(4 * len(v)))
	for b.Loop() {
		for i, f := range v {
			out[i] = infer.F16(f)
		}
	}
}
