package video

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"
)

// Facts about this machine's ffmpeg that cost a process start each to learn (its version line,
// a passed output check) are kept across runs in one small file in the user's cache folder,
// each under the identity of every binary it depends on: a start costs 0.1–0.3 CPU-s here,
// mostly the dynamic loader linking ffmpeg's 215 libraries, and a run has few to spare.
//
// A binary's identity is its path as exec finds it on PATH, the file that path leads to
// (links resolved) and that file's device, inode, size, modification and change times: a
// site's module swap puts another ffmpeg first on PATH (another path), and a reinstall in
// place writes another file (another inode or times; the change time cannot be set back by
// hand). Nothing is kept when a binary cannot be found, is a script rather than a program (a
// wrapper that starts an ffmpeg its file does not show: binaryIdentity) or the cache folder
// cannot be written: the fact is learned as before. Deleting the file forgets everything.

// FactsFile is the file the facts are kept in, under os.UserCacheDir ($XDG_CACHE_HOME, else
// ~/.cache), unless CacheEnv names another folder or none.
const FactsFile = "facefusion/ffmpeg-facts.json"

// CacheEnv names the variable that moves the program's cache folder ($XDG_CACHE_HOME/facefusion)
// to the folder it names, or with off keeps nothing there: for a site or user that wants
// nothing written under home.
const CacheEnv = "FACEFUSION_CACHE_DIR"

// maxFacts bounds the file: the oldest facts go first (each is a few hundred bytes).
const maxFacts = 256

type fact struct {
	Value   json.RawMessage `json:"value"`
	Written int64           `json:"written"` // Unix seconds: the oldest go first
}

var facts struct {
	mu   sync.Mutex
	path string // "" until read, or when there is no cache folder
	read bool
	m    map[string]fact
}

// factsPath is the facts file's path, "" without a cache folder.
func factsPath() string {
	switch dir := os.Getenv(CacheEnv); dir {
	case "off":
		return ""
	case "":
	default:
		return filepath.Join(dir, filepath.Base(FactsFile))
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, FactsFile)
}

// loadFacts reads the facts file once a process; an unreadable file is no facts.
func loadFacts() {
	if facts.read {
		return
	}
	facts.read = true
	facts.path = factsPath()
	facts.m = map[string]fact{}
	if facts.path == "" {
		return
	}
	if b, err := readFactsFile(facts.path); err == nil {
		if json.Unmarshal(b, &facts.m) != nil || facts.m == nil { // "null" decodes to a nil map
			facts.m = map[string]fact{}
		}
	}
}

// maxFactsBytes bounds what is read of the facts file: maxFacts facts of well under a
// kilobyte each. A larger file is not one this program wrote: it is no facts, never read whole.
const maxFactsBytes = 1 << 20

// readFactsFile reads the facts file if it is a regular file of at most maxFactsBytes. It never
// blocks on what stands at that path: a FIFO or a device (a hung or hostile $HOME/.cache) is
// opened without waiting for a writer and refused, so a run cannot hang there, deaf to signals.
func readFactsFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > maxFactsBytes {
		return nil, fmt.Errorf("%s is not a facts file (%v, %d bytes)", path, st.Mode().Type(), st.Size())
	}
	return io.ReadAll(io.LimitReader(f, maxFactsBytes+1))
}

// ownFactsFile reports whether path may be replaced: nothing there, or a regular file (what
// rememberFact writes). A link, FIFO or anything else at that path is the user's, and stays.
func ownFactsFile(path string) bool {
	st, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist) || err == nil && st.Mode().IsRegular()
}

// factKey is the file's name for a fact: a digest, so that no path or setting is spelled out
// in the user's cache.
func factKey(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// recallFact decodes the fact kept under key into v, and says whether there was one.
func recallFact(key string, v any) bool {
	facts.mu.Lock()
	defer facts.mu.Unlock()
	loadFacts()
	f, ok := facts.m[key]
	return ok && json.Unmarshal(f.Value, v) == nil
}

// rememberFact keeps v under key: the file is read again (another run may have added facts),
// the fact added, the oldest beyond maxFacts removed, and the file replaced whole (a temp file
// renamed over it: a reader sees the old file or the new one). Not lustre's atomic write,
// which imports this package; a cache torn by a crash is only facts to learn again.
func rememberFact(key string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	facts.mu.Lock()
	defer facts.mu.Unlock()
	facts.read = false
	loadFacts()
	if facts.path == "" || !ownFactsFile(facts.path) {
		return
	}
	facts.m[key] = fact{Value: b, Written: time.Now().Unix()}
	if len(facts.m) > maxFacts {
		keys := make([]string, 0, len(facts.m))
		for k := range facts.m {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return facts.m[keys[i]].Written < facts.m[keys[j]].Written })
		for _, k := range keys[:len(keys)-maxFacts] {
			delete(facts.m, k)
		}
	}
	out, err := json.Marshal(facts.m)
	if err != nil {
		return
	}
	dir := filepath.Dir(facts.path)
	if os.MkdirAll(dir, 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".ffmpeg-facts-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(out)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), facts.path) != nil {
		os.Remove(tmp.Name())
	}
}

// binaryIdentity is the identity of the program exec would start for prog (see above). A file
// that is not a program but a script has none: on clusters the ffmpeg PATH finds is often a shell
// wrapper (Apptainer's, an Lmod shim) that execs an ffmpeg inside an image, and the image can be
// replaced under a wrapper that stays as it was. Nothing is kept about it (said once at debug
// level); every run asks, as before.
func binaryIdentity(prog string) (string, error) {
	path, err := exec.LookPath(prog)
	if err != nil {
		return "", err
	}
	if err := isProgram(path); err != nil {
		if _, said := notPrograms.LoadOrStore(path, true); !said {
			// slog's default (main makes it the job's log): the facts are a process-wide memo
			// asked from below every caller, some in the background, and this is their one line.
			slog.Debug(fmt.Sprintf("ffmpeg facts: nothing is kept about %s: %v", path, err))
		}
		return "", err
	}
	return fileIdentity(path)
}

// notPrograms are the paths binaryIdentity has said are no program, each said once a process.
var notPrograms sync.Map

// isProgram says why the file at path is not an ELF program (nil when it is): a script, say.
func isProgram(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	magic := make([]byte, 4)
	if _, err := io.ReadFull(f, magic); err != nil || string(magic) != "\x7fELF" {
		what := "not an ELF program"
		if string(magic[:2]) == "#!" {
			what = "a script, which may start any ffmpeg (a wrapper around a container image or a module's)"
		}
		return fmt.Errorf("it is %s, so which ffmpeg it runs cannot be told from the file", what)
	}
	return nil
}

// fileIdentity is path, the file it leads to, and that file's device, inode, size and times.
func fileIdentity(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", errors.New("no file identity on this system")
	}
	return fmt.Sprintf("%s -> %s dev %d ino %d size %d mtime %d.%09d ctime %d.%09d", abs, real,
		st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec), nil
}

// The version line is compiled into the ffmpeg binary itself ("%s version 5.1.9-0+deb12u1"
// in its strings, the copyright years too), so the binary's identity is all it depends on.
const versionFact = "ffmpeg -version, first line, v1"

// checkTools is the identity of everything a passed output check depends on besides what
// it was asked (RecallCheck's key): this program, which writes the command lines; ffmpeg and
// ffprobe; the libraries the dynamic loader gives them (LD_LIBRARY_PATH, which a site module
// sets beside PATH, LD_PRELOAD, and /etc/ld.so.cache, which every install or upgrade of a library
// rewrites); and the thread count every ffmpeg is given.
func checkTools() (string, error) {
	ids := []string{"output check, v1"}
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	for _, id := range []func() (string, error){
		func() (string, error) { return fileIdentity(exe) },
		func() (string, error) { return binaryIdentity(FFmpeg) },
		func() (string, error) { return binaryIdentity(FFprobe) },
	} {
		s, err := id()
		if err != nil {
			return "", err
		}
		ids = append(ids, s)
	}
	ldCache, _ := fileIdentity("/etc/ld.so.cache") // none on some systems: nothing to tell apart
	ids = append(ids, ldCache, "LD_LIBRARY_PATH="+os.Getenv("LD_LIBRARY_PATH"), "LD_PRELOAD="+os.Getenv("LD_PRELOAD"), fmt.Sprint(threadArgs()))
	return factKey(ids...), nil
}

// RecallCheck is what CheckOutput answered when it passed for key (everything the check was
// asked: the output's extension, the encode options, the target's other streams, the audio
// options) in an earlier run, with this program, this ffmpeg and ffprobe and their libraries
// (checkTools). A refusal is never kept: it is found again, with ffmpeg's own words.
func RecallCheck(key string) (Carried, bool) {
	var c Carried
	tools, err := checkTools()
	if err != nil {
		return c, false
	}
	return c, recallFact(factKey(tools, key), &c)
}

// RememberCheck keeps a passed CheckOutput's answer under key for RecallCheck.
func RememberCheck(key string, c Carried) {
	if tools, err := checkTools(); err == nil {
		rememberFact(factKey(tools, key), c)
	}
}
