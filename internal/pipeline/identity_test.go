package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// TestIdentityRecognizer: which recognizer the identity measure and reference mode run, and
// when the measure runs at all.
func TestIdentityRecognizer(t *testing.T) {
	base := job.Default()
	base.ModelsDir = filepath.Join(testenv.Cache(t), "models")
	testenv.Model(t, "fr_feature.onnx")
	for _, c := range []struct {
		name       string
		set        func(*job.Config)
		rec, meter string // RecognizerName, identityRecognizer's name
		why        string // identityRecognizer's reason, when none
	}{
		{"embedded default", func(*job.Config) {}, "fr_feature", "fr_feature", ""},
		{"off", func(c *job.Config) { c.IdentityMeasure = "off" }, "fr_feature", "", "identity_measure is off"},
		{"no swap", func(c *job.Config) { c.Processors = []string{job.ProcessorDebug} }, "fr_feature", "", "no face_swapper"},
		// The job's own model: the job checks it (and fails without it) before the measure.
		{"FaceFusion's swapper", func(c *job.Config) { c.FaceSwapperModel = "inswapper_128" }, "arcface_w600k_r50", "arcface_w600k_r50", ""},
		{"FaceFusion's detector", func(c *job.Config) { c.FaceDetectorModel = "scrfd" }, "arcface_w600k_r50", "", "arcface_w600k_r50.onnx is not in the models folder"},
		{"an enhancer", func(c *job.Config) { c.Processors = append(c.Processors, job.ProcessorEnhance) }, "arcface_w600k_r50", "", "arcface_w600k_r50.onnx"},
		{"no fr_feature", func(c *job.Config) { c.ModelsDir = t.TempDir() }, "fr_feature", "", "fr_feature.onnx is not in the models folder"},
	} {
		cfg := base
		cfg.Processors = append([]string(nil), base.Processors...)
		c.set(&cfg)
		name, why, warn := identityRecognizer(cfg, nil)
		if got := RecognizerName(cfg); got != c.rec || name != c.meter || !strings.Contains(why, c.why) || (name == "") == (why == "") || warn {
			t.Errorf("%s: recognizer %q, measure %q (%q); want %q, %q (%q)", c.name, got, name, why, c.rec, c.meter, c.why)
		}
	}
}

// TestIdentityMeasureRefusedFile: a corrupt or wrong fr_feature.onnx turns the optional
// identity measure off with one warning naming the file, what is wrong and the fix, and the job
// loads; reference mode, which needs the recognizer, fails with the package's fix, not
// FaceFusion's.
func TestIdentityMeasureRefusedFile(t *testing.T) {
	testenv.Full(t, "loads the real recognizer and broken copies")
	models := filepath.Join(testenv.Cache(t), "models")
	good, err := os.ReadFile(testenv.Model(t, "fr_feature.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	wrong, err := os.ReadFile(testenv.Model(t, "blazeface_front_128.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	// folder is a models folder with the embedded default's files, and fr_feature.onnx (when
	// not nil).
	folder := func(fr []byte) string {
		dir := t.TempDir()
		for _, f := range []string{"blazeface_front_128.onnx", "blazeface_back_256.onnx", job.DlibFile} {
			if err := os.Symlink(filepath.Join(models, f), filepath.Join(dir, f)); err != nil {
				t.Fatal(err)
			}
		}
		if fr != nil {
			if err := os.WriteFile(filepath.Join(dir, "fr_feature.onnx"), fr, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	for _, c := range []struct {
		name string
		file []byte
		why  string // what is wrong, in the warning and reference mode's error
	}{
		{"truncated", good[:100000], "not a loadable ONNX model"},
		{"another model", wrong, "wrong signature"},
	} {
		cfg := job.Default()
		cfg.ModelsDir = folder(c.file)
		cfg.OnnxruntimeLibrary = testenv.ORTLibrary(t)
		cfg.SourcePaths = []string{testenv.Sample(t, "grace_hopper.png")}
		path := filepath.Join(cfg.ModelsDir, "fr_feature.onnx")
		m, err := LoadModels(cfg, nil)
		if err != nil {
			t.Fatalf("%s: the default job fails on the measure's file: %v", c.name, err)
		}
		if m.identity != nil {
			t.Errorf("%s: the identity measure runs %s", c.name, m.identity.name)
		}
		m.Close()
		name, why, warn := identityRecognizer(cfg, nil)
		for _, want := range []string{path, c.why, "`rm " + path + " && make fetch`", "npm faceplugin-face-recognition-js@0.0.1", "--identity-measure off"} {
			if name != "" || !warn || !strings.Contains(why, want) {
				t.Errorf("%s: measure %q, warning %v %q: want it off, warned, naming %q", c.name, name, warn, why, want)
			}
		}
		if strings.Contains(why, "FaceFusion") {
			t.Errorf("%s: %q sends the user to FaceFusion, which does not publish fr_feature", c.name, why)
		}
		ref := cfg
		ref.FaceSelectorMode = "reference"
		_, err = LoadModels(ref, nil)
		testenv.CheckError(t, c.name+" reference mode", err, path, c.why, "make fetch", "npm faceplugin-face-recognition-js@0.0.1")
		if err != nil && strings.Contains(err.Error(), "FaceFusion") {
			t.Errorf("%s: reference mode's %q sends the user to FaceFusion", c.name, err)
		}
	}
	// Missing in reference mode: make fetch brings it (force-download fetches nothing).
	cfg := job.Default()
	cfg.ModelsDir = folder(nil)
	cfg.OnnxruntimeLibrary = testenv.ORTLibrary(t)
	cfg.FaceSelectorMode = "reference"
	_, err = LoadModels(cfg, nil)
	testenv.CheckError(t, "reference mode, no fr_feature", err, "fr_feature.onnx is missing", "run `make fetch` (npm faceplugin-face-recognition-js@0.0.1)")
	// A model file's refusal, not the runtime's: the driver's hint that rank 0's files can be
	// broadcast to a node that lacks them rests on it.
	if mfe := (*ModelFileError)(nil); !errors.As(err, &mfe) {
		t.Errorf("a missing model file's error %v is no *ModelFileError", err)
	}
	if err != nil && strings.Contains(err.Error(), "force-download") {
		t.Errorf("%q sends the user to force-download, which does not fetch fr_feature", err)
	}
}

// TestIdentitySample: the measure takes the same frames of an output however its frames are
// split into Streams (ranks, chunks, a resume's remainder), from the output's frame count
// alone: at most job.IdentitySample of them, evenly spread, never more than one in
// job.IdentityMinEvery, frame 0 always.
func TestIdentitySample(t *testing.T) {
	for _, frames := range []int{1, 11, 40, 299, 300, 301, 600, job.IdentitySample * job.IdentityMinEvery, 100_000, 1_000_003} {
		every := job.IdentityStride(frames)
		want := (frames + every - 1) / every
		if every < job.IdentityMinEvery || want > job.IdentitySample || want < 1 {
			t.Errorf("%d frames: stride %d measures %d frames; want at most %d, one in %d or fewer", frames, every, want, job.IdentitySample, job.IdentityMinEvery)
		}
		if frames >= job.IdentitySample*job.IdentityMinEvery && want < job.IdentitySample*9/10 {
			t.Errorf("%d frames: %d measured; want about %d", frames, want, job.IdentitySample)
		}
		for _, parts := range []int{1, 3, 7} {
			var got []int
			for p := range parts { // the output cut into parts Streams, each its own meter
				start, end := frames*p/parts, frames*(p+1)/parts
				im := &identityMeter{id: &identity{}, every: 1}
				im.setOutputFrames(frames)
				im.setFirstFrame(start)
				for b := start; b < end; b += 4 { // batches of 4 frames
					var idx []int
					for i := b; i < min(b+4, end); i++ {
						idx = append(idx, i-start)
					}
					im.setIndices(idx)
					for i := range idx {
						if im.measured(i) {
							got = append(got, b+i)
						}
					}
				}
			}
			if len(got) != want || got[0] != 0 || got[len(got)-1] != (want-1)*every {
				t.Errorf("%d frames in %d parts: measured %d frames (%v…); want %d, every %dth", frames, parts, len(got), got[:min(len(got), 4)], want, every)
			}
		}
	}
}
