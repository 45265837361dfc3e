package job

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// FaceFusion's general options (program.py's workflow, frame extraction, uis, download,
// benchmark, memory, paths and misc groups) that cannot change a pixel here.
// Each is accepted as a flag, a TOML key and a facefusion.ini key, with FaceFusion's choices
// (a value outside them is refused, as FaceFusion refuses it), and the run says once that it
// is ignored, and why. This table is their one home: their flags, keys and notes come from it.
var ignoredOptions = []ignoredOption{
	{key: "workflow_strategy", arg: "MODE", choices: []string{"disk", "memory"},
		why: "frames are handed from decoder to encoder in memory; FaceFusion's disk strategy with lossless temp frames (png, bmp, tiff) gives the same pixels"},
	{key: "temp_frame_format", arg: "FORMAT", choices: []string{"bmp", "jpeg", "png", "tiff"},
		why: "FaceFusion writes temp frames only with workflow_strategy disk; no temp frame is written here"},
	{key: "temp_pixel_format", arg: "FORMAT", choices: []string{"bgr24", "bgra"},
		why: "FaceFusion decodes every target frame to bgr24 (no alpha), so bgra adds an opaque alpha the encoder drops or keeps opaque: the same pixels (background_remover's alpha is not kept in video here either way)"},
	{key: "video_memory_strategy", arg: "MODE", choices: []string{"strict", "moderate", "tolerant"},
		why: "when FaceFusion frees its model sessions; each rank keeps its sessions for the job"},
	{key: "jobs_path", arg: "DIR",
		why: "FaceFusion's job queue; facefusion-hpc's job folder is --job-dir"},
	{key: "download_providers", arg: "NAME...", multi: true, choices: []string{"github", "huggingface"},
		why: "facefusion-hpc downloads no model at run time: the model files come from --models-dir (facefusion models fetches them)"},
	{key: "download_scope", arg: "SCOPE", choices: []string{"lite", "full"},
		why: "facefusion-hpc downloads no model at run time: the model files come from --models-dir (facefusion models fetches them)"},
	{key: "open_browser", why: "a batch program has no user interface"},
	{key: "ui_layouts", arg: "NAME...", multi: true, choices: []string{"benchmark", "default", "jobs", "webcam"},
		why: "a batch program has no user interface"},
	{key: "ui_workflow", arg: "NAME", choices: []string{"instant_runner", "job_runner", "job_manager"},
		why: "a batch program has no user interface"},
	{key: "benchmark_mode", arg: "MODE", choices: []string{"warm", "cold"},
		why: "FaceFusion's benchmark command's; facefusion-hpc measures every run (the run report)"},
	{key: "benchmark_resolutions", arg: "RES...", multi: true, choices: []string{"240p", "360p", "540p", "720p", "1080p", "1440p", "2160p"},
		why: "FaceFusion's benchmark command's; facefusion-hpc measures every run (the run report)"},
	{key: "benchmark_cycle_count", arg: "1..10", choices: []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"},
		why: "FaceFusion's benchmark command's; facefusion-hpc measures every run (the run report)"},
	{key: "halt_on_error", why: "FaceFusion's job-run-all and the like; facefusion batch-run goes on past a failed target and names it in its summary"},
}

// ignoredOption is one FaceFusion option that changes nothing here.
type ignoredOption struct {
	key     string   // FaceFusion's name, snake_case
	arg     string   // the flag's value; "" for a switch
	multi   bool     // one or more values (nargs='+')
	choices []string // FaceFusion's; nil: any value
	why     string   // why it changes nothing here, said once when it is set
}

// flag is the option's command-line flag.
func (o ignoredOption) flag() option {
	return option{long: strings.ReplaceAll(o.key, "_", "-"), arg: o.arg, multi: o.multi,
		help: "FaceFusion's, accepted and ignored: " + o.why,
		set:  func(c *Config, vals []string) error { return c.setIgnored(o, vals) }}
}

// setIgnored checks vals against the option's choices and records them for the note.
func (c *Config) setIgnored(o ignoredOption, vals []string) error {
	if o.choices != nil {
		for _, v := range vals {
			if !slices.Contains(o.choices, v) {
				return fmt.Errorf("--%s: %s is not one of %s", strings.ReplaceAll(o.key, "_", "-"), safefs.Excerpt(v), strings.Join(o.choices, ", "))
			}
		}
	}
	if c.ignored == nil {
		c.ignored = map[string]string{}
	} else {
		c.ignored = maps.Clone(c.ignored) // a copy of a Config never shares what a later setting changes
	}
	value := "true"
	if o.arg != "" {
		value = strings.Join(vals, " ")
	}
	c.ignored[o.key] = value
	return nil
}

// setIgnoredTOML sets an ignored option from a job file's value: a string, a number, a
// boolean for a switch, or a list of them for a multi-valued option.
func (c *Config) setIgnoredTOML(o ignoredOption, v any) error {
	one := func(x any) (string, bool) {
		switch x := x.(type) {
		case string:
			return x, true
		case int64:
			return strconv.FormatInt(x, 10), true
		}
		return "", false
	}
	var vals []string
	switch x := v.(type) {
	case bool:
		if o.arg != "" {
			return fmt.Errorf("%s is true or false, the key takes %s", o.key, o.arg)
		}
		if !x {
			return nil
		}
		return c.setIgnored(o, nil)
	case []any:
		if !o.multi {
			return fmt.Errorf("%s is a list, the key takes one value (%s)", o.key, o.arg)
		}
		for _, e := range x {
			s, ok := one(e)
			if !ok {
				return fmt.Errorf("%s: the list holds %v, the key takes %s", o.key, safefs.Excerpt(fmt.Sprint(e)), o.arg)
			}
			vals = append(vals, s)
		}
	default:
		s, ok := one(x)
		if !ok || o.arg == "" {
			return fmt.Errorf("%s is %s, the key takes %s", o.key, safefs.Excerpt(fmt.Sprint(v)), map[bool]string{true: "true or false", false: o.arg}[o.arg == ""])
		}
		vals = []string{s}
	}
	if err := c.setIgnored(o, vals); err != nil {
		return fmt.Errorf("%s: %s", o.key, strings.TrimPrefix(err.Error(), "--"+strings.ReplaceAll(o.key, "_", "-")+": "))
	}
	return nil
}

// ignoredOptionOf is the table's option of a TOML key, or nil.
func ignoredOptionOf(key string) *ignoredOption {
	for i := range ignoredOptions {
		if ignoredOptions[i].key == key {
			return &ignoredOptions[i]
		}
	}
	return nil
}

// IgnoredNotes are the lines saying which of FaceFusion's options the job sets that change
// nothing here, and why: one a key, in the table's order.
func (c *Config) IgnoredNotes() []string {
	var notes []string
	for _, o := range ignoredOptions {
		if v, ok := c.ignored[o.key]; ok {
			notes = append(notes, fmt.Sprintf("%s = %s: ignored: %s", o.key, v, o.why))
		}
	}
	return notes
}

// WorkflowModes are FaceFusion's workflow_mode values: auto follows the target; another must
// be the target's, or FaceFusion stops without an output (conditional_process).
var WorkflowModes = []string{"auto", "image-to-image", "image-to-video"}

// CheckWorkflowMode refuses a workflow_mode that is not the target's kind (image: image-to-image,
// else image-to-video), as FaceFusion refuses it.
func (c *Config) CheckWorkflowMode(image bool) error {
	want := "image-to-video"
	if image {
		want = "image-to-image"
	}
	if c.WorkflowMode == "auto" || c.WorkflowMode == want {
		return nil
	}
	return fmt.Errorf("workflow_mode (--workflow-mode) %s: the target %s makes it %s; give that, auto, or another target", c.WorkflowMode, c.TargetPath, want)
}

// validateGeneral checks the general options that are applied: workflow_mode's choices, and
// (to combo) the one combination of ignored ones whose pixels differ here (lossy temp frames).
func (c *Config) validateGeneral(bad, combo func(string, ...any)) {
	if msg := oneOf("workflow_mode", c.WorkflowMode, WorkflowModes); msg != "" {
		bad("%s", msg)
	}
	if c.ignored["workflow_strategy"] == "disk" && c.ignored["temp_frame_format"] == "jpeg" {
		combo("workflow_strategy disk with temp_frame_format jpeg: FaceFusion then passes every frame through two lossy JPEG encodes, which facefusion-hpc does not reproduce: use png, bmp or tiff (the same pixels as memory), or workflow_strategy memory")
	}
}

func init() {
	for _, o := range ignoredOptions {
		options = append(options, o.flag())
	}
}
