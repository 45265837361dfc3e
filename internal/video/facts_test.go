package video

import (
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// useFacts points the facts file at a folder of the test's own (cache: "" for a cache folder
// that cannot be written) and forgets what this process read of it.
func useFacts(t *testing.T, cache string) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv(CacheEnv, "")
	facts.mu.Lock()
	facts.read = false
	facts.mu.Unlock()
	t.Cleanup(func() {
		facts.mu.Lock()
		facts.read = false
		facts.mu.Unlock()
	})
}

// FACEFUSION_CACHE_DIR moves the facts file out of $XDG_CACHE_HOME/facefusion, or with off keeps
// none: nothing is written under the cache folder either way.
func TestFactsCacheEnv(t *testing.T) {
	xdg, moved := t.TempDir(), filepath.Join(t.TempDir(), "cache")
	useFacts(t, xdg)
	t.Setenv(CacheEnv, moved)
	rememberFact("k", 1)
	if _, err := os.Stat(filepath.Join(moved, "ffmpeg-facts.json")); err != nil {
		t.Errorf("moved: %v", err)
	}
	t.Setenv(CacheEnv, "off")
	facts.read = false
	rememberFact("k", 2)
	var v int
	if recallFact("k", &v) {
		t.Errorf("with %s=off a fact was recalled: %d", CacheEnv, v)
	}
	if ents, _ := os.ReadDir(xdg); len(ents) > 0 {
		t.Errorf("written under XDG_CACHE_HOME: %v", ents)
	}
}

// The version line is asked of ffmpeg once for a binary: a second ask (another run) reads the
// facts file; another ffmpeg first on PATH (a module swap) or the same path rewritten (a
// reinstall) is asked again; and without a cache folder every ask runs ffmpeg, as before.
func TestVersionFact(t *testing.T) {
	useFacts(t, t.TempDir())
	want, err := exec1(t, "ffmpeg", "-version")
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ = strings.Cut(want, "\n")
	counted, runs := testenv.Counted(t, "ffmpeg")
	saved := FFmpeg
	defer func() { FFmpeg = saved }()
	FFmpeg = counted
	ask := func(what string, wantRuns int) {
		t.Helper()
		line, err := askVersion(context.Background())
		if err != nil || line != strings.TrimSpace(want) {
			t.Fatalf("%s: version %q, %v; want %q", what, line, err, want)
		}
		if n := runs(); n != wantRuns {
			t.Errorf("%s: ffmpeg ran %d time(s), want %d", what, n, wantRuns)
		}
	}
	ask("first ask", 1)
	ask("second ask", 0)
	facts.read = false // another process reads the file afresh
	ask("another run", 0)

	// The same program at the same path, written again (a reinstall): another file.
	script, err := os.ReadFile(counted)
	if err != nil {
		t.Fatal(err)
	}
	tmp := counted + ".new"
	if err := os.WriteFile(tmp, script, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, counted); err != nil {
		t.Fatal(err)
	}
	ask("reinstalled in place", 1)
	ask("reinstalled, asked again", 0)

	// Another ffmpeg first on PATH: the name resolves to another file.
	other, otherRuns := testenv.Counted(t, "ffmpeg")
	FFmpeg = "ffmpeg"
	t.Setenv("PATH", filepath.Dir(other)+string(os.PathListSeparator)+os.Getenv("PATH"))
	if line, err := askVersion(context.Background()); err != nil || line != strings.TrimSpace(want) || otherRuns() != 1 {
		t.Errorf("module swap: version %q, %v, not asked of the new ffmpeg once", line, err)
	}
	FFmpeg = counted

	// No cache folder that can be written: asked every time.
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	useFacts(t, notDir)
	ask("unwritable cache", 1)
	facts.read = false
	ask("unwritable cache, another run", 1)
}

// A passed output check is recalled under its key with the same binaries only: another
// ffprobe, another LD_LIBRARY_PATH or another key is not the same check.
func TestCheckFact(t *testing.T) {
	useFacts(t, t.TempDir())
	carried := Carried{
		Keep: []Carry{{Stream: Stream{Index: 1, Type: "audio", Codec: "pcm_s16le"}, AAC: true}, {Stream: Stream{Index: 3, Type: "subtitle", Codec: "subrip"}, Text: "mov_text"}},
		Drop: []Dropped{{Stream{Index: 2, Type: "data", Codec: "bin_data"}, "codec not currently supported in container"}},
	}
	if _, ok := RecallCheck("k"); ok {
		t.Fatal("a check recalled from an empty cache")
	}
	RememberCheck("k", carried)
	facts.read = false // another run
	if got, ok := RecallCheck("k"); !ok || !reflect.DeepEqual(got, carried) {
		t.Fatalf("recalled %+v, %v; want %+v", got, ok, carried)
	}
	if _, ok := RecallCheck("k2"); ok {
		t.Error("another key's check recalled")
	}
	ld := os.Getenv("LD_LIBRARY_PATH")
	t.Setenv("LD_LIBRARY_PATH", t.TempDir()+string(os.PathListSeparator)+ld)
	if _, ok := RecallCheck("k"); ok {
		t.Error("recalled with another LD_LIBRARY_PATH")
	}
	os.Setenv("LD_LIBRARY_PATH", ld)
	saved := FFprobe
	defer func() { FFprobe = saved }()
	FFprobe, _ = testenv.Counted(t, "ffprobe")
	if _, ok := RecallCheck("k"); ok {
		t.Error("recalled with another ffprobe")
	}
	FFprobe = saved
	if _, ok := RecallCheck("k"); !ok {
		t.Error("not recalled with the binaries it was kept with")
	}
}

// An ffmpeg on PATH that is a shell wrapper (`exec /usr/bin/ffmpeg "$@"`, as Apptainer's and Lmod's
// are) may start another ffmpeg tomorrow with the wrapper unchanged, so nothing is kept about it:
// its version is asked every run and no output check is recalled, and the debug log says why.
func TestWrapperFactsNotKept(t *testing.T) {
	useFacts(t, t.TempDir())
	var log bytes.Buffer
	saved := slog.Default()
	slog.SetDefault(logging.New(&log, logging.Debug).Slog())
	defer slog.SetDefault(saved)
	wrapper, runs := testenv.CountedWrapper(t, "ffmpeg")
	savedMpeg := FFmpeg
	defer func() { FFmpeg = savedMpeg }()
	FFmpeg = "ffmpeg"
	t.Setenv("PATH", filepath.Dir(wrapper)+string(os.PathListSeparator)+os.Getenv("PATH"))
	for i := 1; i <= 2; i++ {
		facts.read = false // another run
		if line, err := askVersion(context.Background()); err != nil || !strings.HasPrefix(line, "ffmpeg version") {
			t.Fatalf("run %d: version %q, %v", i, line, err)
		}
		if n := runs(); n != 1 {
			t.Errorf("run %d: the wrapper ran %d time(s), want 1 (its version asked every run)", i, n)
		}
	}
	RememberCheck("k", Carried{})
	facts.read = false
	if _, ok := RecallCheck("k"); ok {
		t.Error("an output check recalled through a wrapper")
	}
	if got := log.String(); strings.Count(got, wrapper) != 1 || !strings.Contains(got, "a script") {
		t.Errorf("the debug log %q: want one line naming %s as a script", got, wrapper)
	}
}

// The file holds at most maxFacts facts (the oldest are dropped); a damaged one is no facts.
func TestFactsBounded(t *testing.T) {
	cache := t.TempDir()
	useFacts(t, cache)
	for _, damaged := range []string{"null", "{", `{"k": 3}`, ""} {
		if err := os.MkdirAll(filepath.Join(cache, filepath.Dir(FactsFile)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cache, FactsFile), []byte(damaged), 0o600); err != nil {
			t.Fatal(err)
		}
		facts.read = false
		var v int
		if recallFact("k", &v) {
			t.Errorf("a fact recalled from the file %q", damaged)
		}
		rememberFact("k", 7) // no panic, and kept
		facts.read = false
		if !recallFact("k", &v) || v != 7 {
			t.Errorf("over the file %q: a fact not kept", damaged)
		}
	}
	for i := 0; i < maxFacts+5; i++ {
		rememberFact(factKey("bounded", string(rune('a'+i%26)), strings.Repeat("x", i)), i)
	}
	facts.read = false
	facts.mu.Lock()
	loadFacts()
	n := len(facts.m)
	facts.mu.Unlock()
	if n != maxFacts {
		t.Errorf("%d facts kept, want %d", n, maxFacts)
	}
}

// Whatever stands at the facts file's path that this program did not write is neither read nor
// replaced: a FIFO (a hung or hostile cache) does not block the run, a file over maxFactsBytes
// is not read whole, and neither is replaced by a new fact.
func TestFactsFileNotOursIsLeftAlone(t *testing.T) {
	cache := t.TempDir()
	useFacts(t, cache)
	path := filepath.Join(cache, FactsFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	go func() {
		facts.read = false
		var v int
		ok := recallFact("k", &v)
		rememberFact("k", 7)
		done <- ok
	}()
	select {
	case ok := <-done:
		if ok {
			t.Error("a fact recalled from a FIFO")
		}
	case <-time.After(20 * time.Second):
		// Release the blocked reader (a writer opens and closes the FIFO) until it is done, so
		// that the test ends.
		for released := false; !released; {
			if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			select {
			case <-done:
				released = true
			case <-time.After(100 * time.Millisecond):
			}
		}
		t.Fatal("reading the facts file blocked on a FIFO (a writer never came)")
	}
	if st, err := os.Lstat(path); err != nil || st.Mode().Type() != fs.ModeNamedPipe {
		t.Errorf("the FIFO at the facts path was replaced: %v, %v", st, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	// A large file: valid JSON that holds the fact, but larger than any facts file written here.
	big := `{"k": {"value": 5, "written": 1}, "pad": {"value": "` + strings.Repeat("x", maxFactsBytes) + `", "written": 1}}`
	if err := os.WriteFile(path, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	facts.read = false
	var v int
	if recallFact("k", &v) {
		t.Errorf("a fact recalled from a %d-byte file (over %d)", len(big), maxFactsBytes)
	}
}

// exec1 runs a tool and returns its stdout.
func exec1(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	out, err := runTool(context.Background(), testenv.Tool(t, name), args...)
	return string(out), err
}
