package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// statusJob writes a job folder as a running 2-rank job leaves it: its manifest (4 chunks of 8
// frames from frame 2, two done), rank 1's journal (a third chunk) and the progress file.
func statusJob(t testing.TB, dir string) *lustre.JobDir {
	t.Helper()
	jd := &lustre.JobDir{Path: dir}
	now := time.Now().UTC()
	m := &lustre.Manifest{Fingerprint: map[string]string{"chunk_frames": "8", "target file contents": "30:ab"}, Target: "in.mp4",
		FrameStart: 2, FrameEnd: 32, ChunkFrames: 8, NumChunks: 4, Encoder: "ffv1",
		Attempts: []lustre.Attempt{{Started: now.Add(-time.Minute), Updated: now, Ranks: 2, Planned: 4, Outcome: lustre.Running}},
		Done: []lustre.Chunk{
			{Chunk: 0, Start: 2, End: 10, Frames: 8, Size: 100, SHA256: strings.Repeat("a", 64), Rank: 0, Attempt: 1, Faces: 3,
				Identity: lustre.IdentitySums{Recognizer: "fr_feature", Every: 4, Faces: 2, After: 1_500_000_000}},
			{Chunk: 3, Start: 26, End: 32, Frames: 6, Size: 90, SHA256: strings.Repeat("b", 64), Rank: 1, Attempt: 1},
		}}
	if err := jd.WriteManifest(m); err != nil {
		t.Fatal(err)
	}
	if err := jd.WriteJournal(1, []lustre.Chunk{{Chunk: 1, Start: 10, End: 18, Frames: 8, Size: 80, Rank: 1, Attempt: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := jd.WriteProgress([]int64{12, 9}); err != nil {
		t.Fatal(err)
	}
	return jd
}

// runBounded runs the binary with args under a 60 s hang guard (a run that blocks fails the
// test; how fast it ends is not asserted) and checks that it ended with exit code code and one
// error line, which it returns.
func runBounded(t *testing.T, code int, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, clitest.Bin, args...)
	cmd.Env = clitest.LaunchEnv(t)
	r := clitest.RunCmd(t, ctx, cmd)
	if r.Code != code || strings.Count(r.Stderr, "\n") != 1 || len(r.Stderr) > 1000 {
		t.Errorf("%s: exit %d, stderr %d bytes: %.1200q; want exit %d and one short line", strings.Join(args, " "), r.Code, len(r.Stderr), r.Stderr, code)
	}
	return r.Stdout + r.Stderr
}

// The real command, fed what a hostile user or a damaged disk leaves: a FIFO where a file is
// read (which a plain read waits on forever, deaf to TERM), a device without end, a sparse
// file of 1 GiB, a link planted by another user (chowned to nobody, uid 65534, as theirs
// would be) to a secret, and a manifest with absurd numbers. Each ends at once with its exit
// code and one line naming the file; the secret's contents are never printed.
func TestBoundedInputsEndInOneLine(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	const secretText = "the-secret-contents-4711"
	secret := filepath.Join(dir, "secret.json")
	os.WriteFile(secret, []byte(`{"version": 1, "target": "`+secretText+`", "attempts": [{"ranks": 1}]}`), 0o600)

	t.Run("status-manifest-fifo", func(t *testing.T) {
		jd := statusJob(t, t.TempDir())
		os.Remove(jd.Manifest())
		syscall.Mkfifo(jd.Manifest(), 0o644)
		if out := runBounded(t, exitInput, "status", jd.Path); !strings.Contains(out, jd.Manifest()+" is a FIFO") {
			t.Errorf("status of a FIFO manifest: %s", out)
		}
	})
	t.Run("status-manifest-link", func(t *testing.T) {
		jd := statusJob(t, t.TempDir())
		os.Remove(jd.Manifest())
		os.Symlink(secret, jd.Manifest())
		testenv.GiveToNobody(t, jd.Manifest())
		if out := runBounded(t, exitInput, "status", jd.Path); !strings.Contains(out, jd.Manifest()+" is a link") || strings.Contains(out, secretText) {
			t.Errorf("status of a planted link: %s", out)
		}
	})
	t.Run("status-absurd-numbers", func(t *testing.T) {
		jd := statusJob(t, t.TempDir())
		data, _ := os.ReadFile(jd.Manifest())
		var m map[string]any
		json.Unmarshal(data, &m)
		m["chunks"] = 1 << 50
		data, _ = json.Marshal(m)
		os.WriteFile(jd.Manifest(), data, 0o644)
		if out := runBounded(t, exitInput, "status", jd.Path); !strings.Contains(out, "manifest "+jd.Manifest()+": chunks is 1125899906842624") {
			t.Errorf("status of absurd numbers: %s", out)
		}
	})
	t.Run("status-huge-report", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out.mp4")
		os.WriteFile(out, []byte("x"), 0o644)
		os.WriteFile(report.Path(out), nil, 0o644)
		os.Truncate(report.Path(out), 1<<30)
		if got := runBounded(t, exitInput, "status", out); !strings.Contains(got, report.Path(out)+" is larger than the 64 MiB") {
			t.Errorf("status of a 1 GiB report: %s", got)
		}
	})
	for _, costs := range []string{"/dev/zero", fifo} {
		if out := runBounded(t, exitInput, "plan", "--ranks", "2", "--frames", "100", "--costs", costs); !strings.Contains(out, "--costs: run report "+costs+" is a") {
			t.Errorf("plan --costs %s: %s", costs, out)
		}
	}
	if out := runBounded(t, exitInput, "plan", "--ranks", "2", "-t", fifo); !strings.Contains(out, fifo+" is a FIFO") {
		t.Errorf("plan -t FIFO: %s", out)
	}
	clip := filepath.Join(dir, "in.mp4")
	os.WriteFile(clip, []byte("x"), 0o644)
	runArgs := []string{"run", "-t", clip, "-o", filepath.Join(dir, "out.mp4"), "--processors", "none"}
	if out := runBounded(t, exitUsage, append(runArgs, "--config-path", fifo)...); !strings.Contains(out, "--config-path: FaceFusion defaults file "+fifo+" is a FIFO") {
		t.Errorf("run --config-path FIFO: %s", out)
	}
	if out := runBounded(t, exitUsage, append(runArgs, "--config", "/dev/zero")...); !strings.Contains(out, "config /dev/zero is a character device") {
		t.Errorf("run --config /dev/zero: %s", out)
	}
	// A target or source that never ends (a FIFO nobody writes, a device) would hold ffprobe
	// and the decoder: refused before either starts, as the input's fault.
	photo := filepath.Join(dir, "face.png")
	os.WriteFile(photo, []byte("x"), 0o644)
	for _, tc := range []struct{ flag, path, want string }{
		{"-t", fifo, "target " + fifo + " is a FIFO"}, {"-t", "/dev/zero", "target /dev/zero is a character device"},
		{"-s", fifo, "source " + fifo + " is a FIFO"}, {"-s", "/dev/zero", "source /dev/zero is a character device"},
	} {
		args := []string{"run", "-t", clip, "-s", photo, "-o", filepath.Join(dir, "out.mp4"), "--processors", "face_swapper"}
		for i := range args {
			if args[i] == tc.flag {
				args[i+1] = tc.path
			}
		}
		if out := runBounded(t, exitInput, args...); !strings.Contains(out, tc.want) {
			t.Errorf("run %s %s: %s", tc.flag, tc.path, out)
		}
	}
}

// FuzzStatus feeds status a job folder's manifest, a journal and the progress file as anything
// at all: it must never panic, and what it prints grows with what it read, never with the
// numbers in it. The seeds are the files of a job as a run writes them.
func FuzzStatus(f *testing.F) {
	seed := statusJob(f, f.TempDir())
	read := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	manifest, journal, progress := read(seed.Manifest()), read(seed.Journal(1)), read(seed.Progress())
	f.Add(manifest, journal, progress)
	f.Add(manifest, []byte("[]"), []byte(`{"frames": []}`))
	f.Add([]byte(strings.Replace(string(manifest), `"chunks": 4`, `"chunks": 4000000000`, 1)), journal, progress)
	f.Add([]byte(strings.Replace(string(manifest), `"attempts": [`, `"attempts": [], "x": [`, 1)), journal, progress)
	f.Fuzz(func(t *testing.T, manifest, journal, progress []byte) {
		jd := &lustre.JobDir{Path: t.TempDir()}
		os.MkdirAll(filepath.Dir(jd.Journal(1)), 0o755)
		os.WriteFile(jd.Manifest(), manifest, 0o644)
		os.WriteFile(jd.Journal(1), journal, 0o644)
		os.WriteFile(jd.Progress(), progress, 0o644)
		var out strings.Builder
		err := cmdStatus([]string{jd.Path}, &out)
		if n := out.Len(); n > 64*(len(manifest)+len(journal)+len(progress))+4096 {
			t.Fatalf("printed %d bytes from %d read", n, len(manifest)+len(journal)+len(progress))
		}
		if err != nil && (len(err.Error()) > 1000 || strings.Contains(err.Error(), "\n")) {
			t.Fatalf("error of %d bytes: %.1200q", len(err.Error()), err)
		}
	})
}
