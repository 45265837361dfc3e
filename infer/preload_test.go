package infer_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// A model registered as preloaded bytes (the driver's model broadcast) is the file: with the
// file and its MODEL.hash moved away, the session opens from the bytes and gives the file's
// session's outputs, the signature and inswapper's emap are the file's, and the CRC32 is checked
// against the registered MODEL.hash. A corrupted byte is refused by the CRC32 and by a pinned
// sha256 with the very error a corrupted file gets.
func TestPreloadedModelIsTheFile(t *testing.T) {
	t.Cleanup(func() { infer.DropPreloaded() })
	lib := testenv.ORTLibrary(t)
	if err := infer.Init(lib); err != nil {
		t.Fatal(err)
	}
	dir := fixtures.Dir(t, "inswapper_128")
	path := filepath.Join(dir, "inswapper_128.onnx")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hash := []byte(fmt.Sprintf("%08x", crc32.ChecksumIEEE(data)))
	if err := os.WriteFile(infer.HashPath(path), hash, 0o644); err != nil {
		t.Fatal(err)
	}
	spec := catalog.Must("inswapper_128").Spec()
	cfg := infer.SessionConfig{ModelsDir: dir, Library: lib, Logf: func(string, ...any) {}}
	// run opens a session, feeds it the same random inputs every time and returns its output.
	run := func(what string) []float32 {
		t.Helper()
		s, err := infer.OpenSession(spec, cfg)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer s.Close()
		r := rand.New(rand.NewPCG(3, 4))
		randomize(r, s.Input("target"), 0, 1)
		randomize(r, s.Input("source"), -1, 1)
		if err := s.Run(1); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return readAll(s.Outputs()[0])
	}
	fromFile := run("from the file")
	sigFile, err := infer.ReadSignature(path)
	if err != nil {
		t.Fatal(err)
	}
	emapFile, err := infer.Emap(path)
	if err != nil {
		t.Fatal(err)
	}

	// The files go: from here only the registry can answer.
	gone := t.TempDir()
	for _, p := range []string{path, infer.HashPath(path)} {
		if err := os.Rename(p, filepath.Join(gone, filepath.Base(p))); err != nil {
			t.Fatal(err)
		}
	}
	mod := time.Unix(1700000000, 0)
	infer.Preload(path, bytes.Clone(data), mod)
	infer.Preload(infer.HashPath(path), hash, mod)
	if st, err := infer.ModelStat(path); err != nil || st.Size() != int64(len(data)) || !st.ModTime().Equal(mod) {
		t.Fatalf("ModelStat of the preloaded file: %v, %v; want %d bytes at %v", st, err, len(data), mod)
	}
	s, err := infer.VerifyModel(path, "", true)
	want := sha256.Sum256(data)
	if err != nil || s.CRC32 != string(hash) || s.SHA256 != hex.EncodeToString(want[:]) || s.Size != int64(len(data)) {
		t.Fatalf("VerifyModel of the preloaded bytes: %+v, %v; want CRC32 %s (its MODEL.hash) and the file's sha256", s, err, hash)
	}
	if got := run("from the preloaded bytes"); !slices.Equal(got, fromFile) {
		t.Error("the session opened from the preloaded bytes gives other outputs than the file's")
	}
	if sig, err := infer.ReadSignature(path); err != nil || sig.String() != sigFile.String() {
		t.Errorf("the preloaded signature: %s, %v; the file's %s", sig, err, sigFile)
	}
	if em, err := infer.Emap(path); err != nil || !slices.Equal(em, emapFile) {
		t.Errorf("the preloaded emap: %d values, %v; want the file's %d", len(em), err, len(emapFile))
	}
	if n := infer.DropPreloaded(); n != int64(len(data)+len(hash)) {
		t.Errorf("DropPreloaded released %d bytes, want %d", n, len(data)+len(hash))
	}
	if _, err := infer.ModelStat(path); !os.IsNotExist(err) {
		t.Errorf("ModelStat after DropPreloaded: %v, want the file's own absence", err)
	}

	// One byte of the weights changed (the emap's last value): the file refused, then the bytes.
	bad := bytes.Clone(data)
	bad[len(bad)-3] ^= 0x40
	// refusals sets the files and the registry up (prepare) and returns VerifyModel's refusal,
	// which OpenSession must give too.
	refusals := func(what, pin string, prepare func()) error {
		t.Helper()
		infer.DropPreloaded()
		os.Remove(path)
		os.Remove(infer.HashPath(path))
		prepare()
		_, verr := infer.VerifyModel(path, pin, false)
		c := cfg
		c.SHA256 = pin
		_, oerr := infer.OpenSession(spec, c)
		if verr == nil || oerr == nil || verr.Error() != oerr.Error() {
			t.Fatalf("%s: VerifyModel said %v, OpenSession %v; want one refusal", what, verr, oerr)
		}
		return verr
	}
	write := func(p string, b []byte) {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fileCRC := refusals("a corrupted file", "", func() { write(path, bad); write(infer.HashPath(path), hash) })
	bytesCRC := refusals("corrupted bytes", "", func() {
		infer.Preload(path, bytes.Clone(bad), mod)
		infer.Preload(infer.HashPath(path), hash, mod) // the MODEL.hash as the broadcast brings it
	})
	if !strings.Contains(bytesCRC.Error(), "CRC32") || fileCRC.Error() != bytesCRC.Error() {
		t.Errorf("corrupted bytes: %v\nwant the corrupted file's refusal: %v", bytesCRC, fileCRC)
	}
	pin := hex.EncodeToString(want[:])
	fileSHA := refusals("a corrupted file, sha256 pinned", pin, func() { write(path, bad) })
	bytesSHA := refusals("corrupted bytes, sha256 pinned", pin, func() {
		infer.Preload(path, bytes.Clone(bad), mod)
		infer.PreloadAbsent(infer.HashPath(path)) // FaceFusion ships no MODEL.hash for it
	})
	if !strings.Contains(bytesSHA.Error(), "sha256") || fileSHA.Error() != bytesSHA.Error() {
		t.Errorf("corrupted bytes, sha256 pinned: %v\nwant the corrupted file's refusal: %v", bytesSHA, fileSHA)
	}
}
