package job

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// example is a value FaceFusion accepts for the option, as a flag's values.
func (o ignoredOption) example() []string {
	switch {
	case o.arg == "":
		return nil
	case o.choices != nil && o.multi:
		return o.choices[len(o.choices)-2:]
	case o.choices != nil:
		return o.choices[len(o.choices)-1:]
	}
	return []string{"/scratch/jobs"}
}

// tomlValue is example() as a job file writes it.
func (o ignoredOption) tomlValue() string {
	v := o.example()
	switch {
	case o.arg == "":
		return "true"
	case o.multi:
		return `["` + strings.Join(v, `", "`) + `"]`
	case o.key == "benchmark_cycle_count":
		return v[0]
	}
	return `"` + v[0] + `"`
}

// Every ignored option of the table is accepted as a flag, a TOML key and a facefusion.ini
// key, in its section of FaceFusion's file; each gives the same job and one note naming it,
// and changes nothing else (nor the fingerprint).
func TestIgnoredOptionsAreAcceptedEverywhere(t *testing.T) {
	base, err := Parse(paths)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range ignoredOptions {
		t.Run(o.key, func(t *testing.T) {
			if iniSection(o.key) == "" {
				t.Fatalf("%s is not a key of FaceFusion's facefusion.ini", o.key)
			}
			dir := t.TempDir()
			flag := append([]string{"--" + strings.ReplaceAll(o.key, "_", "-")}, o.example()...)
			toml := filepath.Join(dir, "job.toml")
			if err := os.WriteFile(toml, []byte(o.key+" = "+o.tomlValue()+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			ini := writeINI(t, "["+iniSection(o.key)+"]\n"+o.key+" = "+strings.Join(append(o.example(), map[bool]string{true: "True"}[o.arg == ""]), " ")+"\n")
			var notes [][]string
			for _, args := range [][]string{flag, {"--config", toml}, {"--config-path", ini}} {
				c, err := Parse(append(append([]string{}, paths...), args...))
				if err != nil {
					t.Fatalf("%v: %v", args, err)
				}
				notes = append(notes, c.IgnoredNotes())
				if !reflect.DeepEqual(c.Settings(), base.Settings()) {
					t.Errorf("%v changed the fingerprinted settings", args)
				}
				c.ignored = nil
				if !reflect.DeepEqual(c, base) {
					t.Errorf("%v changed the job", args)
				}
			}
			for i, n := range notes {
				if len(n) != 1 || !strings.HasPrefix(n[0], o.key+" = ") || !strings.Contains(n[0], "ignored: "+o.why) {
					t.Errorf("way %d: notes %q, want one on %s", i, n, o.key)
				}
				if i > 0 && !reflect.DeepEqual(n, notes[0]) {
					t.Errorf("notes differ: %q and %q", notes[0], n)
				}
			}
		})
	}
}

// A value outside FaceFusion's choices is refused wherever it is given, naming the option and
// the choices; so is the one combination whose pixels would differ here.
func TestIgnoredOptionsRefuseWhatFaceFusionRefuses(t *testing.T) {
	dir := t.TempDir()
	toml := filepath.Join(dir, "job.toml")
	if err := os.WriteFile(toml, []byte("download_scope = \"most\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--video-memory-strategy", "lax"}, `--video-memory-strategy: "lax" is not one of strict, moderate, tolerant`},
		{[]string{"--ui-layouts", "default", "tv"}, `"tv" is not one of benchmark, default, jobs, webcam`},
		{[]string{"--config", toml}, `download_scope: "most" is not one of lite, full`},
		{[]string{"--workflow-mode", "video-to-video"}, `workflow_mode (--workflow-mode): "video-to-video" is not one of auto, image-to-image, image-to-video`},
		{[]string{"--workflow-strategy", "disk", "--temp-frame-format", "jpeg"}, "two lossy JPEG encodes"},
	} {
		_, err := Parse(append(append([]string{}, paths...), c.args...))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
	if _, err := Parse(append(append([]string{}, paths...), "--workflow-strategy", "disk", "--temp-frame-format", "png")); err != nil {
		t.Errorf("disk with png temp frames (the same pixels): %v", err)
	}
}

// workflow_mode must be auto or the target's kind.
func TestCheckWorkflowMode(t *testing.T) {
	for _, c := range []struct {
		mode  string
		image bool
		ok    bool
	}{
		{"auto", true, true}, {"auto", false, true},
		{"image-to-image", true, true}, {"image-to-video", false, true},
		{"image-to-video", true, false}, {"image-to-image", false, false},
	} {
		cfg := Config{WorkflowMode: c.mode, TargetPath: "t"}
		if err := cfg.CheckWorkflowMode(c.image); (err == nil) != c.ok {
			t.Errorf("mode %s, image %v: %v", c.mode, c.image, err)
		}
	}
}
