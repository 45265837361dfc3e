package driver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/spec"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// The source images are fingerprinted wherever they change pixels: for the swapper, and for
// the face selector's auto with any processor (the enhancer or the debugger alone keep the
// faces of the source face's gender or race), so a resume with other sources is refused. A
// job that reads no source does not hold its sources (they may be any files, or none).
func TestFingerprintHoldsSourcesTheSelectorReads(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mkv")
	testenv.Clip(t, in, 8, "25")
	info, err := video.Probe(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	models := filepath.Join(dir, "models")
	if err := os.Mkdir(models, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "source.png")
	runtime, err := filepath.Abs(filepath.Join("..", "..", ".cache", "ort", "libonnxruntime.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(path, s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// voice, when not "", is an audio source after src; last is the latest fingerprint.
	voice, volume, last := "", 100, map[string]string{}
	sources := func(processor, gender, race, contents string) string {
		t.Helper()
		c := passThrough(in, filepath.Join(dir, "out.mkv"))
		c.Processors = []string{processor}
		c.FaceDetectorModel, c.FaceSelectorGender, c.FaceSelectorRace = "scrfd", gender, race
		c.SourcePaths = []string{src}
		if voice != "" {
			c.SourcePaths = append(c.SourcePaths, voice)
		}
		c.OutputAudioVolume = volume
		c.ModelsDir = models
		c.OnnxruntimeLibrary = runtime // the checkout's: the fingerprint checks it is a library
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		files, err := pipeline.ModelFiles(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files { // the files' contents are fingerprinted, not read as models
			if !strings.HasPrefix(f, models+string(filepath.Separator)) {
				t.Fatalf("model file %s is outside the test's folder %s", f, models)
			}
			write(f, filepath.Base(f))
		}
		write(src, contents)
		s, err := spec.Resolve(c, info)
		if err != nil {
			t.Fatal(err)
		}
		fp, err := fingerprint(context.Background(), c, &Plan{Info: info, Spec: s})
		if err != nil {
			t.Fatal(err)
		}
		last = fp
		return fp["source file contents"]
	}
	for _, j := range []struct{ processor, gender, race string }{
		{job.ProcessorEnhance, "auto", ""},
		{job.ProcessorDebug, "", "auto"},
		{job.ProcessorSwap, "", ""},
	} {
		a, b := sources(j.processor, j.gender, j.race, "one face"), sources(j.processor, j.gender, j.race, "another face")
		if a == "" || a == b {
			t.Errorf("%s, gender %q, race %q: the sources' fingerprint %q, then %q for other contents: want it held and changed", j.processor, j.gender, j.race, a, b)
		}
	}
	src = filepath.Join(dir, "voice.wav") // the lip syncer's source audio
	if a, b := sources(job.ProcessorLipSync, "", "", "one voice"), sources(job.ProcessorLipSync, "", "", "another voice"); a == "" || a == b {
		t.Errorf("lip_syncer: the sources' fingerprint %q, then %q for another voice: want it held and changed", a, b)
	}
	src = filepath.Join(dir, "source.png")
	for _, j := range []struct{ processor, gender string }{{job.ProcessorEnhance, ""}, {job.ProcessorDebug, "female"}} {
		if got := sources(j.processor, j.gender, "", "one face"); got != "" {
			t.Errorf("%s, gender %q reads no source: the fingerprint holds %q", j.processor, j.gender, got)
		}
	}
	// An audio source no processor reads is still the output's audio (FaceFusion's
	// replace_audio): held, alone, unless volume 0 leaves the output without audio.
	voice = filepath.Join(dir, "voice.wav")
	audioOf := func(contents string) string {
		t.Helper()
		write(voice, contents)
		if got := sources(job.ProcessorEnhance, "", "", "one face"); got != "" {
			t.Errorf("enhancer with an audio source: the sources' fingerprint %q, want only the audio's", got)
		}
		return last["source audio file contents"]
	}
	if a, b := audioOf("one voice"), audioOf("another voice"); a == "" || a == b {
		t.Errorf("the output's source audio: fingerprint %q, then %q for another voice: want it held and changed", a, b)
	}
	volume = 0
	if got := audioOf("one voice"); got != "" {
		t.Errorf("volume 0, no audio in the output: the source audio's fingerprint %q, want none", got)
	}
}
