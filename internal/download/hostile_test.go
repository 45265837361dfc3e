package download

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// A name planted beside the model's final path (FILE.part, FILE.part.lock), in a models folder
// of the user's, is never followed, written, read whole or quoted: the victim behind it keeps
// its bytes, and the error quotes none of them.
func TestFetchPlanted(t *testing.T) {
	srv := newServer(t)
	ctx := context.Background()
	const secret = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n"
	victim := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(victim, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	untouched := func(t *testing.T) {
		t.Helper()
		b, err := os.ReadFile(victim)
		if err != nil || string(b) != secret {
			t.Errorf("the victim behind the planted name changed: %q %v", b, err)
		}
	}
	quotesNothing := func(t *testing.T, err error) {
		t.Helper()
		if err == nil {
			t.Fatal("no error")
		}
		if msg := err.Error(); strings.Contains(msg, "PRIVATE KEY") || strings.Contains(msg, "b3BlbnNz") || strings.Contains(msg, "\n") {
			t.Errorf("the error quotes the planted file, or is not one line: %q", msg)
		}
	}
	for _, c := range []struct {
		name  string
		plant func(t *testing.T, dir string)
		want  string
	}{
		{"part-link", func(t *testing.T, dir string) {
			os.Symlink(victim, filepath.Join(dir, "fixture.onnx.part"))
		}, "fixture.onnx.part is a link"},
		{"part-fifo", func(t *testing.T, dir string) {
			syscall.Mkfifo(filepath.Join(dir, "fixture.onnx.part"), 0o644)
		}, "fixture.onnx.part is a FIFO"},
		{"part-theirs", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "fixture.onnx.part")
			os.WriteFile(p, model[:1000], 0o666)
			testenv.GiveToNobody(t, p)
		}, "fixture.onnx.part belongs to uid 65534"},
		{"lock-link", func(t *testing.T, dir string) {
			os.Symlink(victim, filepath.Join(dir, "fixture.onnx.part.lock"))
		}, "fixture.onnx.part.lock is not a force-download's claim (is a link"},
		{"lock-copy", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "fixture.onnx.part.lock"), []byte(secret), 0o644)
		}, "fixture.onnx.part.lock is not a force-download's claim (it holds 113 bytes of something else)"},
		{"lock-huge", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "fixture.onnx.part.lock"), []byte(strings.Repeat(secret, 100)), 0o644)
		}, "larger than the 4 KiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.plant(t, dir)
			before := len(srv.requests("good"))
			done := make(chan error, 1)
			go func() {
				_, err := fetcher(t).Fetch(ctx, dir, published(srv.url("good")), true)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("Fetch blocked on the planted name")
			}
			quotesNothing(t, err)
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("want the error to say %q:\n%v", c.want, err)
			}
			untouched(t)
			notLandedAt(t, dir)
			if strings.HasPrefix(c.name, "lock") && len(srv.requests("good")) != before {
				t.Error("a download began without the claim")
			}
			// The planted name is left where it is: the program did not make it.
			if _, err := os.Lstat(filepath.Join(dir, "fixture.onnx.part"+map[bool]string{true: ".lock"}[strings.HasPrefix(c.name, "lock")])); err != nil {
				t.Errorf("the planted name was removed: %v", err)
			}
		})
	}

	// A claim's own fields are shown short: a host of a megabyte is an excerpt.
	t.Run("lock-long-host", func(t *testing.T) {
		dir := t.TempDir()
		claim := `{"token":"77","host":"` + strings.Repeat("h", 3000) + `x","pid":4242,"started":"2026-01-02T03:04:05Z"}`
		os.WriteFile(filepath.Join(dir, "fixture.onnx.part.lock"), []byte(claim), 0o644)
		_, err := fetcher(t).Fetch(ctx, dir, published(srv.url("good")), true)
		var busy *BusyError
		if !errors.As(err, &busy) || len(err.Error()) > 1000 || !strings.Contains(err.Error(), "bytes more") {
			t.Errorf("want a busy error quoting the host short, got %d bytes: %.300s", len(err.Error()), err)
		}
	})
}

func notLandedAt(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "fixture.onnx")); err == nil {
		t.Error("a file landed at the final path")
	}
}

// A models folder another user owns, or anyone but its owner can write into, is refused before
// any request, in one line saying whose it is and what to do; the owner's group may write into
// it with FACEFUSION_GROUP_WRITABLE=1.
func TestFetchFolder(t *testing.T) {
	srv := newServer(t)
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		mode  os.FileMode
		owner int
		group bool
		want  string // "" for a download
	}{
		{"world-writable", 0o777, 0, false, "is writable by every user (mode 0777)"},
		{"sticky-scratch", 0o777 | os.ModeSticky, 0, false, "is writable by every user (mode 1777)"},
		{"group-writable", 0o775, 0, false, "is writable by its group (mode 0775)"},
		{"group-allowed", 0o775, 0, true, ""},
		{"theirs", 0o755, testenv.Nobody, false, "belongs to user nobody (uid 65534)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.group {
				t.Setenv(safefs.GroupEnv, "1")
			} else {
				t.Setenv(safefs.GroupEnv, "")
			}
			dir := filepath.Join(t.TempDir(), "models")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			os.Chmod(dir, c.mode)
			os.Chown(dir, c.owner, c.owner)
			before := len(srv.requests("good"))
			res, err := fetcher(t).Fetch(ctx, dir, published(srv.url("good")), false)
			if c.want == "" {
				if err != nil || res.State != Downloaded {
					t.Fatalf("%+v %v", res, err)
				}
				landed(t, dir)
				return
			}
			var fe *safefs.FolderError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "models folder "+dir) ||
				!strings.Contains(err.Error(), "--models-dir") || strings.Contains(err.Error(), "\n") {
				t.Errorf("want one line refusing the folder, saying %q: %v", c.want, err)
			}
			if len(srv.requests("good")) != before {
				t.Error("a request was made for a refused folder")
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("the refused folder got %d files", len(ents))
			}
		})
	}
}

// A host that trickles a byte at a time never stalls, but is abandoned once it averages less
// than MinRate over a RateWindow (each try, then the URL), and no file takes longer than
// Deadline; each error names the file, the host, what was measured and the flag that moves
// the bound.
func TestFetchCrawl(t *testing.T) {
	srv := newServer(t)
	// A hang guard: without the bounds a trickle would take days; the context ends it, and the
	// errors asserted below (which name the bound that fired) then fail. How long a bound takes
	// to fire is not asserted: a loaded machine may take longer than the bound's own time.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hostPort := strings.TrimPrefix(srv.URL, "http://")

	t.Run("min-rate", func(t *testing.T) {
		dir := t.TempDir()
		f := &Fetcher{Attempts: 2, Logf: t.Logf, MinRate: 1 << 10, RateWindow: 300 * time.Millisecond}
		_, err := f.Fetch(ctx, dir, published(srv.url("trickle")), false)
		failed(t, err, "fixture.onnx from "+hostPort+" came at ", " bytes/s over the last 300ms, below --download-min-rate 1.0 KiB/s",
			"rerun later to resume from", "--download-min-rate, --download-rate-window or --download-timeout")
		if n := len(srv.requests("trickle")); n != 2 {
			t.Errorf("%d requests, want 2 (a slow try is tried again, resuming)", n)
		}
		notLanded(t, dir, true)
		if got := srv.clientLeftBy("trickle", 2); got != 2 {
			t.Errorf("the client left the trickle %d times, want 2", got)
		}
	})

	t.Run("deadline", func(t *testing.T) {
		dir := t.TempDir()
		f := &Fetcher{Attempts: 2, Logf: t.Logf, MinRate: -1, Deadline: 500 * time.Millisecond}
		_, err := f.Fetch(ctx, dir, published(srv.url("trickle"), srv.url("good")), false)
		failed(t, err, "fixture.onnx from "+hostPort+" not finished within --download-timeout 500ms", "--download-timeout")
		var e *Error
		if errors.As(err, &e) && len(e.Tries) != 1 {
			t.Errorf("%d URLs tried, want 1: past the deadline no other is begun", len(e.Tries))
		}
	})

	// The floor leaves a healthy transfer alone: a window of seconds, as the default's, which no
	// pause of a loaded machine spans.
	t.Run("fast", func(t *testing.T) {
		dir := t.TempDir()
		f := &Fetcher{Logf: t.Logf, MinRate: 1 << 10, RateWindow: 5 * time.Second}
		if res, err := f.Fetch(ctx, dir, published(srv.url("good")), false); err != nil || res.State != Downloaded {
			t.Fatalf("%+v %v", res, err)
		}
		landed(t, dir)
	})
}

// A redirect to a file:// (or any non-HTTP) URL is refused at once, named, and not retried or
// blamed on the network.
func TestFetchFileRedirect(t *testing.T) {
	srv := newServer(t)
	dir := t.TempDir()
	_, err := fetcher(t).Fetch(context.Background(), dir, published(srv.url("fileredirect")), false)
	failed(t, err, "redirects to a non-HTTP URL, \"file:///etc/passwd\"", "does not serve the file at that URL")
	if strings.Contains(err.Error(), "check the network") || strings.Contains(err.Error(), "root:") {
		t.Errorf("blamed on the network, or the file read: %v", err)
	}
	if n := len(srv.requests("fileredirect")); n != 1 {
		t.Errorf("%d requests, want 1: a redirect away from HTTP is not retried", n)
	}
	notLandedAt(t, dir)
	// A redirect loop is the host's answer, not the network's: not retried, not blamed on it.
	_, err = fetcher(t).Fetch(context.Background(), dir, published(srv.url("redirectloop")), false)
	failed(t, err, "redirects more than 10 times (a loop): refused", "does not serve the file at that URL")
	if strings.Contains(err.Error(), "check the network") {
		t.Errorf("a redirect loop blamed on the network: %v", err)
	}
	if n := len(srv.requests("redirectloop")); n != maxRedirects {
		t.Errorf("%d requests, want %d: a loop is followed until the limit, once", n, maxRedirects)
	}
}

// A models folder that is not the user's alone (a site's, read-only: another user's, mode 0755;
// the tests run as root and give it to nobody) holding every file verified is fine: nothing is
// written there and no request made, even for a stale .hash beside a file whose sha256 is
// FaceFusion's. A FIFO at a model's name there is refused without blocking. Only a file that
// must be fetched into it refuses the folder, in one line, before any request.
func TestFetchReadOnlyFolder(t *testing.T) {
	srv := newServer(t)
	ctx := context.Background()
	t.Setenv(safefs.GroupEnv, "")
	dir := filepath.Join(t.TempDir(), "site-models")
	os.Mkdir(dir, 0o755)
	for name, data := range map[string][]byte{"fixture.onnx": model, "fixture.hash": []byte(crc + "\n"), "stale.onnx": model, "stale.hash": []byte("0badc0de\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		testenv.GiveToNobody(t, filepath.Join(dir, name))
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.onnx"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.GiveToNobody(t, filepath.Join(dir, "fifo.onnx"), dir)
	listing := func() string {
		var b strings.Builder
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			st, _ := os.Lstat(filepath.Join(dir, e.Name()))
			b.WriteString(e.Name() + " " + st.ModTime().String() + " " + st.Mode().String() + "\n")
		}
		return b.String()
	}
	before := listing()
	stale := published(srv.url("good"))
	stale.File, stale.HashFile = "stale.onnx", "stale.hash"
	for _, file := range []File{published(srv.url("good")), stale} {
		res, err := fetcher(t).Fetch(ctx, dir, file, false)
		if err != nil || res.State != Present {
			t.Errorf("%s, verified, in a read-only folder: %+v, %v; want it present", file.File, res, err)
		}
	}
	fifo := published(srv.url("good"))
	fifo.File, fifo.HashFile = "fifo.onnx", ""
	done := make(chan error, 1)
	go func() { _, err := fetcher(t).Fetch(ctx, dir, fifo, false); done <- err }()
	select {
	case err := <-done:
		var ke *safefs.KindError
		if !errors.As(err, &ke) {
			t.Errorf("a FIFO at the model's name: %v, want it refused as not a regular file", err)
		}
	case <-time.After(10 * time.Second): // a hang guard: the open must not wait for a writer
		t.Fatal("a FIFO at the model's name blocked the fetch")
	}
	missing := published(srv.url("good"))
	missing.File, missing.HashFile = "missing.onnx", ""
	_, err := fetcher(t).Fetch(ctx, dir, missing, false)
	var fe *safefs.FolderError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "models folder "+dir+" belongs to user nobody") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a missing file in another user's folder: %v, want one line refusing the folder", err)
	}
	if n := len(srv.requests("good")); n != 0 {
		t.Errorf("%d request(s) made for a folder that holds its files or is refused", n)
	}
	if after := listing(); after != before {
		t.Errorf("the read-only folder changed:\n%s\nwas\n%s", after, before)
	}
}
