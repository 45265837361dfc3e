// Package download fetches model files over HTTP for `facefusion force-download`, the one
// command that opens a network connection: only it imports this package, so a run never does.
// A file is written to FILE.part beside its final path by one process at a time (FILE.part.lock
// is its claim), continued with an HTTP Range request after a dropped connection or on a rerun,
// checked from the disk against its published size and sha256 (where none is published, against
// FaceFusion's FILE.hash CRC32 from the same host) and renamed into place: a bad, truncated or
// overlong download never lands at the final path.
package download

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
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

// The defaults of a Fetcher's zero fields.
const (
	DefaultAttempts      = 4
	DefaultStall         = time.Minute
	DefaultMaxRetryAfter = 2 * time.Minute
	// DefaultMaxSize bounds a file with no published size: FaceFusion's largest model file is
	// 1.3 GB, so a host sending more than 4 GiB is not sending a model.
	DefaultMaxSize = 4 << 30
	// DefaultMinRate over DefaultRateWindow is the slowest transfer kept going: a host that
	// trickles a byte now and then never stalls, yet would never finish.
	DefaultMinRate    = 10 << 10
	DefaultRateWindow = time.Minute
	// DefaultDeadline is the longest one file may take, every URL and try together: FaceFusion's
	// largest file at 200 KB/s.
	DefaultDeadline = 2 * time.Hour
)

// Fetcher downloads files; the zero value works, with the defaults above.
type Fetcher struct {
	// Client makes the requests; nil: a client that honours $HTTPS_PROXY and friends. Whatever
	// the client, a try is abandoned when nothing arrives for Stall, the answer's header
	// included.
	Client *http.Client
	// Attempts is how often one URL is tried (each try resumes the part); 0: DefaultAttempts.
	Attempts int
	// Retry is the wait before trying a URL again; 0: none. A host's Retry-After (with a 408,
	// 429 or 5xx) replaces it.
	Retry time.Duration
	// MaxRetryAfter is the longest Retry-After honoured; a host asking for more ends that
	// URL's tries; 0: DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
	// Stall abandons a try when nothing has arrived for this long; 0: DefaultStall.
	Stall time.Duration
	// MaxSize is the most bytes taken of a file with no published size (a published size
	// bounds the others); 0: DefaultMaxSize.
	MaxSize int64
	// MinRate is the fewest bytes a second a try must average over each RateWindow of its
	// body, or it is abandoned (and resumed by the next try); 0: DefaultMinRate; negative:
	// no floor. RateWindow 0: DefaultRateWindow.
	MinRate    int64
	RateWindow time.Duration
	// Deadline is the longest one file's Fetch may take, every URL and try together; 0:
	// DefaultDeadline.
	Deadline time.Duration
	// Logf receives progress lines; nil: none.
	Logf func(format string, args ...any)

	// hook, for tests, is told of two steps of a landing: "verify" once the part is complete
	// and synced, before it is read back; "rename" just before the part is renamed into place.
	hook func(step, part string)
	// sleep waits d unless ctx ends first; nil: a timer. Tests record the waits instead.
	sleep func(ctx context.Context, d time.Duration) error
}

func (f *Fetcher) logf(format string, args ...any) {
	if f.Logf != nil {
		f.Logf(format, args...)
	}
}

func (f *Fetcher) at(step, part string) {
	if f.hook != nil {
		f.hook(step, part)
	}
}

func (f *Fetcher) stall() time.Duration { return orDefault(f.Stall, DefaultStall) }

func (f *Fetcher) minRate() int64 { return orDefault(f.MinRate, DefaultMinRate) }

func (f *Fetcher) rateWindow() time.Duration { return orDefault(f.RateWindow, DefaultRateWindow) }

func (f *Fetcher) deadline() time.Duration { return orDefault(f.Deadline, DefaultDeadline) }

func (f *Fetcher) maxRetryAfter() time.Duration {
	return orDefault(f.MaxRetryAfter, DefaultMaxRetryAfter)
}

func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

func (f *Fetcher) wait(ctx context.Context, d time.Duration) error {
	if f.sleep != nil {
		return f.sleep(ctx, d)
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

var defaultClient = func() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	// Byte offsets must be the file's: no transparent gzip (model files do not shrink anyway).
	t.DisableCompression = true
	return &http.Client{Transport: t}
}()

// client is the caller's client, or the default, with redirects to anything but HTTP(S)
// refused: a host pointing at file:// or ftp:// is not serving the model, and no retry can
// change that.
func (f *Fetcher) client() *http.Client {
	c := *defaultClient
	if f.Client != nil {
		c = *f.Client
	}
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if s := req.URL.Scheme; s != "http" && s != "https" {
			return &badRedirect{from: via[len(via)-1].URL.Redacted(), to: req.URL.Redacted()}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return &badRedirect{from: via[0].URL.Redacted(), loop: true}
		}
		return nil
	}
	return &c
}

// maxRedirects is how many redirects one request follows, as Go's default client.
const maxRedirects = 10

// badRedirect is a host redirecting to a URL that is not http:// or https://, or on and on.
type badRedirect struct {
	from, to string
	loop     bool
}

func (e *badRedirect) Error() string {
	if e.loop {
		return fmt.Sprintf("%s redirects more than %d times (a loop): refused", e.from, maxRedirects)
	}
	return fmt.Sprintf("%s redirects to a non-HTTP URL, %s: refused (force-download fetches only http:// and https://)", e.from, safefs.Excerpt(e.to))
}

// Error is a file that could not be downloaded: every URL tried and what went wrong there.
type Error struct {
	File  File
	Tries []Try
	// Part is the partial file kept for a rerun to resume ("" when none is kept).
	Part string
}

// Try is one URL's failure; URL is "" for a failure of the models folder before any request.
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
		if t.URL != "" {
			fmt.Fprintf(&b, " %s:", t.URL)
		}
		fmt.Fprintf(&b, " %v", t.Err)
	}
	b.WriteString(": ")
	b.WriteString(e.hint())
	return b.String()
}

func (e *Error) last() error {
	if len(e.Tries) == 0 {
		return nil
	}
	return e.Tries[len(e.Tries)-1].Err
}

// Folder reports whether the models folder failed (permissions, a full disk, a claim that
// cannot be written): this machine's fault, not the hosts'.
func (e *Error) Folder() bool {
	var local *localError
	return errors.As(e.last(), &local)
}

// hint is what to do, from the last failure.
func (e *Error) hint() string {
	last := e.last()
	var bad *badBytes
	var st *statusError
	var slow *slowDown
	var redir *badRedirect
	var crawl *tooSlow
	var late *pastDeadline
	switch {
	case e.Folder():
		return "fix the models folder (permissions, free space) or point models_dir (--models-dir) at another"
	case e.Part != "" && (errors.As(last, &crawl) || errors.As(last, &late)):
		return fmt.Sprintf("rerun later to resume from %s, or try another --download-providers order or --download-base-url, or allow more with %s", e.Part, crawlFlags)
	case e.Part != "":
		return fmt.Sprintf("rerun the same command to resume from %s", e.Part)
	case errors.As(last, &bad):
		return "the host serves other bytes than FaceFusion publishes: try another --download-providers order or --download-base-url, or copy a file you have checked into models_dir"
	case errors.As(last, &slow):
		return "the host is busy: rerun later"
	case errors.As(last, &redir):
		return "the host does not serve the file at that URL: try another --download-providers order or --download-base-url"
	case errors.As(last, &crawl), errors.As(last, &late):
		return "rerun later, try another --download-providers order or --download-base-url, or allow more with " + crawlFlags
	case errors.As(last, &st) && st.code == http.StatusNotFound:
		return "check --download-providers, or that the --download-base-url folder holds FaceFusion's file names"
	}
	return "check the network (a login node reaches the internet, compute nodes often do not) and rerun"
}

// BusyError is a file another force-download is fetching: its claim, FILE.part.lock, names a
// process that is alive or cannot be seen from here. Fetch leaves the file to it.
type BusyError struct {
	File   File
	Lock   string
	Holder lustre.Holder
}

func (e *BusyError) Error() string {
	// The host is the claim's text: quoted short, whatever the file holds.
	host := safefs.Name(e.Holder.Host, safefs.HostLen)
	return fmt.Sprintf("model %s: another force-download (%s, pid %d) is fetching %s, since %s: left to it; rerun once it has ended (remove %s if no such process runs on %s)",
		e.File.Name, host, e.Holder.PID, e.File.File, e.Holder.Started.UTC().Format(time.RFC3339), e.Lock, host)
}

// statusError is an HTTP answer other than the file: permanent for a 4xx other than 408 and
// 429, which are worth another try, as a 5xx is, after the host's Retry-After.
type statusError struct {
	code       int
	status     string
	retryAfter time.Duration // 0: none given
	// msg replaces "HTTP STATUS" in the message.
	msg string
}

func (e *statusError) Error() string {
	if e.msg != "" {
		return e.msg
	}
	return "HTTP " + e.status
}

// slowDown is a host asking (Retry-After) for a longer wait than MaxRetryAfter.
type slowDown struct {
	err        error
	wait, most time.Duration
}

func (e *slowDown) Error() string {
	return fmt.Sprintf("%v, asking to wait %s (force-download waits at most %s)", e.err, e.wait, e.most)
}

// localError is a failure of the models folder (permissions, a full disk), not of the host.
type localError struct{ err error }

func (e *localError) Error() string { return e.err.Error() }
func (e *localError) Unwrap() error { return e.err }

// badBytes is a download that is not the published file.
type badBytes struct{ msg string }

func (e *badBytes) Error() string { return e.msg }

// crawlFlags are force-download's flags that bound a slow download.
const crawlFlags = "--download-min-rate, --download-rate-window or --download-timeout"

// tooSlow is a try whose body came slower than MinRate over a RateWindow: abandoned, and
// resumed by the next try.
type tooSlow struct {
	file, host string
	got        int64
	window     time.Duration
	min        int64
}

func (e *tooSlow) Error() string {
	return fmt.Sprintf("%s from %s came at %s/s over the last %s, below --download-min-rate %s/s", e.file, e.host,
		rateText(float64(e.got)/e.window.Seconds()), e.window, rateText(float64(e.min)))
}

// pastDeadline is a file not finished within Deadline.
type pastDeadline struct {
	file, host string
	took       time.Duration
	got        int64
}

func (e *pastDeadline) Error() string {
	return fmt.Sprintf("%s from %s not finished within --download-timeout %s (%d bytes came from there)", e.file, e.host, e.took, e.got)
}

var errDeadline = errors.New("the download's deadline passed")

// rateText is a rate in bytes a second, with the unit a reader takes in at a glance.
func rateText(r float64) string {
	switch {
	case r >= 1<<20:
		return fmt.Sprintf("%.1f MiB", r/(1<<20))
	case r >= 1<<10:
		return fmt.Sprintf("%.1f KiB", r/(1<<10))
	}
	return fmt.Sprintf("%.1f bytes", r)
}

// permanent reports whether trying the same URL again cannot help.
func permanent(err error) bool {
	var st *statusError
	var bad *badBytes
	var local *localError
	var slow *slowDown
	var redir *badRedirect
	if errors.As(err, &st) {
		return st.code >= 400 && st.code < 500 && st.code != http.StatusRequestTimeout && st.code != http.StatusTooManyRequests
	}
	return errors.As(err, &bad) || errors.As(err, &local) || errors.As(err, &slow) || errors.As(err, &redir)
}

// retryAfter reads a Retry-After header: seconds or an HTTP date; 0 when absent or past.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(min(s, 1<<32)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// Fetch makes dir/file.File the published file. One already there and verified is left as it
// is (Present); one with other bytes, or that nothing can verify, is left alone (Kept) unless
// force. Otherwise it claims the file (a *BusyError when another force-download holds the
// claim) and tries the URLs in order; the first whose bytes verify lands. A folder that is not
// the user's alone is refused (a *safefs.FolderError) once a file must be written into it, not
// before: a site's read-only models folder holding every file is fine. Any other error is an
// *Error naming the model, each URL, what went wrong and what to do.
func (f *Fetcher) Fetch(ctx context.Context, dir string, file File, force bool) (Result, error) {
	final := filepath.Join(dir, file.File)
	res := Result{Path: final}
	seen, _ := os.Stat(final)
	if seen != nil && !seen.IsDir() {
		if done, err := checkExisting(&res, dir, file, force); done || err != nil {
			return res, err
		}
	}
	// The part and its claim have names anyone can predict: only in a folder no one else can
	// write into is neither planted (a link to a victim's file, a FIFO, a fake claim).
	if err := CheckFolder(dir); err != nil {
		return res, err
	}
	release, err := f.claim(final, file)
	if err != nil {
		var busy *BusyError
		if errors.As(err, &busy) {
			return res, err
		}
		return res, &Error{File: file, Tries: []Try{{Err: err}}}
	}
	defer release()
	// Another run may have landed the file between the look above and the claim.
	if now, err := os.Stat(final); err == nil && !now.IsDir() &&
		(seen == nil || !os.SameFile(seen, now) || now.Size() != seen.Size() || !now.ModTime().Equal(seen.ModTime())) {
		if done, err := checkExisting(&res, dir, file, force); done || err != nil {
			return res, err
		}
	}
	part := final + ".part"
	e := &Error{File: file}
	fileCtx, cancel := context.WithDeadlineCause(ctx, time.Now().Add(f.deadline()), errDeadline)
	defer cancel()
	for _, u := range file.URLs {
		n, err := f.fromURL(fileCtx, u, dir, part, file)
		res.Bytes += n
		if err == nil {
			res.State, res.URL = Downloaded, u
			return res, nil
		}
		if ctx.Err() != nil {
			return res, context.Cause(ctx)
		}
		var local *localError
		if fileCtx.Err() != nil && !errors.As(err, &local) {
			err = &pastDeadline{file: file.File, host: host(u), took: f.deadline(), got: n}
		}
		e.Tries = append(e.Tries, Try{URL: u, Err: err})
		if errors.As(err, &local) || fileCtx.Err() != nil {
			break // another host would not help, or there is no time left for one
		}
	}
	if len(file.URLs) == 0 {
		e.Tries = append(e.Tries, Try{URL: "(no URL)", Err: errors.New("nowhere to fetch it from")})
	}
	if st, err := os.Lstat(part); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
		e.Part = part
	} else if err == nil && st.Mode().IsRegular() && st.Size() == 0 {
		os.Remove(part)
	}
	return res, e
}

// CheckFolder refuses a models folder that force-download would write into unless it is the
// user's and no one else can write into it (safefs.CheckFolder).
func CheckFolder(dir string) error {
	return safefs.CheckFolder(dir, "models folder", "point models_dir (--models-dir) at a folder of your own")
}

// host is u's host (and port), for a message.
func host(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return safefs.Excerpt(u)
}

// claim takes FILE.part.lock for this process for the whole fetch of one file, so that two
// force-downloads never write one part (a second one truncating the first's part while the
// first keeps writing would leave a hole of zeros). The claim is written whole and linked into
// place (lustre.WriteNew: O_EXCL semantics that hold on Lustre and NFS, where flock may not) and
// names the host and pid. A claim has no heartbeat: only a holder provably gone (its process has
// ended on this host, or Slurm restarted its job) is taken over; any other is a *BusyError.
func (f *Fetcher) claim(final string, file File) (release func(), err error) {
	lock := final + ".part.lock"
	me := lustre.Me()
	data, _ := json.Marshal(&me)
	for range 5 {
		err := lustre.WriteNew(lock, data)
		if err == nil {
			return func() {
				if h, err := readClaim(lock); err == nil && h.Token == me.Token {
					os.Remove(lock)
				}
			}, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, &localError{fmt.Errorf("claiming %s: %w", lock, err)}
		}
		h, err := readClaim(lock)
		if errors.Is(err, os.ErrNotExist) {
			continue // released meanwhile
		}
		if err != nil {
			return nil, &localError{fmt.Errorf("%s is not a force-download's claim (%v): remove it if no force-download is running", lock, err)}
		}
		// Judged at the claim's own start, so that its age never counts (a download may take
		// hours and beats nowhere).
		dead, why := h.Dead(&me, h.Beat)
		if !dead {
			return nil, &BusyError{File: file, Lock: lock, Holder: h}
		}
		// Take the dead claim away by renaming it: of several newcomers one succeeds, and the
		// renamed file tells whether it was still the one judged dead.
		stale := lock + ".stale-" + me.Token
		if err := os.Rename(lock, stale); err != nil {
			continue
		}
		if got, err := readClaim(stale); err == nil && got.Token != h.Token {
			os.Link(stale, lock) // a newer claim: give it back
			os.Remove(stale)
			continue
		}
		os.Remove(stale)
		f.logf("%s: taking over %s: %s", file.File, lock, why)
	}
	return nil, &localError{fmt.Errorf("claiming %s: it kept changing hands", lock)}
}

// readClaim reads a claim as force-download writes it, never following a link and never
// reading more than a claim can hold; what is not one is refused without quoting it (it may
// be a link to, or a copy of, a file no one meant to show).
func readClaim(path string) (lustre.Holder, error) {
	var h lustre.Holder
	b, err := safefs.ReadOwnFile(path, claimLimit, "claim")
	if err != nil {
		var kind *safefs.KindError
		var limit *safefs.LimitError
		if errors.As(err, &kind) || errors.As(err, &limit) {
			return h, errors.New(strings.TrimPrefix(err.Error(), "claim "+path+" "))
		}
		return h, err
	}
	if err := json.Unmarshal(b, &h); err != nil || h.Token == "" {
		return h, fmt.Errorf("it holds %d bytes of something else", len(b))
	}
	return h, nil
}

// claimLimit bounds a claim: the few fields of lustre.Holder.
const claimLimit = 4 << 10

// checkExisting settles a file already at its final path, into res: verified by the published
// sha256, or by its .hash where none is published, it is Present (done); otherwise it is Kept
// (done) unless force. The .hash beside a file whose sha256 is the published one is made to
// describe it when stale (a run would refuse the file for it).
func checkExisting(res *Result, dir string, file File, force bool) (done bool, err error) {
	path := res.Path
	var crcWant, hashPath string
	if file.HashFile != "" {
		hashPath = filepath.Join(dir, file.HashFile)
		if crcWant, err = readHash(hashPath); err != nil {
			return true, err
		}
	}
	sha, crc, _, err := sums(path, false)
	if err != nil {
		return true, err
	}
	ok, detail := false, ""
	switch {
	case file.SHA256 != "" && sha != file.SHA256:
		detail = fmt.Sprintf("%s: sha256 %s, FaceFusion publishes %s", path, sha, file.SHA256)
	case file.SHA256 != "" && crcWant != "" && crc != crcWant:
		if CheckFolder(dir) != nil { // a write: only into the user's own folder
			ok, detail = true, fmt.Sprintf("sha256 is FaceFusion's published one; the stale %s (%s) is left as it is: the folder is not yours alone", file.HashFile, crcWant)
			break
		}
		if err := lustre.WriteAtomic(hashPath, []byte(crc)); err != nil {
			return true, err
		}
		ok, detail = true, fmt.Sprintf("sha256 is FaceFusion's published one; the stale %s (%s) now says %s", file.HashFile, crcWant, crc)
	case file.SHA256 != "":
		ok, detail = true, "sha256 is FaceFusion's published one"
	case crcWant != "" && crc != crcWant:
		detail = fmt.Sprintf("%s: CRC32 %s, %s says %s", path, crc, file.HashFile, crcWant)
	case crcWant != "":
		ok, detail = true, "CRC32 matches "+file.HashFile+" (no published sha256)"
	default:
		detail = fmt.Sprintf("%s: no published sha256 and no %s to check it against", path, file.HashFile)
	}
	switch {
	case ok:
		res.State, res.Detail = Present, detail
	case !force:
		res.State, res.Detail = Kept, detail+": left alone (--force replaces it)"
	default:
		return false, nil
	}
	return true, nil
}

// fromURL downloads file from u into part, resuming it, and lands it once verified. It returns
// the bytes transferred.
func (f *Fetcher) fromURL(ctx context.Context, u, dir, part string, file File) (int64, error) {
	if file.SHA256 == "" && file.HashFile == "" {
		return 0, errors.New("no published sha256 and no .hash name: nothing to check a download against")
	}
	attempts := orDefault(f.Attempts, DefaultAttempts)
	crcWant := ""
	var total int64
	var err error
	for try := 1; ; try++ {
		err = nil
		if file.SHA256 == "" && crcWant == "" {
			// Fetched first: without it a download could not be checked.
			crcWant, err = f.fetchHash(ctx, strings.TrimSuffix(u, file.File)+file.HashFile)
		}
		if err == nil {
			var n int64
			n, err = f.transfer(ctx, u, part, file)
			total += n
		}
		if err == nil || permanent(err) || ctx.Err() != nil || try == attempts {
			break
		}
		wait := f.Retry
		var st *statusError
		if errors.As(err, &st) && st.retryAfter > 0 {
			if st.retryAfter > f.maxRetryAfter() {
				err = &slowDown{err: err, wait: st.retryAfter, most: f.maxRetryAfter()}
				break
			}
			wait = st.retryAfter
		}
		f.logf("%s: %v; trying again in %s (%d of %d)", file.File, err, wait, try+1, attempts)
		if werr := f.wait(ctx, wait); werr != nil {
			return total, werr
		}
	}
	var bad *badBytes
	if errors.As(err, &bad) {
		os.Remove(part) // the file there is not the published one: nothing to resume
	}
	if err != nil {
		return total, err
	}
	return total, f.land(dir, part, file, crcWant)
}

// land checks the complete part as it is on the disk (after the fsync, not as it streamed by:
// what counts is what a run will read) and renames it into place.
func (f *Fetcher) land(dir, part string, file File, crcWant string) error {
	f.at("verify", part)
	sha, crc, size, err := sums(part, true)
	if err != nil {
		return &localError{err}
	}
	var bad string
	switch {
	case file.Size > 0 && size != file.Size:
		bad = fmt.Sprintf("%s holds %d bytes once complete, FaceFusion publishes %d", filepath.Base(part), size, file.Size)
	case file.SHA256 != "" && sha != file.SHA256:
		bad = fmt.Sprintf("sha256 %s, FaceFusion publishes %s (the file there is damaged or another version)", sha, file.SHA256)
	case file.SHA256 == "" && crc != crcWant:
		bad = fmt.Sprintf("CRC32 %s, %s there says %s (the file is damaged)", crc, file.HashFile, crcWant)
	}
	if bad != "" {
		os.Remove(part) // complete and wrong: nothing to resume
		return &badBytes{bad}
	}
	// FaceFusion keeps NAME.hash beside NAME.onnx and a run checks it whenever it is there, so it
	// is written first: a crash between the two leaves the new .hash beside no file, or beside
	// the file --force was replacing (refused by a run, replaced by the rerun), never the new
	// file beside an old .hash that would refuse it. Where no sha256 is published, it is the
	// only check a run has.
	if file.HashFile != "" {
		hp := filepath.Join(dir, file.HashFile)
		if _, err := os.Stat(hp); err == nil || file.SHA256 == "" {
			if err := lustre.WriteAtomic(hp, []byte(crc)); err != nil {
				return &localError{err}
			}
		}
	}
	f.at("rename", part)
	final := filepath.Join(dir, file.File)
	if err := os.Rename(part, final); err != nil {
		return &localError{fmt.Errorf("moving %s into place: %w", part, err)}
	}
	if err := lustre.SyncDir(dir); err != nil {
		return &localError{fmt.Errorf("syncing %s: %w", dir, err)}
	}
	return nil
}

// watchdog cancels a request when nothing has arrived for its period: first the answer's
// header, then each read of the body. It does not rely on the client's own timeouts, so a
// caller's client is held to it too.
type watchdog struct {
	t *time.Timer
	d time.Duration
}

var errStalled = errors.New("stalled")

func (f *Fetcher) watchdog(cancel context.CancelCauseFunc) *watchdog {
	d := f.stall()
	return &watchdog{t: time.AfterFunc(d, func() { cancel(errStalled) }), d: d}
}

func (w *watchdog) kick() { w.t.Reset(w.d) }
func (w *watchdog) stop() { w.t.Stop() }

// kicking reads r, kicking w at every read and counting the bytes for g (when not nil).
type kicking struct {
	r io.Reader
	w *watchdog
	g *rateGuard
}

func (k kicking) Read(p []byte) (int, error) {
	n, err := k.r.Read(p)
	k.w.kick()
	if k.g != nil {
		k.g.n.Add(int64(n))
	}
	return n, err
}

// rateGuard cancels a body that averages less than min bytes a second over a window: checked
// by a timer, so a body that sends nothing at all is caught as surely as one that trickles.
type rateGuard struct {
	n      atomic.Int64
	last   int64
	t      *time.Timer
	window time.Duration
	min    int64
	cancel context.CancelCauseFunc
	what   tooSlow // the file and host, for the error
}

func (f *Fetcher) rateGuard(cancel context.CancelCauseFunc, what tooSlow) *rateGuard {
	if f.minRate() < 0 {
		return nil
	}
	g := &rateGuard{window: f.rateWindow(), min: f.minRate(), cancel: cancel, what: what}
	g.t = time.AfterFunc(g.window, g.check)
	return g
}

func (g *rateGuard) check() {
	now := g.n.Load()
	got := now - g.last
	g.last = now
	if float64(got) < float64(g.min)*g.window.Seconds() {
		e := g.what
		e.got, e.window, e.min = got, g.window, g.min
		g.cancel(&e)
		return
	}
	g.t.Reset(g.window)
}

func (g *rateGuard) stop() {
	if g != nil {
		g.t.Stop()
	}
}

// netErr is a failed request's error, naming the stall or the crawl when a guard ended it.
func (f *Fetcher) netErr(ctx, reqCtx context.Context, err error) error {
	var slow *tooSlow
	switch cause := context.Cause(reqCtx); {
	case ctx.Err() != nil:
	case errors.Is(cause, errStalled):
		return fmt.Errorf("nothing arrived for %s", f.stall())
	case errors.As(cause, &slow):
		return slow
	}
	return unwrapURL(err)
}

// fetchHash reads FaceFusion's NAME.hash at u: 8 hex digits.
func (f *Fetcher) fetchHash(ctx context.Context, u string) (string, error) {
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := f.watchdog(cancel)
	defer w.stop()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := f.client().Do(req)
	if err != nil {
		return "", fmt.Errorf("%s: %w", u, f.netErr(ctx, reqCtx, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", &statusError{code: resp.StatusCode, status: resp.Status, retryAfter: retryAfter(resp.Header, time.Now()),
			msg: fmt.Sprintf("no published sha256, and %s answers HTTP %s, so the download could not be checked", u, resp.Status)}
	}
	b, err := io.ReadAll(io.LimitReader(kicking{resp.Body, w, nil}, 64))
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", u, f.netErr(ctx, reqCtx, err))
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
	// 8 digits and a newline; a little room for a CRLF or spaces.
	b, err := safefs.ReadFile(path, 64, ".hash file")
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

// sums is a file's sha256, CRC32 and size, from one read of it; own: a file force-download
// wrote (a part), opened as openPart does.
func sums(path string, own bool) (sha, crc string, size int64, err error) {
	var f *os.File
	if own {
		f, err = openPart(path, os.O_RDONLY)
	} else {
		// O_NONBLOCK: a FIFO at a model's name (in a folder others can write into) would
		// otherwise block the open; it and any other non-regular file are refused below.
		f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	}
	if err != nil {
		return "", "", 0, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return "", "", 0, err
	} else if !st.Mode().IsRegular() {
		return "", "", 0, &safefs.KindError{Path: path, What: "model file", Kind: safefs.KindOf(st.Mode())}
	}
	sh, c := sha256.New(), crc32.NewIEEE()
	size, err = io.CopyBuffer(io.MultiWriter(sh, c), struct{ io.Reader }{f}, make([]byte, 1<<20))
	if err != nil {
		return "", "", 0, fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(sh.Sum(nil)), fmt.Sprintf("%08x", c.Sum32()), size, nil
}

// transfer continues part from u: a Range request from the part's end, or from zero when the
// server ignores Range. It returns the bytes transferred; the caller checks the complete part.
func (f *Fetcher) transfer(ctx context.Context, u, part string, file File) (n int64, err error) {
	out, err := openPart(part, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return 0, &localError{err}
	}
	defer func() {
		// What arrived stays for the next try, durably (a rerun after a crash resumes it, and
		// the check before the rename reads what is on the disk).
		if serr := out.Sync(); err == nil && serr != nil {
			err = &localError{fmt.Errorf("writing %s: %w", part, serr)}
		}
		if cerr := out.Close(); err == nil && cerr != nil {
			err = &localError{fmt.Errorf("writing %s: %w", part, cerr)}
		}
	}()
	st, err := out.Stat()
	if err != nil {
		return 0, &localError{err}
	}
	// most is the file's size at most: the published one, else MaxSize.
	most := file.Size
	if most <= 0 {
		most = orDefault(f.MaxSize, DefaultMaxSize)
	}
	off := st.Size()
	if off > most {
		off = 0 // longer than the file: not a part of it
	}
	if file.Size > 0 && off == file.Size {
		return 0, nil // complete: checked by the caller
	}

	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := f.watchdog(cancel) // from now: the wait for the answer counts
	defer w.stop()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	if off > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", off))
		f.logf("%s: resuming %s at byte %d of %s", file.File, filepath.Base(part), off, sizeText(file.Size))
	} else {
		f.logf("%s: downloading %s from %s", file.File, sizeText(file.Size), u)
	}
	resp, err := f.client().Do(req)
	if err != nil {
		return 0, f.netErr(ctx, reqCtx, err)
	}
	defer resp.Body.Close()
	length := resp.ContentLength // of this answer; -1 unknown
	off, complete, err := f.answered(resp, out, file, u, off)
	if complete || err != nil {
		return 0, err
	}
	if length >= 0 && off+length > most {
		return 0, tooLong(file, most)
	}
	if _, err := out.Seek(off, io.SeekStart); err != nil {
		return 0, &localError{err}
	}
	g := f.rateGuard(cancel, tooSlow{file: file.File, host: host(u)})
	defer g.stop()
	// One byte past the most the file can hold is enough to tell a body too long.
	n, err = f.copyBody(io.LimitReader(kicking{resp.Body, w, g}, most-off+1), out, file, off)
	got := off + n
	var local *localError
	if errors.As(err, &local) {
		return n, err
	}
	if got > most {
		return n, tooLong(file, most)
	}
	var slow *tooSlow
	if err != nil && errors.As(f.netErr(ctx, reqCtx, err), &slow) {
		return n, slow
	}
	if err != nil {
		return n, fmt.Errorf("the connection dropped after %d of %s (%v)", got, sizeText(max(file.Size, off+length)), f.netErr(ctx, reqCtx, err))
	}
	if want := max(file.Size, off+length); (file.Size > 0 || length >= 0) && got != want {
		return n, fmt.Errorf("the body ended after %d of %d bytes", got, want)
	}
	return n, nil
}

// answered checks the server's answer to a request from off: where the body starts (off, or
// zero when the server ignores Range and the part was emptied), or complete when the part
// already holds the whole file. An answer that cannot continue the part is an error.
func (f *Fetcher) answered(resp *http.Response, out *os.File, file File, u string, off int64) (start int64, complete bool, err error) {
	length := resp.ContentLength
	switch {
	case resp.StatusCode == http.StatusPartialContent && off > 0:
		start, total, ok := contentRange(resp.Header.Get("Content-Range"))
		if !ok || start != off {
			// Not the range asked for: start over, on the next try.
			out.Truncate(0)
			return 0, false, fmt.Errorf("the server answered the range from %d with %q: starting over", off, resp.Header.Get("Content-Range"))
		}
		if file.Size > 0 && total >= 0 && total != file.Size {
			return 0, false, &badBytes{fmt.Sprintf("the file there has %d bytes, FaceFusion publishes %d", total, file.Size)}
		}
	case resp.StatusCode == http.StatusOK:
		if off > 0 {
			f.logf("%s: %s ignores Range requests: starting over", file.File, u)
			off = 0
		}
		if err := out.Truncate(0); err != nil {
			return 0, false, &localError{err}
		}
		if file.Size > 0 && length >= 0 && length != file.Size {
			return 0, false, &badBytes{fmt.Sprintf("the file there has %d bytes, FaceFusion publishes %d", length, file.Size)}
		}
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		// "bytes */TOTAL" with TOTAL the part's size: the part is the whole file already.
		if _, total, ok := contentRange(resp.Header.Get("Content-Range")); ok && off > 0 && total == off {
			return 0, true, nil
		}
		out.Truncate(0) // the part is not a beginning of the file there: start over
		return 0, false, fmt.Errorf("the server has no bytes after %d: starting over", off)
	default:
		return 0, false, &statusError{code: resp.StatusCode, status: resp.Status, retryAfter: retryAfter(resp.Header, time.Now())}
	}
	return off, false, nil
}

// openPart opens a part without following a link and refuses what is not a regular file of
// the user's: a name planted there (a link to another file, a FIFO, someone else's file) is
// never written to, read, or renamed into place as a model.
func openPart(part string, flag int) (*os.File, error) {
	// O_NONBLOCK: a FIFO is refused below instead of waited on.
	f, err := os.OpenFile(part, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a link, which force-download never writes through: remove it if you made it", part)
	}
	if err != nil {
		return nil, err
	}
	// O_NONBLOCK stays set: it changes nothing for a regular file.
	st, err := f.Stat()
	switch {
	case err != nil:
	case !st.Mode().IsRegular():
		err = fmt.Errorf("%s is %s, not a regular file: remove it if you made it", part, safefs.KindOf(st.Mode()))
	case st.Sys().(*syscall.Stat_t).Uid != uint32(os.Geteuid()):
		err = fmt.Errorf("%s belongs to uid %d, not to you: force-download writes only its own part", part, st.Sys().(*syscall.Stat_t).Uid)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// tooLong is a body longer than the file can be.
func tooLong(file File, most int64) error {
	if file.Size > 0 {
		return &badBytes{fmt.Sprintf("the host sends more than the %d bytes FaceFusion publishes", file.Size)}
	}
	return &badBytes{fmt.Sprintf("the host sends more than %d bytes, the most force-download takes of a file with no published size", most)}
}

// unwrapURL drops net/http's "Get URL:" prefix: the messages name the URL once, themselves.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// copyBody copies the answer into the part and logs progress every ten seconds.
func (f *Fetcher) copyBody(body io.Reader, out io.Writer, file File, off int64) (int64, error) {
	buf := make([]byte, 1<<20)
	var n int64
	start, lastLog := time.Now(), time.Now()
	for {
		k, rerr := body.Read(buf)
		if k > 0 {
			if _, err := out.Write(buf[:k]); err != nil {
				return n, &localError{fmt.Errorf("writing %s: %w", file.File+".part", err)}
			}
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

// contentRange parses "bytes START-END/TOTAL"; START is -1 for "bytes */TOTAL" (a 416's) and
// TOTAL -1 for "*".
func contentRange(v string) (start, total int64, ok bool) {
	v, found := strings.CutPrefix(v, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, tot, found := strings.Cut(v, "/")
	if !found {
		return 0, 0, false
	}
	start = -1
	if rng != "*" {
		from, _, found := strings.Cut(rng, "-")
		if !found {
			return 0, 0, false
		}
		var err error
		if start, err = strconv.ParseInt(from, 10, 64); err != nil {
			return 0, 0, false
		}
	}
	total = -1
	if tot != "*" {
		var err error
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
