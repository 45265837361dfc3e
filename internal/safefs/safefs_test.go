package safefs

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

func TestReadFileRefusesFIFOWithoutBlocking(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "config.toml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadFile(fifo, ConfigLimit, "config"); done <- err }()
	select {
	case err := <-done:
		var ke *KindError
		if !errors.As(err, &ke) || !strings.Contains(err.Error(), "FIFO") || !strings.Contains(err.Error(), fifo) {
			t.Fatalf("a FIFO: got %v, want a KindError naming it", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO blocked")
	}
}

func TestReadFileRefusesDevicesAndFolders(t *testing.T) {
	for _, p := range []string{"/dev/zero", "/dev/null", t.TempDir()} {
		var ke *KindError
		if _, err := ReadFile(p, ConfigLimit, "config"); !errors.As(err, &ke) {
			t.Errorf("%s: got %v, want refused as not a regular file", p, err)
		}
	}
}

func TestReadFileLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(p, make([]byte, 1025), 0o600); err != nil {
		t.Fatal(err)
	}
	var le *LimitError
	if _, err := ReadFile(p, 1024, "manifest"); !errors.As(err, &le) || !strings.Contains(err.Error(), "1 KiB") {
		t.Fatalf("over the limit: got %v, want a LimitError naming 1 KiB", err)
	}
	// A sparse file of a terabyte is refused by its size, without reading.
	sp := filepath.Join(t.TempDir(), "sparse")
	f, _ := os.Create(sp)
	f.Truncate(1 << 40)
	f.Close()
	if _, err := ReadFile(sp, ReportLimit, "report"); !errors.As(err, &le) {
		t.Fatalf("sparse: got %v", err)
	}
	if b, err := ReadFile(p, 1025, "manifest"); err != nil || len(b) != 1025 {
		t.Fatalf("at the limit: %d bytes, %v", len(b), err)
	}
}

func TestReadOwnFileRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "id_rsa")
	os.WriteFile(secret, []byte("PRIVATE KEY"), 0o600)
	link := filepath.Join(dir, "CLAIM")
	os.Symlink(secret, link)
	b, err := ReadOwnFile(link, SmallLimit, "claim")
	var ke *KindError
	if !errors.As(err, &ke) || len(b) != 0 || !strings.Contains(err.Error(), "a link") {
		t.Fatalf("a link in our folder: got %q, %v; want refused", b, err)
	}
	if b, err := ReadFile(link, SmallLimit, "config"); err != nil || string(b) != "PRIVATE KEY" {
		t.Fatalf("ReadFile follows a user's link: %q, %v", b, err)
	}
}

// The tests run as root (CI and developers' machines): another user is simulated by chowning
// folders to nobody.
func TestCheckFolder(t *testing.T) {
	t.Setenv(GroupEnv, "")
	mine := t.TempDir()
	os.Chmod(mine, 0o755)
	if err := CheckFolder(mine, "job folder", "choose another --job-dir"); err != nil {
		t.Fatalf("own folder refused: %v", err)
	}
	os.Chmod(mine, 0o777)
	if err := CheckFolder(mine, "job folder", "x"); err == nil || !strings.Contains(err.Error(), "every user") {
		t.Fatalf("world-writable: %v", err)
	}
	os.Chmod(mine, 0o775)
	if err := CheckFolder(mine, "job folder", "x"); err == nil || !strings.Contains(err.Error(), GroupEnv) {
		t.Fatalf("group-writable: %v", err)
	}
	t.Setenv(GroupEnv, "1")
	if err := CheckFolder(mine, "job folder", "x"); err != nil {
		t.Fatalf("group-writable with %s=1: %v", GroupEnv, err)
	}
	if FolderMode()&0o002 != 0 {
		t.Fatalf("FolderMode %v writable by others", FolderMode())
	}
	os.Chmod(mine, 0o755)
	if os.Geteuid() != 0 {
		t.Fatal("the foreign-owner cases need root (chown): run the tests as root, as CI does")
	}
	theirs := filepath.Join(mine, "theirs")
	os.Mkdir(theirs, 0o755)
	testenv.GiveToNobody(t, theirs)
	err := CheckFolder(theirs, "job folder", "choose another --job-dir")
	if err == nil || !strings.Contains(err.Error(), "nobody") || !strings.Contains(err.Error(), "choose another --job-dir") {
		t.Fatalf("another user's folder: %v", err)
	}
	// A link another user planted, even to a folder of ours, is refused.
	link := filepath.Join(mine, "link")
	os.Symlink(mine, link)
	testenv.GiveToNobody(t, link)
	if err := CheckFolder(link, "job folder", "x"); err == nil || !strings.Contains(err.Error(), "link made by") {
		t.Fatalf("another user's link: %v", err)
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("é", 5_000_000)
	e := Excerpt(long)
	if len(e) > 2*ExcerptLen+40 || !strings.Contains(e, "bytes more") {
		t.Fatalf("excerpt of 10 MB: %d bytes: %.100s", len(e), e)
	}
	if Excerpt("short") != `"short"` {
		t.Fatal(Excerpt("short"))
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct{ name, msg, prefix, suffix string }{
		{"a long word", "toml: line 1: " + strings.Repeat("é", 5_000_000) + " is out of range", "toml: line 1: é", "bytes more) is out of range"},
		{"many words", "line 1: " + strings.Repeat("a ", 5_000_000), "line 1: a a", "bytes more)"},
	} {
		got := Clip(c.msg)
		if len(got) > MessageLen+2*ExcerptLen || !strings.HasPrefix(got, c.prefix) || !strings.HasSuffix(got, c.suffix) || !utf8.ValidString(got) {
			t.Errorf("%s: %d bytes: %.400s", c.name, len(got), got)
		}
	}
	if Clip("short message") != "short message" {
		t.Fatal(Clip("short message"))
	}
}

// The shared-file-system page lists every limit as the code has it.
func TestDocsListTheLimits(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "shared-filesystems.md"))
	if err != nil {
		t.Fatal(err)
	}
	for row, limit := range map[string]int64{
		"job TOML, `facefusion.ini`, batch settings": ConfigLimit, "manifest": ManifestLimit,
		"one rank's journal": JournalLimit, "run report (also as `plan --costs`)": ReportLimit,
		"progress file": ProgressLimit, "claim, lock, heartbeat, attempt, stop file": SmallLimit,
		"a batch's done or failure record": RecordLimit, "a batch's frozen list": ListLimit,
	} {
		if want := "| " + row + " | " + Size(limit) + " |"; !strings.Contains(string(page), want) {
			t.Errorf("docs/shared-filesystems.md lacks the row %q", want)
		}
	}
}

// A path through a link another user made (chowned to nobody: the tests run as root) is
// refused, in any part and in the links a link leads to; the running user's own links and
// root's are followed.
func TestForeignLink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "private")
	os.Mkdir(victim, 0o700)
	os.WriteFile(filepath.Join(victim, "secret.mp4"), []byte("x"), 0o600)
	mine := filepath.Join(dir, "mine")
	os.Symlink(victim, mine)
	theirs := filepath.Join(dir, "theirs")
	os.Symlink(victim, theirs)
	testenv.GiveToNobody(t, theirs)
	// My link to their link.
	chain := filepath.Join(dir, "chain")
	os.Symlink("theirs/secret.mp4", chain)
	for _, p := range []string{filepath.Join(mine, "secret.mp4"), filepath.Join(dir, "new", "out.mp4"), victim} {
		if err := ForeignLink(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	for _, tc := range []struct{ path, link string }{
		{theirs, theirs}, {filepath.Join(theirs, "secret.mp4"), theirs}, {filepath.Join(theirs, "job", "x"), theirs},
		{chain, theirs}, {filepath.Join(mine, "..", "theirs", "secret.mp4"), theirs},
	} {
		var le *LinkError
		if err := ForeignLink(tc.path); !errors.As(err, &le) || le.Link != tc.link || !strings.Contains(err.Error(), "nobody") {
			t.Errorf("%s: %v, want refused for the link %s", tc.path, err, tc.link)
		}
	}
}

// A name from a file is shown as it is only when it is short and printable: an ANSI escape, a
// line break, a quote or invalid UTF-8 is quoted with the control characters escaped, and a name
// over its limit is cut.
func TestName(t *testing.T) {
	for _, c := range []struct {
		in, want string
		limit    int
	}{
		{"node17.cluster", "node17.cluster", HostLen},
		{"/data/in/Ünïcode talk.mp4", "/data/in/Ünïcode talk.mp4", PathLen},
		{"node\x1b[31m17", `"node\x1b[31m17"`, HostLen},
		{"in.mp4\nfacefusion: done", `"in.mp4\nfacefusion: done"`, PathLen},
		{`say "hi"`, `"say \"hi\""`, HostLen},
		{"bad\xffbyte", `"bad\xffbyte"`, HostLen},
		{"\x1b]0;title\x07", `"\x1b]0;title\a"`, HostLen},
	} {
		if got := Name(c.in, c.limit); got != c.want {
			t.Errorf("Name(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	long := strings.Repeat("h", HostLen+1)
	if got := Name(long, HostLen); !strings.HasPrefix(got, `"`+strings.Repeat("h", ExcerptLen)+`"… (`) {
		t.Errorf("a host name of %d bytes: %s", len(long), got)
	}
	if got := Name(strings.Repeat("k", HostLen), HostLen); got != strings.Repeat("k", HostLen) {
		t.Errorf("a name at the limit was cut: %s", got)
	}
}

// Regular refuses what is not a regular file, leaves a missing path to the caller, and passes
// on a path it cannot look at (a link loop) rather than calling it fine.
func TestRegular(t *testing.T) {
	dir := t.TempDir()
	file, fifo, loop := filepath.Join(dir, "f"), filepath.Join(dir, "fifo"), filepath.Join(dir, "loop")
	os.WriteFile(file, []byte("x"), 0o644)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink(loop, loop)
	if err := Regular(file, "target"); err != nil {
		t.Errorf("a regular file: %v", err)
	}
	if err := Regular(filepath.Join(dir, "missing"), "target"); err != nil {
		t.Errorf("a missing file: %v, want it left to the caller", err)
	}
	var ke *KindError
	if err := Regular(fifo, "target"); !errors.As(err, &ke) || !strings.Contains(err.Error(), "a FIFO") {
		t.Errorf("a FIFO: %v", err)
	}
	if err := Regular(loop, "target"); !errors.Is(err, syscall.ELOOP) || !strings.HasPrefix(err.Error(), "target: ") {
		t.Errorf("a link loop: %v, want the stat's error named", err)
	}
}

// A folder the program makes its own folder in: accepted when no one but the user, root and
// (with GroupEnv) the folder's group and a project tree's owner can rename what is made there.
// Another user is simulated by chowning to nobody (uid 65534): the tests run as root.
func TestCheckParent(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the foreign-owner cases need root (chown): run the tests as root, as CI does")
	}
	dir := t.TempDir()
	mk := func(name string, mode os.FileMode, uid int) string {
		p := filepath.Join(dir, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, uid, uid); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name  string
		mode  os.FileMode
		uid   int
		plain string // the error without GroupEnv ("" accepted)
		group string // the error with GroupEnv=1
	}{
		{"own", 0o755, 0, "", ""},
		{"own-group", 0o775, 0, "writable by its group", ""},
		{"own-group-setgid", 0o775 | os.ModeSetgid, 0, "writable by its group", ""},
		{"world", 0o777, 0, "not sticky", "not sticky"},
		{"scratch-root", 0o777 | os.ModeSticky, 0, "", ""},
		{"scratch-nobody", 0o777 | os.ModeSticky, 65534, "belongs to user nobody (uid 65534)", "belongs to user nobody (uid 65534)"},
		{"colleague", 0o755, 65534, "belongs to user nobody (uid 65534)", ""},
		{"colleague-project", 0o775 | os.ModeSetgid, 65534, "belongs to user nobody (uid 65534)", ""},
		{"group-sticky", 0o775 | os.ModeSticky, 0, "", ""},
	} {
		p := mk(c.name, c.mode, c.uid)
		for _, g := range []struct{ env, want string }{{"", c.plain}, {"1", c.group}} {
			t.Setenv(GroupEnv, g.env)
			err := CheckParent(p, "job folder's parent", "choose another --job-dir")
			switch {
			case g.want == "" && err != nil:
				t.Errorf("%s (%s=%q): refused: %v", c.name, GroupEnv, g.env, err)
			case g.want != "" && (err == nil || !strings.Contains(err.Error(), g.want) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "choose another --job-dir")):
				t.Errorf("%s (%s=%q): %v, want an error with %q", c.name, GroupEnv, g.env, err, g.want)
			}
		}
	}
	// A link another user planted, even to a folder of ours, is refused.
	t.Setenv(GroupEnv, "1")
	link := filepath.Join(dir, "link")
	os.Symlink(filepath.Join(dir, "own"), link)
	if out, err := exec.Command("chown", "-h", "nobody", link).CombinedOutput(); err != nil {
		t.Fatal(string(out))
	}
	if err := CheckParent(link, "job folder's parent", "x"); err == nil || !strings.Contains(err.Error(), "link made by") {
		t.Errorf("another user's link: %v", err)
	}
}

// Clip passes a message's words on, but no control or invisible formatting character: an ANSI
// escape, a line break and a right-to-left override are escaped.
func TestClipEscapes(t *testing.T) {
	if got := Clip("line 3: key \x1b[2J\nx \u202egnp.exe"); got != `line 3: key \x1b[2J\nx \u202egnp.exe` {
		t.Errorf("Clip = %s", got)
	}
	if got := Clip(`plain "words" stay`); got != `plain "words" stay` {
		t.Errorf("Clip = %s", got)
	}
}
