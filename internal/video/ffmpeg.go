package video

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/fault"
)

// The programs run; cmd may point them elsewhere once at start-up (a site module's ffmpeg).
var (
	FFmpeg  = "ffmpeg"
	FFprobe = "ffprobe"
)

// threads is the -threads of every ffmpeg that decodes or encodes frames (0: ffmpeg's own
// choice, one per CPU it may run on). A rank is one process and its CPU budget is decided once
// (rank.DecideCPUs), so it is set once at start-up, as FFmpeg is, rather than carried by every
// caller of every decoder and encoder.
var threads atomic.Int32

// SetThreads sets the threads of every later ffmpeg decoder, encoder and filter graph; 0
// leaves them to ffmpeg.
func SetThreads(n int) { threads.Store(int32(max(0, n))) }

// threadArgs is an ffmpeg decoder's (before -i) or encoder's (after the input) thread count,
// and the filter graph's, which -threads does not cover; nothing when unset.
func threadArgs() []string {
	n := threads.Load()
	if n <= 0 {
		return nil
	}
	v := strconv.Itoa(int(n))
	return []string{"-threads", v, "-filter_threads", v}
}

// ffmpegArgs starts every ffmpeg command line: never read the terminal (a batch job has none,
// and a stray keypress must not stop an encode), print only errors, and no banner.
func ffmpegArgs(extra ...string) []string {
	return append([]string{"-nostdin", "-hide_banner", "-loglevel", "error"}, extra...)
}

// mediaPath names a file so that ffmpeg never reads it as an option ("-x.mp4") or a protocol
// ("a:b.mp4").
func mediaPath(path string) string { return "file:" + path }

// fdOutput is the name under which ffmpeg opens the first of exec.Cmd.ExtraFiles: opening it
// reopens that very file (its inode), whatever its name in its folder has become since. The
// file protocol seeks in it as in any file (the MP4 muxer's index), which pipe:3 would not.
const fdOutput = "/dev/fd/3"

// stderrTail keeps the last bytes a child wrote to stderr, for error messages.
type stderrTail struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 4096

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailBytes {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailBytes:]...)
	}
	return len(p), nil
}

// String is the last few lines on one line, so an error stays one line.
func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var lines []string
	for _, l := range strings.Split(string(t.buf), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > 4 {
		lines = lines[len(lines)-4:]
	}
	s := strings.Join(lines, " | ")
	if len(s) > 600 {
		s = "…" + s[len(s)-600:]
	}
	return s
}

// command builds a child that dies with ctx and whose stderr tail is kept.
func command(ctx context.Context, prog string, args []string) (*exec.Cmd, *stderrTail) {
	cmd := exec.CommandContext(ctx, prog, args...)
	if path, err := exec.LookPath(prog); err == nil && cmd.Err == nil {
		// Slurm's and mpirun's SIGUSR1 reach every process of a rank, and ffmpeg has no handler
		// for it: it would die, and a stop could not finish the chunk in flight. A shell that
		// ignores it execs the tool, which keeps the ignore; the tool's lifetime is this
		// process's (ctx kills it, and its pipes close with us). A tool not found still fails
		// as before, when it is started.
		cmd = exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", `trap '' USR1; exec "$0" "$@"`, path}, args...)...)
	}
	return withTail(cmd)
}

// withTail keeps cmd's stderr tail.
func withTail(cmd *exec.Cmd) (*exec.Cmd, *stderrTail) {
	tail := &stderrTail{}
	cmd.Stderr = tail
	// A killed child's grandchildren could hold the stderr pipe open; don't wait for them forever.
	cmd.WaitDelay = 5 * time.Second
	return cmd, tail
}

// exitError turns a failed child into one line: what ran, how it ended, what it said.
func exitError(ctx context.Context, prog string, err error, tail *stderrTail) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s stopped: %w", filepath.Base(prog), ctx.Err())
	}
	// Not started at all (not on PATH, or a path to nothing): not the file's fault whatever
	// the caller was doing; the environment lacks the tool.
	var ee *exec.Error
	var pe *fs.PathError
	if errors.As(err, &ee) {
		return fault.AsEnvironment(fmt.Errorf("%s cannot be started (%v): install ffmpeg (apt-get install ffmpeg) or put it on PATH", prog, ee.Err))
	}
	if errors.As(err, &pe) {
		return fault.AsEnvironment(fmt.Errorf("%s cannot be started (%v): install ffmpeg (apt-get install ffmpeg) or put it on PATH", prog, pe.Err))
	}
	msg := tail.String()
	if msg == "" {
		msg = "no message"
	}
	return fault.RoomSaid(fmt.Errorf("%s failed (%v): %s", filepath.Base(prog), err, msg), msg)
}

// runTool runs a short child to completion and returns its stdout.
func runTool(ctx context.Context, prog string, args ...string) ([]byte, error) {
	cmd, tail := command(ctx, prog, args)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		return nil, exitError(ctx, prog, err, tail)
	}
	return out.Bytes(), nil
}

// writeFailed reports whether ffmpeg's words (stderr) say that its output was not all written,
// though it exited 0: "Error writing trailer", "Error closing file", a failed write, a full
// file system or quota (fault.RoomWords).
func writeFailed(said string) bool {
	if fault.RoomWords(said) != "" {
		return true
	}
	s := strings.ToLower(said)
	for _, w := range []string{"error writing trailer", "error closing file", "input/output error"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// muxerFor is the ffmpeg muxer for an output path. Outputs are written under a temporary name
// (x.mp4.tmp) and renamed by the caller, so the format is named explicitly rather than left to
// ffmpeg's guess from the last extension.
func muxerFor(path string) string {
	p := strings.ToLower(path)
	for _, suffix := range []string{".tmp", ".part", ".partial"} {
		p = strings.TrimSuffix(p, suffix)
	}
	switch filepath.Ext(p) {
	case ".mp4", ".m4v":
		return "mp4"
	case ".mov":
		return "mov"
	case ".mkv":
		return "matroska"
	case ".webm":
		return "webm"
	case ".avi":
		return "avi"
	case ".ts":
		return "mpegts"
	case ".nut":
		return "nut"
	}
	return ""
}

// outputArgs names the muxer (when known), moves the mp4 index to the front so players can
// start before the download ends, and overwrites a stale temporary file from an earlier try.
func outputArgs(path string, faststart bool) []string {
	var args []string
	m := muxerFor(path)
	if faststart && (m == "mp4" || m == "mov") {
		args = append(args, "-movflags", "+faststart")
	}
	if m != "" {
		args = append(args, "-f", m)
	}
	return append(args, "-y", mediaPath(path))
}

// Version is the first line of `ffmpeg -version` ("ffmpeg version 5.1.6-0+deb12u1 …"): another
// ffmpeg (a cluster module, a node image) may encode other bytes from the same frames. It is
// asked once a process, and only when the facts file (facts.go) has no answer for this ffmpeg
// binary; PrefetchVersion asks early, in the background.
func Version(ctx context.Context) (string, error) {
	PrefetchVersion()
	select {
	case <-version.done:
		return version.line, version.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// version is the one `ffmpeg -version` of this process.
var version = struct {
	once sync.Once
	done chan struct{}
	line string
	err  error
}{done: make(chan struct{})}

// PrefetchVersion starts `ffmpeg -version` now, while the caller does other work: the answer
// is needed only later (the resume fingerprint), and each ffmpeg start costs a noticeable part
// of a second.
func PrefetchVersion() {
	version.once.Do(func() {
		go func() {
			defer close(version.done)
			version.line, version.err = askVersion(context.Background())
		}()
	})
}

// askVersion is the version line as the facts file keeps it for this ffmpeg binary, else as
// `ffmpeg -version` says it (and then kept).
func askVersion(ctx context.Context) (string, error) {
	var line string
	id, idErr := binaryIdentity(FFmpeg)
	if idErr == nil && recallFact(factKey(versionFact, id), &line) && line != "" {
		return line, nil
	}
	out, err := runTool(ctx, FFmpeg, "-version")
	if err != nil {
		return "", err
	}
	line, _, _ = strings.Cut(string(out), "\n")
	line = strings.TrimSpace(line)
	if idErr == nil && line != "" {
		rememberFact(factKey(versionFact, id), line)
	}
	return line, nil
}
