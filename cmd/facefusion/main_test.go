package main

import (
	"bytes"
	"crypto/md5"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// The end-to-end tests run one at a time, except four marked t.Parallel, which run two at a
// time after the rest (-parallel defaults to the 2 cores): the two Slurm tests among them
// mostly wait (Slurm's scheduling, paused ranks, requeues, their own clock) while the two rank
// matrices keep the cores busy (7 min 51 s for make test against 8 min 39 s all serial).
// Marking the pause-and-kill tests as well made it slower (9 min 26 s). The Slurm tests never
// overlap: their clusters take turns (slurmtest's lock file), and the third, TestBatchSlurm,
// runs with the serial tests: a Slurm test waiting for the lock holds a parallel slot, and with
// both slots held so, the lock holder's parallel subtests never got one (a deadlock).

// bin is the facefusion binary under test, built once by TestMain from builtAt, HEAD then.
var bin, builtAt string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "facefusion-bin-")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "facefusion")
	// The commit the binary records: HEAD now, read beside the build (a commit made while the
	// tests run must not look like a wrong version line).
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "git rev-parse HEAD:", err)
		os.Exit(1)
	}
	builtAt = strings.TrimSpace(string(head))
	// -buildvcs=auto: the binary knows its commit (TestVersion) even where GOFLAGS says false.
	build := exec.Command("go", "build", "-buildvcs=auto", "-o", bin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building facefusion:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

// facefusion runs the binary with the fetched cache as its home.
func facefusion(t testing.TB, args ...string) result {
	t.Helper()
	return facefusionIn(t, "", args...)
}

// facefusionIn runs the binary in the working folder dir ("": the test's), with the fetched
// cache as its home.
func facefusionIn(t testing.TB, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FACEFUSION_HOME="+filepath.Dir(testenv.Cache(t)))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running facefusion: %v", err)
	}
	return result{code, out.String(), errb.String()}
}

// ffmpeg runs ffmpeg with args and fails the test on error.
func ffmpeg(t testing.TB, args ...string) {
	t.Helper()
	testenv.Tool(t, "ffmpeg")
	cmd := exec.Command("ffmpeg", append([]string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// faceClip makes a w×h clip of n frames at rate fps in which astronaut.png's face moves, with
// a tone as audio; extra are more output options (e.g. B-frames).
func faceClip(t *testing.T, path string, w, h, n int, fps string, extra ...string) {
	t.Helper()
	face := testenv.Sample(t, "astronaut.png")
	side := h * 4 / 5
	filter := fmt.Sprintf("[0:v]crop=250:250:100:20,scale=%d:%d[f];[1:v][f]overlay=x='(W-w)/2+(W-w)/3*sin(n/9)':y='(H-h)/2':eval=frame:shortest=1,format=yuv420p[v]", side, side)
	args := []string{"-loop", "1", "-framerate", fps, "-i", face,
		"-f", "lavfi", "-i", fmt.Sprintf("color=c=0x28313d:s=%dx%d:r=%s", w, h, fps),
		"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
		"-filter_complex", filter, "-map", "[v]", "-map", "2:a", "-frames:v", fmt.Sprint(n),
		"-c:v", "libx264", "-preset", "ultrafast", "-crf", "16", "-c:a", "aac", "-shortest"}
	ffmpeg(t, append(append(args, extra...), path)...)
}

// frameHashes is ffmpeg's framemd5 of the video stream decoded to rgb24, one hash a frame.
func frameHashes(t *testing.T, path string, extra ...string) []string {
	t.Helper()
	args := append([]string{"-nostdin", "-loglevel", "error", "-i", path}, extra...)
	args = append(args, "-map", "0:v:0", "-pix_fmt", "rgb24", "-f", "framemd5", "-")
	out, err := exec.Command("ffmpeg", args...).Output()
	if err != nil {
		t.Fatalf("framemd5 of %s: %v", path, err)
	}
	var hs []string
	for _, line := range strings.Split(string(out), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, ",")
		hs = append(hs, strings.TrimSpace(f[len(f)-1]))
	}
	return hs
}

func fileMD5(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", md5.Sum(b))
}

func mustNotExist(t *testing.T, path string) {
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
