package infer

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// HashPath is where FaceFusion keeps a model's checksum: MODEL.hash beside MODEL.onnx, holding
// the file's CRC32 (zlib's, i.e. IEEE) as 8 lower-case hex digits and nothing else.
func HashPath(modelPath string) string {
	return strings.TrimSuffix(modelPath, filepath.Ext(modelPath)) + ".hash"
}

// Sums are a model file's size and checksums, from one read of it.
type Sums struct {
	Size int64
	// SHA256 is the file's sha256 in hex; "" when nothing asked for it.
	SHA256 string
	// CRC32 is the file's CRC32 in hex; "" when no MODEL.hash is beside the file.
	CRC32 string
}

// VerifyModel checks a model file against FaceFusion's .hash beside it (when present) and
// against wantSHA256 (the job's model_sha256, hex; "" skips it): a mismatch of either refuses
// the file. withSHA asks for the file's sha256 even without wantSHA256, to compare it with
// FaceFusion's published one (see Published). Every sum comes from one read of the file, and a
// file this process has read already (same path, inode, size and modification time) is not
// read again: the job's check before the first frame and each session's open share one pass.
func VerifyModel(path, wantSHA256 string, withSHA bool) (Sums, error) {
	crcWant, err := readHashFile(path)
	if err != nil {
		return Sums{}, err
	}
	wantSHA256 = strings.ToLower(strings.TrimSpace(wantSHA256))
	s, err := fileSums(path, crcWant != "", withSHA || wantSHA256 != "")
	if err != nil {
		return Sums{}, err
	}
	if crcWant != "" && s.CRC32 != crcWant {
		return s, fmt.Errorf("model %s: CRC32 %s does not match %s (%s): the file is damaged or not FaceFusion's; download it again", path, s.CRC32, HashPath(path), crcWant)
	}
	if wantSHA256 != "" && s.SHA256 != wantSHA256 {
		return s, fmt.Errorf("model %s: sha256 %s, the config expects %s: the file is damaged or a different version; replace it or fix the sha256", path, s.SHA256, wantSHA256)
	}
	return s, nil
}

// PublishedMismatch is the one-line warning for a model file whose sha256 (s, with SHA256
// computed) is not the one FaceFusion publishes (c.Published); "" when it is or none is
// published.
func PublishedMismatch(c Spec, path string, s Sums) string {
	p := c.Published
	if p.SHA256 == "" || s.SHA256 == p.SHA256 {
		return ""
	}
	return fmt.Sprintf("model %s %s: sha256 %s (%d bytes) is not %s's published %s (%d bytes): sites convert and re-export models: check it is the one you meant (model_sha256 pins it and silences this)",
		c.Name, path, s.SHA256, s.Size, p.Publisher(), p.SHA256, p.Bytes)
}

// readHashFile returns the CRC32 hex from MODEL.hash, "" when there is none.
func readHashFile(path string) (string, error) {
	hp := HashPath(path)
	b, err := readModelFile(hp)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("model hash %s: %v: fix its permissions or remove it", hp, err)
	}
	// FaceFusion compares the content exactly; we forgive a trailing newline an editor added.
	h := strings.ToLower(strings.TrimSpace(string(b)))
	if len(h) != 8 || strings.Trim(h, "0123456789abcdef") != "" {
		return "", fmt.Errorf("model hash %s: %q is not an 8-digit CRC32 in hex: remove the file or download FaceFusion's", hp, h)
	}
	return h, nil
}

// fileKey is a file's identity for the sums already computed: a file replaced (new inode) or
// rewritten (new size or modification time) is read again.
type fileKey struct {
	path       string
	dev, ino   uint64
	size, nsec int64
}

// summed are the sums this process has computed, by file; each entry's lock is held while its
// file is read, so two sessions opening one file read it once.
var summed struct {
	sync.Mutex
	by map[fileKey]*sumEntry
}

type sumEntry struct {
	sync.Mutex
	s Sums
}

// fileSums returns path's size, and its CRC32 and sha256 where asked, reading it at most once
// per identity.
func fileSums(path string, wantCRC, wantSHA bool) (Sums, error) {
	if p := lookup(path); p != nil && !p.absent { // the registered bytes: no file to read
		return p.preloadedSums(wantCRC, wantSHA), nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return Sums{}, fmt.Errorf("model %s: %v", path, err)
	}
	if !wantCRC && !wantSHA {
		return Sums{Size: st.Size()}, nil
	}
	key := fileKey{path: path, size: st.Size(), nsec: st.ModTime().UnixNano()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		key.dev, key.ino = uint64(sys.Dev), sys.Ino
	}
	summed.Lock()
	if summed.by == nil {
		summed.by = map[fileKey]*sumEntry{}
	}
	e := summed.by[key]
	if e == nil {
		e = new(sumEntry)
		summed.by[key] = e
	}
	summed.Unlock()
	e.Lock()
	defer e.Unlock()
	if (e.s.CRC32 != "" || !wantCRC) && (e.s.SHA256 != "" || !wantSHA) {
		return e.s, nil
	}
	s, err := Checksums(path, wantCRC, wantSHA)
	if err != nil {
		return Sums{}, err
	}
	e.s = s
	return s, nil
}

// checksumBuffers are Checksums' read buffers: 1 MiB reads keep a multi-hundred-megabyte model
// at the hash's speed rather than the system call rate, and a pooled buffer spares a small
// file the cost of faulting a fresh one in.
var checksumBuffers = sync.Pool{New: func() any { return new([1 << 20]byte) }}

// Checksums reads path once and returns its size and the CRC32 and sha256 asked for.
func Checksums(path string, wantCRC, wantSHA bool) (Sums, error) {
	f, err := os.Open(path)
	if err != nil {
		return Sums{}, fmt.Errorf("model %s: %v", path, err)
	}
	defer f.Close()
	c := crc32.NewIEEE()
	var hs []io.Writer
	var sh hash.Hash
	if wantCRC {
		hs = append(hs, c)
	}
	if wantSHA {
		sh = sha256.New()
		hs = append(hs, sh)
	}
	w := io.MultiWriter(hs...)
	b := checksumBuffers.Get().(*[1 << 20]byte)
	defer checksumBuffers.Put(b)
	buf := b[:]
	var s Sums
	for {
		// Read directly: io.Copy would hand the file to its WriteTo, with 32 KiB reads.
		n, err := f.Read(buf)
		w.Write(buf[:n]) // hashes never fail
		s.Size += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return Sums{}, fmt.Errorf("model %s: reading for checksums: %v", path, err)
		}
	}
	if wantCRC {
		s.CRC32 = fmt.Sprintf("%08x", c.Sum32())
	}
	if wantSHA {
		s.SHA256 = hex.EncodeToString(sh.Sum(nil))
	}
	return s, nil
}

// ModelState is what ListModels found for one model.
type ModelState string

// The states of a model file. Verified, mismatched and no published hash compare the file's
// sha256 with FaceFusion's published one; a run goes on with any of them (a mismatch warns).
// A missing or refused file stops a run that needs it before its first frame.
const (
	ModelMissing     ModelState = "missing"
	ModelVerified    ModelState = "verified"          // sha256 is FaceFusion's published one
	ModelMismatched  ModelState = "mismatched"        // sha256 is another (Detail names both)
	ModelUnpublished ModelState = "no published hash" // present; FaceFusion publishes no sha256
	ModelRefused     ModelState = "refused"           // wrong signature, .hash or model_sha256 (Detail says which)
)

// ModelReport is one line of `facefusion models`.
type ModelReport struct {
	Spec  Spec
	Name  string
	Path  string
	State ModelState
	// Sums are the file's size and the checksums computed (sha256 where one is published or
	// model_sha256 pins it).
	Sums Sums
	// Pinned is true when the job's model_sha256 names this file's sha256: a published
	// mismatch is then what the site meant, and a run does not warn.
	Pinned bool
	// Detail is the reason for refused, both sums for mismatched, what else was checked
	// otherwise.
	Detail string
}

// Warning is the line a run logs for the file before its first frame, "" for none.
func (r ModelReport) Warning() string {
	if r.State != ModelMismatched || r.Pinned {
		return ""
	}
	return PublishedMismatch(r.Spec, r.Path, r.Sums)
}

// ListModels reports, for each model, whether its file in dir is missing, verified, mismatched,
// unpublished or refused. sha256s maps names to the job's expected hex sums (may be nil). The
// signature check needs the runtime loaded (Init); without it only checksums are checked.
func ListModels(dir string, specs []Spec, sha256s map[string]string) ([]ModelReport, error) {
	// The files are summed side by side (the sums are kept), so that the job's start waits for
	// its largest model's hash rather than the sum of all of them.
	var wg sync.WaitGroup
	for _, c := range specs {
		wg.Go(func() { VerifyModel(filepath.Join(dir, c.File), sha256s[c.Name], c.Published.SHA256 != "") })
	}
	wg.Wait()
	out := make([]ModelReport, len(specs))
	for i, c := range specs {
		out[i] = listModel(c, filepath.Join(dir, c.File), sha256s[c.Name])
	}
	return out, nil
}

func listModel(c Spec, path, pin string) ModelReport {
	r := ModelReport{Spec: c, Name: c.Name, Path: path}
	if st, err := ModelStat(path); err != nil || st.IsDir() {
		r.State = ModelMissing
		return r
	}
	p := c.Published
	s, err := VerifyModel(path, pin, p.SHA256 != "")
	r.Sums = s
	if err != nil {
		r.State, r.Detail = ModelRefused, err.Error()
		return r
	}
	r.Pinned = pin != ""
	var checked []string
	if s.CRC32 != "" {
		checked = append(checked, "CRC32 matches "+filepath.Base(HashPath(path)))
	}
	if r.Pinned {
		checked = append(checked, "sha256 matches model_sha256")
	}
	switch {
	case p.SHA256 == "":
		r.State = ModelUnpublished
	case s.SHA256 == p.SHA256:
		r.State = ModelVerified
	default:
		r.State, r.Detail = ModelMismatched, fmt.Sprintf("sha256 %s, %s publishes %s (%d bytes)", s.SHA256, p.Publisher(), p.SHA256, p.Bytes)
		if r.Pinned {
			r.Detail += "; model_sha256 pins it"
		}
	}
	if r.Detail == "" {
		r.Detail = strings.Join(checked, ", ")
	}
	if ortReady() {
		found, err := ReadSignature(path)
		if err != nil {
			r.State, r.Detail = ModelRefused, fmt.Sprintf("model %s %s: %v", c.Name, path, err)
		} else if why := Check(c.Want, found); why != "" {
			r.State, r.Detail = ModelRefused, signatureError(c, path, why, found).Error()
		}
	}
	return r
}
