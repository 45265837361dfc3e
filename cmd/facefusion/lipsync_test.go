package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// lip_syncer: a source audio ffmpeg cannot read stops the run before the first frame with one
// line naming it (bad input), writes no output and leaves no job folder; a readable one runs.
func TestLipSyncSourceAudio(t *testing.T) {
	testenv.Full(t, "runs the binary")
	work := t.TempDir()
	models := filepath.Join(work, "models")
	if err := os.Mkdir(models, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"blazeface_front_128.onnx", "blazeface_back_256.onnx", "shape_predictor_68_face_landmarks.dat"} {
		if err := os.Symlink(testenv.Model(t, n), filepath.Join(models, n)); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"wav2lip_gan_96", "kim_vocal_2"} {
		b, err := fixtures.Model(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := fixtures.WriteFile(filepath.Join(models, n+".onnx"), b); err != nil {
			t.Fatal(err)
		}
	}
	clip := testenv.CloseUpClipFrames(t, "grace_hopper.png", 6)
	bad := filepath.Join(work, "voice.wav")
	if err := os.WriteFile(bad, []byte("not a wave file"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(work, "out.mp4")
	run := func(voice string) clitest.Result {
		return clitest.Run(t, "run", "-s", voice, "-t", clip, "-o", out, "--models-dir", models, "--processors", "lip_syncer",
			"--log-level", "error", "--job-dir", filepath.Join(work, "jobs"))
	}
	r := run(bad)
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	if r.Code != exitInput || len(lines) != 1 || !strings.Contains(lines[0], bad) || !strings.Contains(lines[0], "source audio") {
		t.Errorf("a corrupt source audio: exit %d, want %d with one line naming it:\n%s", r.Code, exitInput, r.Stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused run wrote the output")
	}
	if left, _ := filepath.Glob(filepath.Join(work, "jobs", "*")); len(left) > 0 {
		t.Errorf("a refused run left %v", left)
	}
	good := filepath.Join(work, "good.wav")
	if b, err := exec.Command(testenv.Tool(t, "ffmpeg"), "-v", "error", "-f", "lavfi", "-i", "sine=frequency=200:duration=0.5", good).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, b)
	}
	if r := run(good); r.Code != 0 {
		t.Errorf("a readable source audio: exit %d: %s", r.Code, r.Stderr)
	}
}

// lip_syncer with a voice past 87 s: rank 0 resamples it through transforms on disk, in a
// scratch folder of its own under --temp-path that is there while it runs and gone after, and
// the run ends with the lips synced; an info line says why rank 0 is quiet meanwhile. (The
// transform's numbers are internal/audio's tests'; this is the binary's path to them: 8-14 s
// on 2 loaded cores, most of it the voice extractor.)
func TestLipSyncLongVoice(t *testing.T) {
	testenv.Full(t, "runs the binary on an 88 s voice")
	models := clitest.FixtureModels(t)
	work := t.TempDir()
	clip, voice, out, temp := filepath.Join(work, "clip.mp4"), filepath.Join(work, "voice.wav"), filepath.Join(work, "out.mp4"), filepath.Join(work, "temp")
	clitest.FaceClip(t, clip, 160, 120, 2, "25")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "sine=frequency=300:sample_rate=48000:duration=88", "-ac", "2", voice)
	if err := os.Mkdir(temp, 0o755); err != nil {
		t.Fatal(err)
	}
	done, seen := make(chan struct{}), make(chan bool, 1)
	go func() { // the scratch folder, looked for while the binary runs
		found := false
		for !found {
			select {
			case <-done:
				seen <- false
				return
			case <-time.After(20 * time.Millisecond):
			}
			found, _ = filepath.Match("facefusion-resample-*", firstEntry(temp))
		}
		seen <- true
	}()
	r := clitest.Run(t, "run", "-s", voice, "-t", clip, "-o", out, "--models-dir", models, "--processors", "lip_syncer",
		"--temp-path", temp, "--log-level", "info", "--job-dir", filepath.Join(work, "jobs"))
	close(done)
	if r.Code != 0 {
		t.Fatalf("an 88 s voice: exit %d: %s", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "] rank 0: lip_syncer: "+voice+"'s voice is separated (kim_vocal_2)") {
		t.Errorf("no info line before the voice's minutes:\n%s", r.Stderr)
	}
	if !<-seen {
		t.Error("no facefusion-resample-* folder appeared in --temp-path: the voice was not resampled on disk there")
	}
	if left, err := os.ReadDir(temp); err != nil || len(left) != 0 {
		t.Errorf("--temp-path holds %v after the run (%v)", left, err)
	}
	if in, got := clitest.FrameHashes(t, clip), clitest.FrameHashes(t, out); len(got) != len(in) || got[0] == in[0] {
		t.Errorf("the output's frames %v are the target's %v: the lips were not synced", got, in)
	}
}

// firstEntry is the name of one entry of dir, "" when it has none.
func firstEntry(dir string) string {
	if e, err := os.ReadDir(dir); err == nil && len(e) > 0 {
		return e[0].Name()
	}
	return ""
}

// lip_syncer's resume: rank 0's voice analysis, kept in the job folder once done, is read back
// by a resume (the voice extractor does not run again: its info line is not said) and makes the
// frames an uninterrupted run makes; a damaged file is analysed again with one warning, with
// the same frames; another voice is still another job, refused before its analysis, the file
// left as it was.
func TestLipSyncResumeKeepsTheVoice(t *testing.T) {
	testenv.Full(t, "runs the binary five times")
	models := clitest.FixtureModels(t)
	work := t.TempDir()
	clip, voice := filepath.Join(work, "clip.mp4"), filepath.Join(work, "voice.wav")
	clitest.FaceClip(t, clip, 160, 120, 4, "25")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "sine=frequency=300:sample_rate=16000:duration=1", voice)
	args := func(voice, out string) []string {
		return []string{"run", "-s", voice, "-t", clip, "-o", out, "--models-dir", models, "--processors", "lip_syncer",
			"--output-video-encoder", "ffv1", "--chunk-frames", "2", "--log-level", "info"}
	}
	const extracted, reused, ignored = "'s voice is separated (kim_vocal_2)", "lip_syncer: the voice analysis of an earlier attempt is reused from", "is not used: damaged"
	ref := filepath.Join(work, "ref.mkv")
	if r := clitest.Run(t, args(voice, ref)...); r.Code != 0 {
		t.Fatalf("the uninterrupted run: exit %d: %s", r.Code, r.Stderr)
	}
	want := clitest.FrameHashes(t, ref)

	resumed := func(name string, damage func(path string)) string {
		out := filepath.Join(work, name+".mkv")
		clitest.KilledAt(t, "chunk-1", args(voice, out))
		cache := filepath.Join(out+".job", "voice.bin")
		if _, err := os.Stat(cache); err != nil {
			t.Fatalf("%s: no voice analysis kept in the job folder after chunk 0: %v", name, err)
		}
		if damage != nil {
			damage(cache)
		}
		r := clitest.Run(t, args(voice, out)...)
		if r.Code != 0 {
			t.Fatalf("%s: the resume: exit %d: %s", name, r.Code, r.Stderr)
		}
		if got := clitest.FrameHashes(t, out); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the resumed output's frames %v, want the uninterrupted run's %v", name, got, want)
		}
		return r.Stderr
	}
	if log := resumed("kept", nil); !strings.Contains(log, reused) || strings.Contains(log, extracted) || strings.Contains(log, "is not used") {
		t.Errorf("a resume after the voice analysis analysed it again:\n%s", log)
	}

	log := resumed("damaged", func(path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)-9] ^= 1
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	})
	if strings.Count(log, ignored) != 1 || !strings.Contains(log, extracted) || strings.Contains(log, reused) {
		t.Errorf("a damaged voice analysis: want one warning and the voice analysed again:\n%s", log)
	}

	out := filepath.Join(work, "other.mkv")
	clitest.KilledAt(t, "chunk-1", args(voice, out))
	cache := filepath.Join(out+".job", "voice.bin")
	before := clitest.FileMD5(t, cache)
	other := filepath.Join(work, "other.wav")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "sine=frequency=700:sample_rate=16000:duration=1", other)
	// Refused before the voice analysis, which would cost a long voice minutes.
	if r := clitest.Run(t, args(other, out)...); r.Code == 0 || !strings.Contains(r.Stderr, "source file contents changed") || strings.Contains(r.Stderr, extracted) {
		t.Errorf("another voice: exit %d, want refused as another job before its voice is analysed:\n%s", r.Code, r.Stderr)
	}
	if got := clitest.FileMD5(t, cache); got != before {
		t.Error("a refused run changed the job's voice analysis")
	}
}

// A stop after rank 0 saved its voice analysis, before any chunk, is progress: exit 75 with a
// line that says the analysis is kept; the requeue reuses it, and one that again finishes no
// chunk is not requeued (76): no requeue without progress. The job then finishes.
func TestLipSyncStopAfterTheVoiceRequeues(t *testing.T) {
	testenv.Full(t, "runs the binary three times")
	models := clitest.FixtureModels(t)
	work := t.TempDir()
	clip, voice, out := filepath.Join(work, "clip.mp4"), filepath.Join(work, "voice.wav"), filepath.Join(work, "out.mkv")
	clitest.FaceClip(t, clip, 160, 120, 4, "25")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "sine=frequency=300:sample_rate=16000:duration=1", voice)
	argv := []string{clitest.Bin, "run", "-s", voice, "-t", clip, "-o", out, "--models-dir", models, "--processors", "lip_syncer",
		"--output-video-encoder", "ffv1", "--chunk-frames", "2", "--log-level", "info"}
	stopped := func(attempt string, want int, says string) {
		t.Helper()
		// One frame of chunk 0 written: a SIGUSR1 with no Slurm clock discards the chunk.
		p := clitest.StartPaused(t, "frames-1", argv...)
		p.Cmd.Process.Signal(syscall.SIGUSR1)
		if code := p.Wait(t); code != want || !strings.Contains(p.Output(), says) {
			t.Fatalf("%s: exit %d, want %d saying %q:\n%s", attempt, code, want, says, p.Output())
		}
	}
	stopped("the first attempt", fault.ExitCheckpointed, "lip_syncer's voice analysis is kept in "+filepath.Join(out+".job", "voice.bin"))
	stopped("the requeue", fault.ExitNoRequeue, "this attempt finished no new chunk")
	if r := clitest.Run(t, argv[1:]...); r.Code != 0 || !strings.Contains(r.Stderr, "the voice analysis of an earlier attempt is reused") {
		t.Fatalf("the last attempt: exit %d:\n%s", r.Code, r.Stderr)
	}
}
