// Package clitest runs the facefusion command for end-to-end tests: Main builds the binary
// once per test binary, Run and RunIn run it, and the rest make fixtures (clips with a face)
// and check what a run left (frames, probes, reports, metrics, batch summaries). The tests of
// cmd/facefusion and of its end-to-end packages (cmd/facefusion/e2e/...) share it, so that
// go test runs those packages side by side.
package clitest

import (
	"bytes"
	"context"
	"crypto/md5"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// Bin is the facefusion binary under test, built by Main from BuiltAt, HEAD then.
var Bin, BuiltAt string

// shortMain is set by Main under go test -short: running the binary is the full tier, so Main
// builds none, and the runners and the clips made for them skip the test.
var shortMain bool

// fullTier skips t under go test -short: each run of the binary is the full tier.
func fullTier(t testing.TB) {
	t.Helper()
	testenv.Full(t, "runs the facefusion binary")
}

// Main builds the facefusion binary, runs the tests and removes the test binary's temporary
// folder: call it from the package's TestMain. The binary is built into a folder the packages
// of this checkout share (sharedBin), where go build relinks it only when what it is built from
// changed (sources, HEAD, a dirty tree), so the end-to-end packages that go test runs side by
// side pay for one link, not one each; each test binary runs its own hard link to the file it
// built, so a later package's relink (a commit made meanwhile) never changes its binary.
func Main(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		shortMain = true
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "facefusion-bin-")
	if err != nil {
		panic(err)
	}
	shared, unlock, err := sharedBin()
	if err != nil {
		fmt.Fprintln(os.Stderr, "the shared build folder:", err)
		os.Exit(1)
	}
	built := filepath.Join(shared, "facefusion")
	// The commit the binary records: HEAD now, read beside the build (a commit made while the
	// tests run must not look like a wrong version line).
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "git rev-parse HEAD:", err)
		os.Exit(1)
	}
	BuiltAt = strings.TrimSpace(string(head))
	// -buildvcs=auto: the binary knows its commit (TestVersion) even where GOFLAGS says false.
	build := exec.Command("go", "build", "-buildvcs=auto", "-o", built, "github.com/facefusion-hpc/facefusion/cmd/facefusion")
	build.Stderr = os.Stderr
	err = build.Run()
	Bin = filepath.Join(dir, "facefusion")
	if err == nil && os.Link(built, Bin) != nil { // under the lock: the file this build made
		err = copyFile(built, Bin) // another file system, or none that links
	}
	unlock()
	if err != nil {
		fmt.Fprintln(os.Stderr, "building facefusion:", err)
		os.Exit(1)
	}
	// The facts the binary keeps about ffmpeg (video.FactsFile) go into this test binary's own
	// folder, not the user's cache: the runs of one package share them, and nothing a test
	// depends on outlives it. Set after the build, whose cache is under the same variable.
	if err := os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache")); err != nil {
		panic(err)
	}
	os.Unsetenv(video.CacheEnv) // a user's own would move the facts out of this folder
	code := m.Run()
	os.RemoveAll(dir) // made by MkdirTemp above (mode 0700): only this test binary wrote in it
	os.Exit(code)
}

// copyFile copies the executable from to a new file to, created exclusively (never through a
// link at its name).
func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return writeNew(to, data, 0o755, false)
}

// writeNew writes data into the file at path without following a link there (a planted link is
// an error, not a place to write through): a file it creates, exclusively, or with replace the
// regular file a test made there before.
func writeNew(path string, data []byte, mode os.FileMode, replace bool) error {
	flags := os.O_WRONLY | os.O_CREATE | syscall.O_NOFOLLOW
	if replace {
		flags |= os.O_TRUNC
	} else {
		flags |= os.O_EXCL
	}
	f, err := os.OpenFile(path, flags, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// sharedBin is this checkout's build folder for the binary, in the system's temp folder (keyed
// by the source tree's path and the user), locked against another test binary's build until
// unlock. Nothing in it is removed: go build keeps the binary up to date, and a later run of the
// tests finds it there.
func sharedBin() (dir string, unlock func(), err error) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	dir = filepath.Join(os.TempDir(), fmt.Sprintf("facefusion-clitest-%d-%x", os.Getuid(), md5.Sum([]byte(root))))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return "", nil, err
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		lock.Close()
		return "", nil, err
	}
	return dir, func() { lock.Close() }, nil
}

// Result is how a run of the binary ended: its exit code and what it printed.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run runs the binary with the fetched cache as its home.
func Run(t testing.TB, args ...string) Result {
	t.Helper()
	return RunIn(t, "", args...)
}

// RunIn runs the binary in the working folder dir ("": the test's), with the fetched
// cache as its home.
func RunIn(t testing.TB, dir string, args ...string) Result {
	t.Helper()
	cmd := Command(t, args...)
	cmd.Dir = dir
	return Exec(t, cmd)
}

// Exec runs cmd (Command's, with what the test added) to its end.
func Exec(t testing.TB, cmd *exec.Cmd) Result {
	t.Helper()
	fullTier(t)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running facefusion: %v", err)
	}
	return Result{code, out.String(), errb.String()}
}

// Command is the binary with args and the fetched cache as its home, not yet started.
func Command(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	fullTier(t)
	cmd := exec.Command(Bin, args...)
	cmd.Env = append(os.Environ(), "FACEFUSION_HOME="+filepath.Dir(testenv.Cache(t)))
	return cmd
}

// FFmpeg runs ffmpeg with args and fails the test on error.
func FFmpeg(t testing.TB, args ...string) {
	t.Helper()
	if shortMain {
		fullTier(t) // a fixture for the binary: made for nothing in the fast tier
	}
	testenv.Tool(t, "ffmpeg")
	cmd := exec.Command("ffmpeg", append([]string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// FaceClip makes a w×h clip of n frames at rate fps in which astronaut.png's face moves, with
// a tone as audio; extra are more output options (e.g. B-frames). A clip of the same
// arguments is made once a test binary and copied to path (the file is the same bytes: ffmpeg
// makes it the same way every time), so that tests which each want their own clip of a
// common kind do not each pay for an ffmpeg run.
func FaceClip(t *testing.T, path string, w, h, n int, fps string, extra ...string) {
	t.Helper()
	if shortMain {
		fullTier(t) // as FFmpeg
	}
	if Bin == "" { // no Main: no folder to keep clips in beyond the test
		makeFaceClip(t, path, w, h, n, fps, extra...)
		return
	}
	key := fmt.Sprintf("%dx%d-%d-%s-%q%s", w, h, n, fps, extra, filepath.Ext(path))
	v, _ := faceClips.LoadOrStore(key, &faceClip{})
	c := v.(*faceClip)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.path == "" {
		made := filepath.Join(filepath.Dir(Bin), fmt.Sprintf("clip-%x%s", md5.Sum([]byte(key)), filepath.Ext(path)))
		makeFaceClip(t, made, w, h, n, fps, extra...)
		c.path = made
	}
	data, err := os.ReadFile(c.path)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeNew(path, data, 0o644, true); err != nil {
		t.Fatal(err)
	}
}

// faceClips are the clips FaceClip made in this test binary, by their arguments.
var faceClips sync.Map

type faceClip struct {
	mu   sync.Mutex
	path string // "" until made
}

func makeFaceClip(t *testing.T, path string, w, h, n int, fps string, extra ...string) {
	t.Helper()
	face := testenv.Sample(t, "astronaut.png")
	side := h * 4 / 5
	filter := fmt.Sprintf("[0:v]crop=250:250:100:20,scale=%d:%d[f];[1:v][f]overlay=x='(W-w)/2+(W-w)/3*sin(n/9)':y='(H-h)/2':eval=frame:shortest=1,format=yuv420p[v]", side, side)
	args := []string{"-loop", "1", "-framerate", fps, "-i", face,
		"-f", "lavfi", "-i", fmt.Sprintf("color=c=0x28313d:s=%dx%d:r=%s", w, h, fps),
		"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
		"-filter_complex", filter, "-map", "[v]", "-map", "2:a", "-frames:v", fmt.Sprint(n),
		"-c:v", "libx264", "-preset", "ultrafast", "-crf", "16", "-c:a", "aac", "-shortest"}
	FFmpeg(t, append(append(args, extra...), path)...)
}

// FrameHashes is ffmpeg's framemd5 of the video stream decoded to rgb24, one hash a frame.
func FrameHashes(t *testing.T, path string, extra ...string) []string {
	t.Helper()
	args := append([]string{"-nostdin", "-loglevel", "error", "-i", path}, extra...)
	args = append(args, "-map", "0:v:0", "-pix_fmt", "rgb24", "-f", "framemd5", "-")
	out, err := exec.Command("ffmpeg", args...).Output()
	if err != nil {
		t.Fatalf("framemd5 of %s: %v", path, err)
	}
	return frameLines(string(out))
}

// FrameHashesOf is FrameHashes of each path (no extra options), from one ffmpeg: a process
// start costs 0.1–0.3 CPU-s here, as much as hashing a tiny clip's frames.
func FrameHashesOf(t *testing.T, paths ...string) [][]string {
	t.Helper()
	dir := t.TempDir()
	args := []string{"-nostdin", "-loglevel", "error"}
	for _, p := range paths {
		args = append(args, "-i", p)
	}
	for i := range paths {
		args = append(args, "-map", fmt.Sprintf("%d:v:0", i), "-pix_fmt", "rgb24", "-f", "framemd5", filepath.Join(dir, fmt.Sprintf("%d.md5", i)))
	}
	if out, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
		t.Fatalf("framemd5 of %s: %v\n%s", strings.Join(paths, ", "), err, out)
	}
	all := make([][]string, len(paths))
	for i := range paths {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.md5", i)))
		if err != nil {
			t.Fatal(err)
		}
		if all[i] = frameLines(string(b)); len(all[i]) == 0 {
			t.Fatalf("framemd5 of %s: no frames", paths[i])
		}
	}
	return all
}

// frameLines are the hashes of framemd5's lines, one a frame.
func frameLines(out string) []string {
	var hs []string
	for _, line := range strings.Split(out, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, ",")
		hs = append(hs, strings.TrimSpace(f[len(f)-1]))
	}
	return hs
}

// FrameHashesAudio is FrameHashes and whether path has an audio stream, from one ffmpeg run
// (the audio packets copied, not decoded): what CheckFrames asks of every output, for one
// process start instead of three (the probe of a Matroska file reads its packets too).
func FrameHashesAudio(t *testing.T, path string) (hashes []string, audio bool) {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-i", path, "-map", "0:v:0", "-map", "0:a?",
		"-c:a", "copy", "-pix_fmt", "rgb24", "-f", "framemd5", "-").Output()
	if err != nil {
		t.Fatalf("framemd5 of %s: %v", path, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "#media_type ") && strings.HasSuffix(line, ": audio") {
			audio = true
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// stream, dts, pts, duration, size, hash: the video is output stream 0.
		f := strings.Split(line, ",")
		if strings.TrimSpace(f[0]) == "0" {
			hashes = append(hashes, strings.TrimSpace(f[len(f)-1]))
		}
	}
	return hashes, audio
}

func FileMD5(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", md5.Sum(b))
}

func MustNotExist(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		t.Errorf("%s exists after a failed run", path)
	}
	// and no temp file was left beside it
	ents, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "."+strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))) {
			t.Errorf("temporary file %s left beside the output", e.Name())
		}
	}
}

// Probe is ffprobe's view of path (internal/video's).
func Probe(t *testing.T, path string) *video.Info {
	t.Helper()
	info, err := video.Probe(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// ReadFile is the file's text, empty when it cannot be read (a log not yet written).
func ReadFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
