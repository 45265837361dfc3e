package infer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Preloaded model files: the process-wide registry of model bytes this process already holds
// (a job's model broadcast: rank 0 reads each file once and sends its bytes to the other ranks,
// so that a node does not read it from the shared file system again). Every reader of a model
// file in this package (VerifyModel, ReadSignature, Emap, the session's open) and the
// landmarker's load (through ModelStat and ModelReader) takes a registered file's bytes instead
// of the file, and touches the file system for no registered path: not even a stat. A path not
// registered is read from its file as before. The bytes go with DropPreloaded, once the sessions
// that need them are open (ONNX Runtime keeps its own copy of the weights).
var preloads struct {
	sync.Mutex
	by map[string]*preloaded
}

// preloaded is one registered file: its bytes, or that it does not exist (a MODEL.hash that is
// not shipped), and its sums once computed.
type preloaded struct {
	path   string
	data   []byte
	absent bool
	mod    time.Time

	mu   sync.Mutex
	sums Sums // CRC32 and SHA256 filled as asked, from data
}

// preloadKey is the registry's key for path: absolute and clean, so that two spellings of one
// path meet, and a relative path read from another working folder does not.
func preloadKey(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}

// Preload registers data as the contents of the model file at path, last modified at mod.
// data must not change afterwards; it is released by DropPreloaded.
func Preload(path string, data []byte, mod time.Time) {
	register(&preloaded{path: path, data: data, mod: mod})
}

// PreloadAbsent registers that the file at path does not exist (as the process that read the
// others found it): a lookup of it answers "no such file" without asking the file system.
func PreloadAbsent(path string) {
	register(&preloaded{path: path, absent: true})
}

func register(p *preloaded) {
	preloads.Lock()
	defer preloads.Unlock()
	if preloads.by == nil {
		preloads.by = map[string]*preloaded{}
	}
	preloads.by[preloadKey(p.path)] = p
}

// DropPreloaded forgets every registered file and returns the bytes it released; the files
// are read from the file system again from then on.
func DropPreloaded() int64 {
	preloads.Lock()
	defer preloads.Unlock()
	var n int64
	for _, p := range preloads.by {
		n += int64(len(p.data))
	}
	preloads.by = nil
	return n
}

// lookup is path's registered entry, nil when it has none.
func lookup(path string) *preloaded {
	preloads.Lock()
	defer preloads.Unlock()
	return preloads.by[preloadKey(path)]
}

// preloadedData is path's registered bytes; ok is false when the registry does not know the
// file (absent included: a caller that needs bytes then reads the file and gets its error).
func preloadedData(path string) (data []byte, ok bool) {
	if p := lookup(path); p != nil && !p.absent {
		return p.data, true
	}
	return nil, false
}

// ModelStat is os.Stat of a model file, answered from the registry for a registered path (its
// size and modification time as the process that read it saw them; a registered absence is
// fs.ErrNotExist).
func ModelStat(path string) (fs.FileInfo, error) {
	p := lookup(path)
	if p == nil {
		return os.Stat(path)
	}
	if p.absent {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: fs.ErrNotExist}
	}
	return preloadedInfo{name: filepath.Base(path), size: int64(len(p.data)), mod: p.mod}, nil
}

// ModelReader opens a model file for reading: the registered bytes, or the file.
func ModelReader(path string) (io.ReadCloser, error) {
	p := lookup(path)
	switch {
	case p == nil:
		return os.Open(path)
	case p.absent:
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return io.NopCloser(bytes.NewReader(p.data)), nil
}

// readModelFile is os.ReadFile of a model file (its MODEL.hash), from the registry when there.
func readModelFile(path string) ([]byte, error) {
	r, err := ModelReader(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// preloadedSums are the sums of a registered file's bytes, each computed once.
func (p *preloaded) preloadedSums(wantCRC, wantSHA bool) Sums {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sums.Size = int64(len(p.data))
	if wantCRC && p.sums.CRC32 == "" {
		p.sums.CRC32 = fmt.Sprintf("%08x", crc32.ChecksumIEEE(p.data))
	}
	if wantSHA && p.sums.SHA256 == "" {
		s := sha256.Sum256(p.data)
		p.sums.SHA256 = hex.EncodeToString(s[:])
	}
	return p.sums
}

// preloadedInfo is a registered file's fs.FileInfo.
type preloadedInfo struct {
	name string
	size int64
	mod  time.Time
}

func (i preloadedInfo) Name() string       { return i.name }
func (i preloadedInfo) Size() int64        { return i.size }
func (i preloadedInfo) Mode() fs.FileMode  { return 0o444 }
func (i preloadedInfo) ModTime() time.Time { return i.mod }
func (i preloadedInfo) IsDir() bool        { return false }
func (i preloadedInfo) Sys() any           { return nil }
