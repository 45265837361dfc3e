package resume

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// The resume fingerprint, for real: an attempt is killed after its first chunk, and reruns
// with one thing changed are refused with one line that names it; the job folder survives
// each refusal, and a rerun that resolves to the same job resumes it.

// refused asserts a rerun exited 2 with an error of one line, the last, holding want and the
// way out (log lines before it, such as taking over a dead attempt's folder, are not errors).
func refused(t *testing.T, what string, r clitest.Result, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	last := lines[len(lines)-1]
	if r.Code != fault.ExitUsage || !strings.Contains(last, want) || !strings.Contains(last, "pass --fresh to start over") ||
		strings.Count(r.Stderr, "--fresh") != 1 {
		t.Fatalf("%s: exit %d, %q; want exit %d and one line holding %q and --fresh", what, r.Code, r.Stderr, fault.ExitUsage, want)
	}
}

// editManifest rewrites the job folder's manifest.json through edit, on its JSON object.
func editManifest(t *testing.T, path string, edit func(m map[string]json.RawMessage)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	edit(m)
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A swap resumed with the face selector order or the processors changed, or on a node whose
// providers resolve differently, is refused naming the setting with its old and new values
// (--processors none drops every model file, and still names processors). Asking for cuda
// before cpu on a node without cuda resolves to the cpu the job ran on: the same job.
func TestResumeRefusesChangedSettings(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "face.mp4")
	clitest.FaceClip(t, in, 160, 120, 24, "25")
	out := filepath.Join(dir, "out.mkv")
	args := []string{"run", "-s", testenv.Sample(t, "grace_hopper.png"), "-t", in, "-o", out,
		"--output-video-encoder", "ffv1", "--chunk-frames", "8"}
	clitest.KilledAt(t, "chunk-1", args)
	manifest := filepath.Join(out+".job", "manifest.json")
	fp := clitest.ReadManifest(t, out+".job").Fingerprint
	if fp["face_selector_order"] != "large-small" || fp["execution_providers"] != "cpu" || fp["trim_frame_end"] != "24" ||
		fp["model file shape_predictor_68_face_landmarks.dat"] == "" || fp["onnxruntime library contents"] == "" {
		t.Fatalf("the fingerprint lacks resolved settings or model files: %v", fp)
	}

	refused(t, "selector order", clitest.Run(t, append(args, "--face-selector-order", "left-right")...),
		`face_selector_order was "large-small", now "left-right"`)
	refused(t, "processors none", clitest.Run(t, append(args, "--processors", "none")...),
		`processors was "face_swapper", now "none"`)

	// The manifest as a node where cuda ran would have written it.
	orig, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	editManifest(t, manifest, func(m map[string]json.RawMessage) {
		fp["execution_providers"] = "cuda"
		m["fingerprint"], _ = json.Marshal(fp)
	})
	refused(t, "providers resolved differently", clitest.Run(t, args...), `execution_providers was "cuda", now "cpu"`)
	if err := os.WriteFile(manifest, orig, 0o644); err != nil {
		t.Fatal(err)
	}

	r := clitest.Run(t, append(args, "--execution-providers", "cuda", "cpu", "--execution-thread-count", "1", "--checkpoint-interval", "1")...)
	if r.Code != 0 {
		t.Fatalf("resume with cuda falling back to cpu: exit %d\n%s", r.Code, r.Stderr)
	}
	if m := clitest.VerifiedLine.FindStringSubmatch(r.Stderr); m == nil || m[1] != "1" || m[3] != "2" {
		t.Fatalf("the rerun did not resume chunk 0's work (want 1 verified, 2 to do):\n%s", r.Stderr)
	}
	if n := len(clitest.FrameHashes(t, out)); n != 24 {
		t.Fatalf("%s has %d frames, want 24", out, n)
	}
}

// A manifest whose fingerprint was deleted proves nothing and is refused for that; put back,
// the job resumes, given the same job in other words: the trim range the default resolved to
// ([0,24)), named. (One killed job serves both: the unchanged command's resume is every other
// resume test's.)
func TestResumeNeedsTheFingerprint(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	inFrames := bframeClip(t, in, 24)
	out := filepath.Join(dir, "out.mkv")
	args := clitest.PassThroughArgs(in, out, 8)
	clitest.KilledAt(t, "chunk-1", args)
	manifest := filepath.Join(out+".job", "manifest.json")
	orig, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}

	editManifest(t, manifest, func(m map[string]json.RawMessage) { delete(m, "fingerprint") })
	refused(t, "fingerprint deleted", clitest.Run(t, args...), "manifest "+manifest+" has no fingerprint: ")
	editManifest(t, manifest, func(m map[string]json.RawMessage) { m["fingerprint"] = json.RawMessage("{}") })
	refused(t, "fingerprint emptied", clitest.Run(t, args...), "manifest "+manifest+" has no fingerprint: ")

	if err := os.WriteFile(manifest, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	refused(t, "trim end changed", clitest.Run(t, append(args, "--trim-frame-end", "23")...), `trim_frame_end was "24", now "23"`)
	// Trim end -1 ran as frame 24: naming 24 is the same job.
	r := clitest.Run(t, clitest.PassThroughArgs(in, out, 8, "--trim-frame-start", "0", "--trim-frame-end", "24")...)
	if r.Code != 0 {
		t.Fatalf("the resolved trim range given explicitly: exit %d\n%s", r.Code, r.Stderr)
	}
	if m := clitest.VerifiedLine.FindStringSubmatch(r.Stderr); m == nil || m[1] != "1" {
		t.Fatalf("the resolved trim range given explicitly did not resume chunk 0's work:\n%s", r.Stderr)
	}
	clitest.CheckFrames(t, out, inFrames)
}

// A source audio no processor reads is still the output's audio (FaceFusion's replace_audio):
// a resume with another voice is another job, refused. A job folder made before the output
// carried the source audio (a program that recorded no source audio) was made by another
// build of the program, and is refused as such, naming it, with --fresh the way out; the
// unchanged command resumes, its output carrying the voice.
func TestResumeHoldsTheSourceAudio(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	bframeClip(t, in, 24)
	voice := filepath.Join(dir, "voice.wav")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=16000:duration=2", voice)
	out := filepath.Join(dir, "out.mkv")
	args := clitest.PassThroughArgs(in, out, 8, "-s", voice)
	clitest.KilledAt(t, "chunk-1", args)
	manifest := filepath.Join(out+".job", "manifest.json")
	fp := clitest.ReadManifest(t, out+".job").Fingerprint
	if fp["source audio file contents"] == "" || fp["program file contents"] == "" {
		t.Fatalf("the fingerprint lacks the source audio or the program: %v", fp)
	}
	orig, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}

	// As an earlier build left it: its own program, no source audio recorded.
	editManifest(t, manifest, func(m map[string]json.RawMessage) {
		old := maps.Clone(fp)
		delete(old, "source audio file contents")
		old["program file contents"] = "1:00"
		m["fingerprint"], _ = json.Marshal(old)
	})
	refused(t, "a folder of a build before the source audio", clitest.Run(t, args...), "program file contents changed")
	if err := os.WriteFile(manifest, orig, 0o644); err != nil {
		t.Fatal(err)
	}

	other := filepath.Join(dir, "other.wav")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "sine=frequency=500:sample_rate=16000:duration=2", other)
	refused(t, "another voice", clitest.Run(t, clitest.PassThroughArgs(in, out, 8, "-s", other)...), "source audio file contents changed")

	r := clitest.Run(t, args...)
	if r.Code != 0 {
		t.Fatalf("the same command: exit %d\n%s", r.Code, r.Stderr)
	}
	if m := clitest.VerifiedLine.FindStringSubmatch(r.Stderr); m == nil || m[1] != "1" {
		t.Fatalf("the rerun did not resume chunk 0's work:\n%s", r.Stderr)
	}
	if !clitest.HasAudio(t, out) {
		t.Errorf("%s has no audio, want the source audio", out)
	}
}
