// Package download fetches model files over HTTP for `facefusion force-download`, the one
// command that opens a network connection: only it imports this package, so a run never does.
// A file is written to FILE.part beside its final path, continued with an HTTP Range request
// after a dropped connection or on a rerun, checked against its published sha256 (where none is
// published, against FaceFusion's FILE.hash CRC32 from the same host) and renamed into place:
// a bad or truncated download never lands at the final path.
package download

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/facefusion-hpc/facefusion/lustre"
)

// File is one file to fetch.
type File struct {
	// Name is the model's name, for messages.
	Name string
	// File is the file's name in the folder; every URL ends with it.
	File string
	// HashFile is the name of FaceFusion's CRC32 file beside it (NAME.hash): fetched from the
	// same place where no sha256 is published, and kept right beside the landed file.
	HashFile string
	// Size is the published size in bytes; 0 when unknown.
	Size int64
	// SHA256 is the published sha256 in lower-case hex; "" when none is published.
	SHA256 string
	// URLs are where to fetch it, tried in order until one gives the right bytes.
	URLs []string
}

// State is what Fetch did.
type State string

// The outcomes of a Fetch that did not fail.
const (
	Downloaded State = "downloaded" // fetched, verified and renamed into place
	Present    State = "present"    // already there and verified: not downloaded again
	Kept       State = "kept"       // another file is there (Detail says why): left alone without force
)

// Result is the outcome of one Fetch.
type Result struct {
	State State
	Path  string
	// URL is where a Downloaded file came from.
	URL string
	// Bytes is what this Fetch transferred (a resumed file's earlier part not counted).
	Bytes int64
	// Detail says what was checked, or why a Kept file was left alone.
	Detail string
}

// Fetcher downloads files; the zero value works, with the defaults below.
type Fetcher struct {
	// Client makes the requests; nil: a client that honours $HTTPS_PROXY and friends and gives
	// up on a server that sends no header for a minute.
	Client *http.Client
	// Attempts is how often one URL is tried (each try resumes the part); 0: 4.
	Attempts int
	// Retry is the wait before trying a URL again; 0: none.
	Retry time.Duration
	// Stall abandons a try when no byte has come for this long; 0: one minute.
	Stall time.Duration
	// Logf receives progress lines; nil: none.
	Logf func(format string, args ...any)
}

func (f *Fetcher) logf(format string, args ...any) {
	if f.Logf != nil {
		f.Logf(format, args...)
	}
}

var defaultClient = func() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = time.Minute
	// Byte offsets must be the file's: no transparent gzip (model files do not shrink anyway).
	t.DisableCompression = true
	return &http.Client{Transport: t}
}()

func (f *Fetcher) client() *http.Client {
	if f.Client != nil {
		return f.Client
	}
	return defaultClient
}

// Error is a file that could not be downloaded: every URL tried and what went wrong there.
type Error struct {
	File  File
	Tries []Try
	// Part is the partial file kept for a rerun to resume ("" when none is kept).
	Part string
}

// Try is one URL's failure.
type Try struct {
	URL string
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model %s: %s not downloaded:", e.File.Name, e.File.File)
	for i, t := range e.Tries {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s: %v", t.URL, t.Err)
	}
	b.WriteString(": ")
	b.WriteString(e.hint())
	return b.String()
}

// hint is what to do, from the last failure.
func (e *Error) hint() string {
	var last error
	if len(e.Tries) > 0 {
		last = e.Tries[len(e.Tries)-1].Err
	}
	var bad *badBytes
	var st *statusError
	var local *localError
	switch {
	case errors.As(last, &local):
		return "fix the models folder (permissions, free space) or point models_dir (--models-dir) at another"
	case e.Part != "":
		return fmt.Sprintf("rerun the same command to resume from %s", e.Part)
	case errors.As(last, &bad):
		return "the host serves other bytes than FaceFusion publishes: try another --download-providers order or --download-base-url, or copy a file you have checked into models_dir"
	case errors.As(last, &st) && st.code == http.StatusNotFound:
		return "check --download-providers, or that the --download-base-url folder holds FaceFusion's file names"
	}
	return "check the network (a login node reaches the internet, compute nodes often do not) and rerun"
}

// statusError is an HTTP answer that will not change by asking again (4xx).
type statusError struct {
	code   int
	status string
}

func (e *statusError) Error() string { return "HTTP " + e.status }

// localError is a failure of the models folder (permissions, a full disk), not of the host.
type localError struct{ err error }

func (e *localError) Error() string { return e.err.Error() }
func (e *localError) Unwrap() error { return e.err }

// badBytes is a complete download that is not the published file.
type badBytes struct{ msg string }

func (e *badBytes) Error() string { return e.msg }

// permanent reports whether trying the same URL again cannot help.
func permanent(err error) bool {
	var st *statusError
	var bad *badBytes
	var local *localError
	return errors.As(err, &st) || errors.As(err, &bad) || errors.As(err, &local)
}

// Fetch makes dir/file.File the published file. One already there and verified is left as it
// is (Present); one with other bytes, or that nothing can verify, is left alone (Kept) unless
// force. Otherwise the URLs are tried in order; the first whose bytes verify lands. The error
// (an *Error) names the model, each URL, what went wrong and what to do.
func (f *Fetcher) Fetch(ctx context.Context, dir string, file File, force bool) (Result, error) {
	final := filepath.Join(dir, file.File)
	res := Result{Path: final}
	if st, err := os.Stat(final); err == nil && !st.IsDir() {
		ok, detail, err := checkExisting(final, dir, file)
		if err != nil {
			return res, err
		}
		if ok {
			res.State, res.Detail = Present, detail
			return res, nil
		}
		if !force {
			res.State, res.Detail = Kept, detail+": left alone (--force replaces it)"
			return res, nil
		}
	}
	part := final + ".part"
	e := &Error{File: file}
	for _, u := range file.URLs {
		n, err := f.fromURL(ctx, u, dir, part, file)
		res.Bytes += n
		if err == nil {
			res.State, res.URL = Downloaded, u
			return res, nil
		}
		if ctx.Err() != nil {
			return res, context.Cause(ctx)
		}
		e.Tries = append(e.Tries, Try{URL: u, Err: err})
		var local *localError
		if errors.As(err, &local) {
			break // another host would not help
		}
	}
	if len(file.URLs) == 0 {
		e.Tries = append(e.Tries, Try{URL: "(no URL)", Err: errors.New("nowhere to fetch it from")})
	}
	if st, err := os.Stat(part); err == nil && st.Size() > 0 {
		e.Part = part
	} else if err == nil {
		os.Remove(part)
	}
	return res, e
}

// checkExisting verifies a file already at its final path: against the published sha256, or
// its .hash where none is published; a .hash beside it must match too (a run checks it).
func checkExisting(path, dir string, file File) (ok bool, detail string, err error) {
	var crcWant string
	if file.HashFile != "" {
		if crcWant, err = readHash(filepath.Join(dir, file.HashFile)); err != nil {
			return false, "", err
		}
	}
	sha, crc, err := sums(path)
	if err != nil {
		return false, "", err
	}
	switch {
	case crcWant != "" && crc != crcWant:
		return false, fmt.Sprintf("%s: CRC32 %s, %s says %s", path, crc, file.HashFile, crcWant), nil
	case file.SHA256 != "" && sha != file.SHA256:
		return false, fmt.Sprintf("%s: sha256 %s, FaceFusion publishes %s", path, sha, file.SHA256), nil
	case file.SHA256 != "":
		return true, "sha256 is FaceFusion's published one", nil
	case crcWant != "":
		return true, "CRC32 matches " + file.HashFile + " (no published sha256)", nil
	}
	return false, fmt.Sprintf("%s: no published sha256 and no %s to check it against", path, file.HashFile), nil
}

// fromURL downloads file from u into part, resuming it, and lands it once verified. It returns
// the bytes transferred.
func (f *Fetcher) fromURL(ctx context.Context, u, dir, part string, file File) (int64, error) {
	crcWant := ""
	if file.SHA256 == "" && file.HashFile == "" {
		return 0, errors.New("no published sha256 and no .hash name: nothing to check a download against")
	}
	if file.SHA256 == "" {
		// Fetched first: without it a download could not be checked.
		var err error
		if crcWant, err = f.fetchHash(ctx, strings.TrimSuffix(u, file.File)+file.HashFile); err != nil {
			return 0, err
		}
	}
	attempts := f.Attempts
	if attempts <= 0 {
		attempts = 4
	}
	var total int64
	var sha, crc string
	var err error
	for try := 1; ; try++ {
		var n int64
		n, sha, crc, err = f.transfer(ctx, u, part, file)
		total += n
		if err == nil || permanent(err) || ctx.Err() != nil || try == attempts {
			break
		}
		f.logf("%s: %v; trying again (%d of %d)", file.File, err, try+1, attempts)
		if f.Retry > 0 {
			select {
			case <-time.After(f.Retry):
			case <-ctx.Done():
				return total, context.Cause(ctx)
			}
		}
	}
	var bad *badBytes
	if errors.As(err, &bad) {
		os.Remove(part) // the file there is not the published one: nothing to resume
	}
	if err != nil {
		return total, err
	}
	switch {
	case file.SHA256 != "" && sha != file.SHA256:
		os.Remove(part) // complete and wrong: nothing to resume
		return total, &badBytes{fmt.Sprintf("sha256 %s, FaceFusion publishes %s (the file there is damaged or another version)", sha, file.SHA256)}
	case file.SHA256 == "" && crc != crcWant:
		os.Remove(part)
		return total, &badBytes{fmt.Sprintf("CRC32 %s, %s there says %s (the file is damaged)", crc, file.HashFile, crcWant)}
	}
	final := filepath.Join(dir, file.File)
	if err := os.Rename(part, final); err != nil {
		return total, &localError{fmt.Errorf("moving %s into place: %w", part, err)}
	}
	if err := lustre.SyncDir(dir); err != nil {
		return total, &localError{fmt.Errorf("syncing %s: %w", dir, err)}
	}
	// FaceFusion keeps NAME.hash beside NAME.onnx and a run checks it whenever it is there: it
	// must describe the new file (a stale one would refuse it), and it is the only check of a
	// file with no published sha256.
	hp := filepath.Join(dir, file.HashFile)
	if _, err := os.Stat(hp); file.HashFile != "" && (err == nil || file.SHA256 == "") {
		if err := lustre.WriteAtomic(hp, []byte(crc)); err != nil {
			return total, &localError{err}
		}
	}
	return total, nil
}

// fetchHash reads FaceFusion's NAME.hash at u: 8 hex digits.
func (f *Fetcher) fetchHash(ctx context.Context, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := f.client().Do(req)
	if err != nil {
		return "", unwrapURL(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("no published sha256, and %s answers HTTP %s, so the download could not be checked", u, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64))
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", u, err)
	}
	h, ok := parseHash(b)
	if !ok {
		return "", &badBytes{fmt.Sprintf("%s holds %q, not an 8-digit CRC32 in hex", u, strings.TrimSpace(string(b)))}
	}
	return h, nil
}

// parseHash reads FaceFusion's .hash content (the rule infer's check applies: 8 hex digits, a
// trailing newline forgiven).
func parseHash(b []byte) (string, bool) {
	h := strings.ToLower(strings.TrimSpace(string(b)))
	return h, len(h) == 8 && strings.Trim(h, "0123456789abcdef") == ""
}

func readHash(path string) (string, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	h, ok := parseHash(b)
	if !ok {
		return "", fmt.Errorf("%s is not an 8-digit CRC32 in hex: remove it", path)
	}
	return h, nil
}

// sums is a file's sha256 and CRC32, in one read.
func sums(path string) (sha, crc string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	h := newHashes()
	if _, err := io.CopyBuffer(h, struct{ io.Reader }{f}, make([]byte, 1<<20)); err != nil {
		return "", "", fmt.Errorf("reading %s: %w", path, err)
	}
	sha, crc = h.sums()
	return sha, crc, nil
}

// hashes is the sha256 and CRC32 of what is written to it.
type hashes struct {
	sha hash.Hash
	crc hash.Hash32
}

func newHashes() *hashes { return &hashes{sha: sha256.New(), crc: crc32.NewIEEE()} }

func (h *hashes) Write(p []byte) (int, error) {
	h.sha.Write(p)
	h.crc.Write(p)
	return len(p), nil
}

func (h *hashes) sums() (sha, crc string) {
	return hex.EncodeToString(h.sha.Sum(nil)), fmt.Sprintf("%08x", h.crc.Sum32())
}

// transfer continues part from u: a Range request from the part's end, or from zero when the
// server ignores Range. It returns the bytes transferred and, once the file is complete, the
// sums of all of it.
func (f *Fetcher) transfer(ctx context.Context, u, part string, file File) (n int64, sha, crc string, err error) {
	out, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return 0, "", "", &localError{err}
	}
	defer func() {
		// What arrived stays for the next try, durably (a rerun after a crash resumes it).
		if serr := out.Sync(); err == nil && serr != nil {
			err = &localError{fmt.Errorf("writing %s: %w", part, serr)}
		}
		if cerr := out.Close(); err == nil && cerr != nil {
			err = &localError{fmt.Errorf("writing %s: %w", part, cerr)}
		}
	}()
	st, err := out.Stat()
	if err != nil {
		return 0, "", "", &localError{err}
	}
	off := st.Size()
	if file.Size > 0 && off > file.Size {
		off = 0 // longer than the file: not a part of it
	}
	h := newHashes()
	if off > 0 {
		// The sums cover the whole file: the part's bytes first.
		if _, err := io.CopyBuffer(h, io.NewSectionReader(out, 0, off), make([]byte, 1<<20)); err != nil {
			return 0, "", "", &localError{fmt.Errorf("reading %s: %w", part, err)}
		}
	}
	if file.Size > 0 && off == file.Size {
		sha, crc = h.sums()
		return 0, sha, crc, nil
	}

	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, u, nil)
	if err != nil {
		return 0, "", "", err
	}
	if off > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", off))
		f.logf("%s: resuming %s at byte %d of %s", file.File, filepath.Base(part), off, sizeText(file.Size))
	} else {
		f.logf("%s: downloading %s from %s", file.File, sizeText(file.Size), u)
	}
	resp, err := f.client().Do(req)
	if err != nil {
		return 0, "", "", unwrapURL(err)
	}
	defer resp.Body.Close()
	length := resp.ContentLength // of this answer; -1 unknown
	switch {
	case resp.StatusCode == http.StatusPartialContent && off > 0:
		start, total, ok := contentRange(resp.Header.Get("Content-Range"))
		if !ok || start != off {
			// Not the range asked for: start over, on the next try.
			out.Truncate(0)
			return 0, "", "", fmt.Errorf("the server answered the range from %d with %q: starting over", off, resp.Header.Get("Content-Range"))
		}
		if file.Size > 0 && total >= 0 && total != file.Size {
			return 0, "", "", &badBytes{fmt.Sprintf("the file there has %d bytes, FaceFusion publishes %d", total, file.Size)}
		}
	case resp.StatusCode == http.StatusOK:
		if off > 0 {
			f.logf("%s: %s ignores Range requests: starting over", file.File, u)
			off = 0
			h = newHashes()
		}
		if err := out.Truncate(0); err != nil {
			return 0, "", "", &localError{err}
		}
		if file.Size > 0 && length >= 0 && length != file.Size {
			return 0, "", "", &badBytes{fmt.Sprintf("the file there has %d bytes, FaceFusion publishes %d", length, file.Size)}
		}
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		// The part is not a beginning of the file there: start over.
		out.Truncate(0)
		return 0, "", "", fmt.Errorf("the server has no bytes after %d: starting over", off)
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return 0, "", "", &statusError{code: resp.StatusCode, status: resp.Status}
	default:
		return 0, "", "", fmt.Errorf("HTTP %s", resp.Status)
	}
	if _, err := out.Seek(off, io.SeekStart); err != nil {
		return 0, "", "", &localError{err}
	}
	n, err = f.copyBody(resp.Body, out, h, cancel, file, off)
	got := off + n
	var local *localError
	if errors.As(err, &local) {
		return n, "", "", err
	}
	if err != nil {
		if context.Cause(reqCtx) == errStalled && ctx.Err() == nil {
			err = errStalled
		}
		return n, "", "", fmt.Errorf("the connection dropped after %d of %s (%v)", got, sizeText(max(file.Size, off+length)), err)
	}
	if want := max(file.Size, off+length); (file.Size > 0 || length >= 0) && got != want {
		return n, "", "", fmt.Errorf("the body ended after %d of %d bytes", got, want)
	}
	sha, crc = h.sums()
	return n, sha, crc, nil
}

var errStalled = errors.New("no data for too long")

// unwrapURL drops net/http's "Get URL:" prefix: the messages name the URL once, themselves.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// copyBody copies the answer into the part and the hashes, cancelling the request when nothing
// comes for Stall, and logs progress every ten seconds.
func (f *Fetcher) copyBody(body io.Reader, out io.Writer, h *hashes, cancel context.CancelCauseFunc, file File, off int64) (int64, error) {
	stall := f.Stall
	if stall <= 0 {
		stall = time.Minute
	}
	timer := time.AfterFunc(stall, func() { cancel(errStalled) })
	defer timer.Stop()
	buf := make([]byte, 1<<20)
	var n int64
	start, lastLog := time.Now(), time.Now()
	for {
		k, rerr := body.Read(buf)
		timer.Reset(stall)
		if k > 0 {
			if _, err := out.Write(buf[:k]); err != nil {
				return n, &localError{fmt.Errorf("writing %s: %w", file.File+".part", err)}
			}
			h.Write(buf[:k])
			n += int64(k)
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
		if time.Since(lastLog) >= 10*time.Second {
			lastLog = time.Now()
			f.logf("%s: %d of %s (%.1f MB/s)", file.File, off+n, sizeText(file.Size), float64(n)/1e6/time.Since(start).Seconds())
		}
	}
}

// contentRange parses "bytes START-END/TOTAL" (TOTAL may be "*": -1).
func contentRange(v string) (start, total int64, ok bool) {
	v, found := strings.CutPrefix(v, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, tot, found := strings.Cut(v, "/")
	from, _, found2 := strings.Cut(rng, "-")
	if !found || !found2 {
		return 0, 0, false
	}
	start, err := strconv.ParseInt(from, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	total = -1
	if tot != "*" {
		if total, err = strconv.ParseInt(tot, 10, 64); err != nil {
			return 0, 0, false
		}
	}
	return start, total, true
}

func sizeText(n int64) string {
	if n <= 0 {
		return "an unpublished size"
	}
	return fmt.Sprintf("%d bytes", n)
}
