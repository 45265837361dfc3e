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
)

// HashPath is where FaceFusion keeps a model's checksum: MODEL.hash beside MODEL.onnx, holding
// the file's CRC32 (zlib's, i.e. IEEE) as 8 lower-case hex digits and nothing else.
func HashPath(modelPath string) string {
	return strings.TrimSuffix(modelPath, filepath.Ext(modelPath)) + ".hash"
}

// VerifyModel checks a model file against FaceFusion's .hash beside it (when present) and
// against wantSHA256 (hex; "" skips it). Both are computed in one read of the file.
func VerifyModel(path, wantSHA256 string) error {
	crcWant, err := readHashFile(path)
	if err != nil {
		return err
	}
	wantSHA256 = strings.ToLower(strings.TrimSpace(wantSHA256))
	if crcWant == "" && wantSHA256 == "" {
		return nil
	}
	crc, sum, err := checksums(path, crcWant != "", wantSHA256 != "")
	if err != nil {
		return err
	}
	if crcWant != "" && crc != crcWant {
		return fmt.Errorf("model %s: CRC32 %s does not match %s (%s): the file is damaged or not FaceFusion's; download it again", path, crc, HashPath(path), crcWant)
	}
	if wantSHA256 != "" && sum != wantSHA256 {
		return fmt.Errorf("model %s: sha256 %s, the config expects %s: the file is damaged or a different version; replace it or fix the sha256", path, sum, wantSHA256)
	}
	return nil
}

// readHashFile returns the CRC32 hex from MODEL.hash, "" when there is none.
func readHashFile(path string) (string, error) {
	hp := HashPath(path)
	b, err := os.ReadFile(hp)
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

func checksums(path string, wantCRC, wantSHA bool) (crc, sum string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", fmt.Errorf("model %s: %v", path, err)
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
	if _, err := io.Copy(io.MultiWriter(hs...), f); err != nil {
		return "", "", fmt.Errorf("model %s: reading for checksums: %v", path, err)
	}
	if wantCRC {
		crc = fmt.Sprintf("%08x", c.Sum32())
	}
	if wantSHA {
		sum = hex.EncodeToString(sh.Sum(nil))
	}
	return crc, sum, nil
}

// ModelState is what ListModels found for one model.
type ModelState string

// The states of a model in the models directory.
const (
	ModelMissing    ModelState = "missing"
	ModelFound      ModelState = "found"      // present, signature fine, no checksum to check
	ModelVerified   ModelState = "verified"   // present, signature fine, .hash or sha256 matched
	ModelMismatched ModelState = "mismatched" // checksum or signature wrong (Detail says which)
)

// ModelReport is one line of `facefusion models`.
type ModelReport struct {
	Name   string
	Path   string
	State  ModelState
	Detail string // the error for mismatched, "" otherwise
}

// ListModels reports, for each model, whether its file in dir is missing, found, verified or
// mismatched. sha256s maps names to expected hex sums (may be nil). The signature check needs
// the runtime loaded (Init); without it only checksums are checked.
func ListModels(dir string, specs []Spec, sha256s map[string]string) ([]ModelReport, error) {
	out := make([]ModelReport, 0, len(specs))
	for _, c := range specs {
		name := c.Name
		r := ModelReport{Name: name, Path: filepath.Join(dir, c.File)}
		if st, err := os.Stat(r.Path); err != nil || st.IsDir() {
			r.State = ModelMissing
			out = append(out, r)
			continue
		}
		r.State = ModelFound
		crc, err := readHashFile(r.Path)
		switch {
		case err != nil:
			r.State, r.Detail = ModelMismatched, err.Error()
		default:
			if err := VerifyModel(r.Path, sha256s[name]); err != nil {
				r.State, r.Detail = ModelMismatched, err.Error()
			} else if crc != "" || sha256s[name] != "" {
				r.State = ModelVerified
			}
		}
		if r.State != ModelMismatched && ortReady() {
			found, err := ReadSignature(r.Path)
			if err != nil {
				r.State, r.Detail = ModelMismatched, fmt.Sprintf("model %s %s: %v", name, r.Path, err)
			} else if why := Check(c.Want, found); why != "" {
				r.State, r.Detail = ModelMismatched, signatureError(c, r.Path, why, found).Error()
			}
		}
		out = append(out, r)
	}
	return out, nil
}
