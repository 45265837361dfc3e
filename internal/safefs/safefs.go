// Package safefs reads and checks files in folders that other users may write to (world-writable
// scratch, group-writable project trees), where any name another user can predict may be a
// planted link, FIFO or device. It reads with a size limit, refuses what is not a regular file
// before reading a byte, never follows a link inside the program's own folders, and refuses
// folders another user owns or can write into (as OpenSSH's StrictModes does for ~/.ssh).
package safefs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"
)

// Limits of the files the program reads, one home for each: a file over its limit is refused
// with the limit named.
const (
	ConfigLimit   = 1 << 20  // a job TOML, facefusion.ini, a batch's settings
	ManifestLimit = 64 << 20 // a job folder's manifest (a record a chunk: millions of chunks fit)
	JournalLimit  = 16 << 20 // one rank's journal of finished chunks
	ReportLimit   = 64 << 20 // a run report (per-rank stats of thousands of ranks)
	SmallLimit    = 64 << 10 // a claim, lock, heartbeat, attempt or stop file
	ProgressLimit = 16 << 20 // a job's progress file: a count for each of up to a million ranks
	RecordLimit   = 1 << 20  // a batch's done or failure record (paths of a target and its sources)
	ListLimit     = 64 << 20 // a batch's frozen list (paths of every entry: a million fit)
)

// LimitError is a file over its size limit.
type LimitError struct {
	Path  string
	What  string
	Limit int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s %s is larger than the %s this program reads: check that it is the right file", e.What, e.Path, Size(e.Limit))
}

// KindError is a path that is not a regular file (a FIFO, a device, a socket, a folder), or a
// link where the program follows none.
type KindError struct {
	Path string
	What string
	Kind string
}

func (e *KindError) Error() string {
	return fmt.Sprintf("%s %s is %s, not a regular file, and facefusion reads only regular files", e.What, e.Path, e.Kind)
}

// ReadFile reads the regular file at path (following links: a user's input may be one), at most
// limit bytes. A FIFO, device, socket or folder is refused without blocking or reading; what
// names the file in the error ("config", "manifest").
func ReadFile(path string, limit int64, what string) ([]byte, error) {
	return read(path, limit, what, 0)
}

// ReadOwnFile is ReadFile for a file inside the program's own folders: a link there is refused
// (ELOOP), never followed, since another user may have planted it.
func ReadOwnFile(path string, limit int64, what string) ([]byte, error) {
	return read(path, limit, what, syscall.O_NOFOLLOW)
}

func read(path string, limit int64, what string, flags int) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, deaf to signals.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|flags, 0)
	if err != nil {
		if flags&syscall.O_NOFOLLOW != 0 && errors.Is(err, syscall.ELOOP) {
			return nil, &KindError{Path: path, What: what, Kind: "a link"}
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &KindError{Path: path, What: what, Kind: KindOf(st.Mode())}
	}
	if st.Size() > limit {
		return nil, &LimitError{Path: path, What: what, Limit: limit}
	}
	// The size may grow while it is read: the limit holds for what is read, too.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &LimitError{Path: path, What: what, Limit: limit}
	}
	return b, nil
}

// Regular refuses a path that exists and is not a regular file (following links), before
// anything opens it: for inputs handed to other programs (ffmpeg), which would block on a FIFO.
// A path that does not exist is left to the caller (nil); one that cannot be looked at (a
// folder on the way without permission, a link loop) is the stat's error, what named.
func Regular(path, what string) error {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !st.Mode().IsRegular() {
		return &KindError{Path: path, What: what, Kind: KindOf(st.Mode())}
	}
	return nil
}

// KindOf names a file mode's type for a message: "a FIFO", "a folder", ….
func KindOf(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeSymlink != 0:
		return "a link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file"
}

// Size is n bytes for a message: "64 KiB", "1 MiB".
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ExcerptLen is the most of a file's text an error quotes.
const ExcerptLen = 60

// Excerpt quotes at most ExcerptLen bytes of s for an error, cut at a character's edge, with
// what was left out counted: an error never echoes a whole file, nor a 10 MB key.
func Excerpt(s string) string {
	if len(s) <= ExcerptLen {
		return strconv.Quote(s)
	}
	cut := ExcerptLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes more)", strconv.Quote(s[:cut]), len(s)-cut)
}

// The most of a name read from a file that a message shows whole (Name): a path's limit, and a
// host name's (a DNS name is at most 253 bytes).
const (
	PathLen = 4096
	HostLen = 255
)

// Name is text read from a file or given by a user (a key, a host, a Slurm job id, a path) for
// a message: as it is when it is at most limit bytes of printable text, else quoted, with every
// control character escaped, and cut at ExcerptLen (Excerpt). No escape sequence or line break
// of another's making reaches a terminal or a log line raw, and no 10 MB key is echoed.
func Name(s string, limit int) string {
	if len(s) > limit || strings.ContainsFunc(s, func(r rune) bool { return r == utf8.RuneError || r == '"' || !unicode.IsPrint(r) }) {
		return Excerpt(s)
	}
	return s
}

// MessageLen is the most of another library's error message (a parser's, which may quote a
// whole key or value of what it read) an error passes on.
const MessageLen = 240

// Clip is msg, another library's error message, for an error of ours: each word of it longer
// than ExcerptLen (a number, key or value it quotes from the file: no word of a message is that
// long) cut to ExcerptLen, and the whole cut to MessageLen, with what was left out counted.
// Unlike Excerpt it does not quote: msg is a message, not the file's text; but its control
// characters (a terminal escape, a line break) are escaped as Go writes them.
func Clip(msg string) string { return escapeControls(clip(msg)) }

// escapeControls is s with each control character and invalid byte escaped (\x1b, \n, \xff).
func escapeControls(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	q := strconv.Quote(s)
	return strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
}

func clip(msg string) string {
	var b strings.Builder
	rest := msg
	for first := true; ; first = false {
		word, after, more := strings.Cut(rest, " ")
		if !first {
			b.WriteByte(' ')
		}
		if len(word) > ExcerptLen {
			cut := runeEdge(word, ExcerptLen)
			fmt.Fprintf(&b, "%s… (%d bytes more)", word[:cut], len(word)-cut)
		} else {
			b.WriteString(word)
		}
		if !more {
			return b.String()
		}
		rest = after
		if b.Len() > MessageLen {
			return fmt.Sprintf("%s… (%d bytes more)", b.String(), len(rest))
		}
	}
}

// runeEdge is n, or less to cut s at a character's edge.
func runeEdge(s string, n int) int {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// GroupEnv names the setting that lets a folder the program writes into be writable by its
// owner's group (setgid project trees, where a team shares its folders): FACEFUSION_GROUP_WRITABLE=1.
// Without it, a folder writable by anyone but its owner is refused.
const GroupEnv = "FACEFUSION_GROUP_WRITABLE"

// GroupAllowed reports whether GroupEnv is set to allow group-writable folders.
func GroupAllowed() bool {
	v := os.Getenv(GroupEnv)
	return v == "1" || v == "true" || v == "yes"
}

// FolderError is a folder the program will not write into: another user's, or one others can
// write into.
type FolderError struct {
	Path   string
	What   string // "job folder", "batch folder", "models folder"
	Reason string
	Fix    string
}

func (e *FolderError) Error() string {
	return fmt.Sprintf("%s %s %s: %s", e.What, e.Path, e.Reason, e.Fix)
}

// folder is what path names, a folder; a link to it must be the running user's or root's.
func folder(path, what, fix string) (fs.FileInfo, error) {
	lst, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if lst.Mode()&fs.ModeSymlink != 0 {
		if o := Owner(lst); o != os.Geteuid() && o != 0 {
			return nil, &FolderError{Path: path, What: what, Reason: "is a link made by " + UserName(o) + ", not by you", Fix: fix}
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, &FolderError{Path: path, What: what, Reason: "is " + KindOf(st.Mode()) + ", not a folder", Fix: fix}
	}
	return st, nil
}

// CheckFolder refuses a folder that the program would write into and trust unless it is the
// running user's and no one else can write into it: owned by the effective user (or, for
// root, by root), not writable by others, and not by the group unless GroupAllowed. The path
// may be a link to such a folder (a /scratch link); the link itself must then be the user's too.
// what names the folder in the error; fix says what to do instead ("choose another --job-dir").
func CheckFolder(path, what, fix string) error {
	st, err := folder(path, what, fix)
	if err != nil {
		return err
	}
	uid := os.Geteuid()
	if o := Owner(st); o != uid {
		return &FolderError{Path: path, What: what, Reason: "belongs to " + UserName(o) + ", not to you (" + UserName(uid) + "), so facefusion does not trust what is in it", Fix: fix}
	}
	perm := st.Mode().Perm()
	if perm&0o002 != 0 {
		return &FolderError{Path: path, What: what, Reason: fmt.Sprintf("is writable by every user (mode %s)", octal(st.Mode())),
			Fix: fmt.Sprintf("run chmod o-w %s, or %s", path, fix)}
	}
	if perm&0o020 != 0 && !GroupAllowed() {
		return &FolderError{Path: path, What: what, Reason: fmt.Sprintf("is writable by its group (mode %s)", octal(st.Mode())),
			Fix: fmt.Sprintf("run chmod g-w %s, set %s=1 where your group shares its folders (a setgid project tree), or %s", path, GroupEnv, fix)}
	}
	return nil
}

// Mine reports whether the running user owns the file st describes.
func Mine(st fs.FileInfo) bool { return Owner(st) == os.Geteuid() }

// Owner is the uid of the file st describes (-1 where the system gives none).
func Owner(st fs.FileInfo) int {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Uid)
	}
	return -1
}

// UserName is a uid as "user NAME (uid N)", or "uid N" where no name is known: for a message.
func UserName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("user %s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}

// FolderMode is the mode the program makes its own folders with: what the umask leaves of
// rwxr-xr-x (rwxrwxr-x where GroupAllowed), never writable by others.
func FolderMode() os.FileMode {
	m := os.FileMode(0o755)
	if GroupAllowed() {
		m = 0o775
	}
	return m &^ os.FileMode(umask)
}

// umask is the process's, read once before any goroutine could create a file meanwhile.
var umask = func() int {
	m := syscall.Umask(0o077)
	syscall.Umask(m)
	return m
}()

// LinkError is a path that goes through a link another user made: whoever made it chooses
// where the path leads, a file of the running user's it can read or write included.
type LinkError struct {
	Path, Link, Owner string
	abs               string // Path made absolute
}

func (e *LinkError) Error() string {
	if e.Link == e.abs {
		return fmt.Sprintf("%s is a link made by %s, not by you: facefusion follows no other user's links", e.Path, e.Owner)
	}
	return fmt.Sprintf("%s goes through %s, a link made by %s, not by you: facefusion follows no other user's links", e.Path, e.Link, e.Owner)
}

// maxLinks is how many links a path may go through, as the kernel's own limit.
const maxLinks = 40

// ForeignLink refuses a path that goes through a link made by a user other than the running one
// or root, in any of its parts or the links they lead to. What does not exist (yet) ends the
// walk: the rest is made by the program.
func ForeignLink(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	uid := os.Geteuid()
	rest := strings.Split(strings.TrimPrefix(abs, "/"), "/")
	done := "/"
	for hops := 0; len(rest) > 0; {
		part := rest[0]
		rest = rest[1:]
		if part == "" || part == "." {
			continue
		}
		if part == ".." {
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, part)
		st, err := os.Lstat(next)
		if err != nil {
			return nil
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			done = next
			continue
		}
		if o := Owner(st); o != uid && o != 0 {
			return &LinkError{Path: path, Link: next, Owner: UserName(o), abs: abs}
		}
		if hops++; hops > maxLinks {
			return nil // a loop: what opens it says so
		}
		to, err := os.Readlink(next)
		if err != nil {
			return nil
		}
		if filepath.IsAbs(to) {
			done = "/"
		}
		rest = append(strings.Split(to, "/"), rest...)
	}
	return nil
}

// CheckParent refuses a folder the program creates its own folder in, or goes inside, when
// someone the user has not chosen to trust could rename or replace what the program makes
// there. Who can: the folder's owner and root always; its group where it is group-writable,
// and every user where it is world-writable, unless it is sticky (then only an entry's owner,
// the folder's owner and root). Trusted: the running user and root; with GroupAllowed, also
// the folder's group and, in a folder that is not world-writable (a project tree, not a public
// scratch), its owner. So a world-writable folder is accepted only when it is sticky and its
// owner is root or the running user (/scratch, /tmp). The path may be a link to the folder;
// the link must then be the user's or root's. Unlike CheckFolder, the folder may be another
// user's where the setting allows it: what is trusted is the program's own folder inside it.
func CheckParent(path, what, fix string) error {
	st, err := folder(path, what, fix)
	if err != nil {
		return err
	}
	uid := os.Geteuid()
	perm, sticky, o := st.Mode().Perm(), st.Mode()&fs.ModeSticky != 0, Owner(st)
	ownerTrusted := o == uid || o == 0
	switch {
	case perm&0o002 != 0 && !sticky:
		return &FolderError{Path: path, What: what, Reason: fmt.Sprintf("is writable by every user and not sticky (mode %s), so anyone can rename or replace what facefusion makes in it", octal(st.Mode())),
			Fix: fmt.Sprintf("run chmod o-w %s, or %s", path, fix)}
	case perm&0o002 != 0 && !ownerTrusted:
		return &FolderError{Path: path, What: what, Reason: fmt.Sprintf("is writable by every user (mode %s) and belongs to %s, who can rename or replace what facefusion makes in it despite its sticky bit", octal(st.Mode()), UserName(o)),
			Fix: fix}
	case !ownerTrusted && !GroupAllowed():
		return &FolderError{Path: path, What: what, Reason: "belongs to " + UserName(o) + ", who can rename or replace what facefusion makes in it",
			Fix: fmt.Sprintf("set %s=1 where that user and the folder's group share their folders with you (a project tree), or %s", GroupEnv, fix)}
	case perm&0o020 != 0 && !sticky && !GroupAllowed():
		return &FolderError{Path: path, What: what, Reason: fmt.Sprintf("is writable by its group (mode %s), whose members can rename or replace what facefusion makes in it", octal(st.Mode())),
			Fix: fmt.Sprintf("run chmod g-w %s, set %s=1 where your group shares its folders (a setgid project tree), or %s", path, GroupEnv, fix)}
	}
	return nil
}

// octal is a folder's mode as chmod takes it, its setgid and sticky bits with its permissions.
func octal(m fs.FileMode) string {
	bits := m.Perm()
	if m&fs.ModeSetgid != 0 {
		bits |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		bits |= 0o1000
	}
	return fmt.Sprintf("%04o", bits)
}
