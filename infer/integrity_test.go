package infer_test

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
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
	if s, err := infer.VerifyModel(path, "", false); err != nil || s.SHA256 != "" || s.Size != int64(len(data)) {
		t.Errorf("no .hash, no sha256: %+v %v", s, err)
	}
	if s, err := infer.VerifyModel(path, "", true); err != nil || s.SHA256 != sha {
		t.Errorf("sha256 asked for: %+v %v, want %s", s, err, sha)
	}
	if _, err := infer.VerifyModel(path, sha, false); err != nil {
		t.Errorf("right sha256: %v", err)
	}
	_, err = infer.VerifyModel(path, "00"+sha[2:], false)
	testenv.CheckError(t, "wrong sha256", err, path, "sha256 "+sha, "replace it")

	// FaceFusion writes the 8 hex digits with no newline.
	if err := os.WriteFile(infer.HashPath(path), []byte(crc), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := infer.VerifyModel(path, sha, false); err != nil || s.CRC32 != crc {
		t.Errorf("right .hash: %+v %v", s, err)
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
	wrong := "0badf00d"
	if wrong == crc {
		wrong = "0badf00e"
	}
	if err := os.WriteFile(infer.HashPath(path), []byte(wrong+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = infer.VerifyModel(path, "", false)
	testenv.CheckError(t, "wrong .hash", err, path, "CRC32 "+crc, infer.HashPath(path), wrong)
	if r := list(); r.State != infer.ModelRefused || r.Detail == "" {
		t.Errorf("gfpgan with a wrong .hash: %s, want refused with a reason", r.State)
	}
	_, err = infer.OpenSession(catalog.Must("gfpgan_1.4").Spec(), infer.SessionConfig{ModelsDir: dir})
	testenv.CheckError(t, "open with a wrong .hash", err, "does not match", wrong)

	if err := os.WriteFile(infer.HashPath(path), []byte("not hex"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = infer.VerifyModel(path, "", false)
	testenv.CheckError(t, "garbage .hash", err, "not an 8-digit CRC32")

	// Right signature, wrong signature.
	if err := os.Remove(infer.HashPath(path)); err != nil {
		t.Fatal(err)
	}
	if r := list(); r.State == infer.ModelRefused || r.State == infer.ModelMissing {
		t.Errorf("gfpgan without a .hash: %s %s, want it accepted", r.State, r.Detail)
	}
	if err := os.WriteFile(path, fixtures.WrongSignature(), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := list(); r.State != infer.ModelRefused || !strings.Contains(r.Detail, "signature") {
		t.Errorf("gfpgan with a wrong signature: %s %s, want refused", r.State, r.Detail)
	}
}

// TestPublishedHashes holds a file to FaceFusion's published sha256: the real scrfd_2.5g is
// verified; a fixture under a published name is mismatched, named by both sums, and warns
// unless model_sha256 pins it; a name with no published hash says so.
func TestPublishedHashes(t *testing.T) {
	dir := fixtures.Dir(t, "gfpgan_1.4", "ghost_1_256")
	if err := os.Symlink(testenv.SharedModel(t, "scrfd_2.5g.onnx"), filepath.Join(dir, "scrfd_2.5g.onnx")); err != nil {
		t.Fatal(err)
	}
	if err := infer.Init(testenv.ORTLibrary(t)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "gfpgan_1.4.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	fixtureSHA := hex.EncodeToString(sum[:])
	specs, err := catalog.Specs("scrfd_2.5g", "gfpgan_1.4", "ghost_1_256", "xseg_1")
	if err != nil {
		t.Fatal(err)
	}
	rs, err := infer.ListModels(dir, specs, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []infer.ModelState{infer.ModelVerified, infer.ModelMismatched, infer.ModelUnpublished, infer.ModelMissing}
	for i, r := range rs {
		if r.State != want[i] {
			t.Errorf("%s: %s (%s), want %s", r.Name, r.State, r.Detail, want[i])
		}
	}
	if s := rs[0].Sums; s.Size != 3295067 || s.SHA256 != "2c07342347cef21a619c49dd5664fb8c09570ae9eda5bff3e385c11eafc45ada" {
		t.Errorf("scrfd_2.5g sums %+v", s)
	}
	if rs[0].Warning() != "" || rs[2].Warning() != "" {
		t.Errorf("warnings for a verified or unpublished file: %q %q", rs[0].Warning(), rs[2].Warning())
	}
	testenv.CheckError(t, "published mismatch", errors.New(rs[1].Warning()), filepath.Join(dir, "gfpgan_1.4.onnx"),
		fixtureSHA, catalog.Must("gfpgan_1.4").Published.SHA256, "check it is the one you meant")
	// Pinned by model_sha256: still not FaceFusion's, but what the site meant: no warning.
	rs, err = infer.ListModels(dir, specs[1:2], map[string]string{"gfpgan_1.4": fixtureSHA})
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].State != infer.ModelMismatched || rs[0].Warning() != "" || !strings.Contains(rs[0].Detail, "model_sha256") {
		t.Errorf("pinned re-export: %s, warning %q, detail %q", rs[0].State, rs[0].Warning(), rs[0].Detail)
	}
}

// A file this process has summed is not read again while its identity (inode, size,
// modification time) holds; a new modification time reads it again.
func TestSumsReadOnce(t *testing.T) {
	dir := fixtures.Dir(t, "codeformer")
	path := filepath.Join(dir, "codeformer.onnx")
	first, err := infer.VerifyModel(path, "", true)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{0xff, 0xff, 0xff, 0xff}, 100) // same inode and size
	f.Close()
	if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if again, _ := infer.VerifyModel(path, "", true); again.SHA256 != first.SHA256 {
		t.Errorf("the file was read again: %s, first %s", again.SHA256, first.SHA256)
	}
	later := st.ModTime().Add(time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if again, _ := infer.VerifyModel(path, "", true); again.SHA256 == first.SHA256 {
		t.Error("a file with a new modification time was not read again")
	}
}

// BenchmarkVerifyModel is the start-up cost of checking a model file against FaceFusion's
// published sha256 (one read, sha256 and, with a .hash beside it, CRC32) on the real
// scrfd_2.5g and on a 500 MB file, read from the page cache; Checksums bypasses the process's
// memo of sums so that every iteration reads the file.
func BenchmarkVerifyModel(b *testing.B) {
	big := filepath.Join(b.TempDir(), "big.onnx")
	f, err := os.Create(big)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	block := make([]byte, 1<<20)
	for range 500 {
		for i := 0; i < len(block); i += 8 {
			binary.LittleEndian.PutUint64(block[i:], r.Uint64())
		}
		if _, err := f.Write(block); err != nil {
			b.Fatal(err)
		}
	}
	f.Close()
	scrfd := testenv.SharedModel(b, "scrfd_2.5g.onnx")
	for _, c := range []struct {
		name     string
		path     string
		crc, sha bool
	}{
		{"scrfd_2.5g/sha256", scrfd, false, true},
		{"scrfd_2.5g/crc32", scrfd, true, false},
		{"scrfd_2.5g/crc32+sha256", scrfd, true, true},
		{"500MB/sha256", big, false, true},
		{"500MB/crc32", big, true, false},
		{"500MB/crc32+sha256", big, true, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			st, err := os.Stat(c.path)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(st.Size())
			for b.Loop() {
				if _, err := infer.Checksums(c.path, c.crc, c.sha); err != nil {
					b.Fatal(err)
				}
			}
		})
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
