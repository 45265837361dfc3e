package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Compare kinds.
const (
	CompareFaces = "faces"
	CompareImage = "image"
	CompareVideo = "video"
)

// Case is one [[case]] of a case file (the package doc describes each key).
type Case struct {
	Name      string   `toml:"name"`
	Covers    []string `toml:"covers"`
	Compare   string   `toml:"compare"`
	Target    string   `toml:"target"`
	Transform string   `toml:"transform"`
	Source    string   `toml:"source"`
	// ExtraSources follow Source in -s, in order.
	ExtraSources []string `toml:"extra_sources"`
	// SourceTransform is applied to the source as Transform is to the target.
	SourceTransform string   `toml:"source_transform"`
	Args            []string `toml:"args"`
	Frames          int      `toml:"frames"`
	// Gap is a video case's clip frame made black (a face dropping out for a frame).
	Gap *int `toml:"gap"`
	// Voice is the length in seconds of a generated voice track (lip_syncer's source audio,
	// voiceName) given after the sources in -s; 0: none.
	Voice float64 `toml:"voice"`
	Cause string  `toml:"cause"`

	File string `toml:"-"` // the case file's base name
}

// caseFile is a case file's top level: [[case]] tables and nothing else.
type caseFile struct {
	Case []Case `toml:"case"`
}

var (
	caseName  = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	cropSpec  = regexp.MustCompile(`^crop:(\d+),(\d+),(\d+),(\d+)$`)
	jpegSpec  = regexp.MustCompile(`^jpeg:(\d+)$`)
	coverSpec = regexp.MustCompile(`^[a-z0-9_]+(=[^=\s]+)?$`)
)

// transforms are the transform names a case may give (crop:x,y,w,h apart).
var transforms = []string{"", "mirror", "rotate90", "rotate180", "rotate270", "dark", "pair", "twin"}

// pathFlags are the flags the suite gives itself; a case's args never hold them.
var pathFlags = []string{"-s", "--source-paths", "-t", "--target-path", "-o", "--output-path",
	"--source-pattern", "--target-pattern", "--output-pattern", "--temp-path", "--jobs-path", "--config-path"}

// LoadCases reads every *.toml of dir, in file name order, and checks each case; samples is
// the folder the targets and sources are read from. The first problem is returned, naming the
// file and the case.
func LoadCases(dir, samples string) ([]Case, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.toml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no case files (*.toml) in %s", dir)
	}
	sort.Strings(files)
	var all []Case
	seen := map[string]string{}
	for _, path := range files {
		cases, err := readCaseFile(path)
		if err != nil {
			return nil, err
		}
		for i := range cases {
			c := &cases[i]
			c.File = filepath.Base(path)
			if err := c.check(samples); err != nil {
				return nil, fmt.Errorf("%s: case %d (%q): %v", c.File, i+1, c.Name, err)
			}
			if other, ok := seen[c.Name]; ok {
				return nil, fmt.Errorf("%s: case %q: the name is taken already (in %s): names are unique over every case file", c.File, c.Name, other)
			}
			seen[c.Name] = c.File
		}
		all = append(all, cases...)
	}
	return all, nil
}

// readCaseFile decodes one case file strictly: an unknown key is an error naming it.
func readCaseFile(path string) ([]Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f caseFile
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Base(path), err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return nil, fmt.Errorf("%s: unknown key %s (a case has name, covers, compare, target, transform, source, extra_sources, source_transform, args, frames, gap, voice, cause)", filepath.Base(path), strings.Join(keys, ", "))
	}
	if len(f.Case) == 0 {
		return nil, fmt.Errorf("%s: no [[case]] tables", filepath.Base(path))
	}
	return f.Case, nil
}

// check says what is wrong with c, if anything.
func (c *Case) check(samples string) error {
	if !caseName.MatchString(c.Name) {
		return fmt.Errorf("name %q: want kebab-case (a-z, 0-9, -)", c.Name)
	}
	switch c.Compare {
	case CompareFaces, CompareImage, CompareVideo:
	default:
		return fmt.Errorf("compare %q: want faces, image or video", c.Compare)
	}
	if len(c.Covers) == 0 {
		return fmt.Errorf("covers is empty: name the FaceFusion option keys the case proves")
	}
	for _, cv := range c.Covers {
		if !coverSpec.MatchString(cv) {
			return fmt.Errorf("covers %q: want key=value or key (FaceFusion's option key, e.g. face_detector_model=scrfd)", cv)
		}
		if key, _, _ := strings.Cut(cv, "="); !knownKey(key) {
			return fmt.Errorf("covers %q: %s is not a FaceFusion option key of the suite's list (coverage.go)", cv, key)
		}
	}
	if name, _, err := transformOf(c.Transform); err != nil {
		return err
	} else if name == "jpeg" && c.Compare == CompareVideo {
		return fmt.Errorf("transform %q: a video case's clip is lossless; jpeg is for image and faces cases", c.Transform)
	}
	if c.Target == "" {
		return fmt.Errorf("target is empty: name a file of .cache/samples")
	}
	if err := sampleHere(samples, "target", c.Target); err != nil {
		return err
	}
	switch {
	case c.Compare != CompareFaces && c.Source == "":
		return fmt.Errorf("source is empty: an %s case needs one (a file of .cache/samples)", c.Compare)
	case c.Source != "":
		if err := sampleHere(samples, "source", c.Source); err != nil {
			return err
		}
	}
	if c.Voice < 0 || c.Voice > 10 {
		return fmt.Errorf("voice %v: a voice track lasts 0 to 10 s", c.Voice)
	}
	if len(c.ExtraSources) > 0 && c.Source == "" {
		return fmt.Errorf("extra_sources %q: the case has no source (extra_sources follow it)", c.ExtraSources)
	}
	for _, s := range c.ExtraSources {
		if err := sampleHere(samples, "extra_sources", s); err != nil {
			return err
		}
	}
	if c.SourceTransform != "" {
		if c.Source == "" {
			return fmt.Errorf("source_transform %q: the case has no source", c.SourceTransform)
		}
		if name, _, err := transformOf(c.SourceTransform); err != nil {
			return fmt.Errorf("source_transform: %v", err)
		} else if name == "jpeg" {
			return fmt.Errorf("source_transform %q: jpeg is a target transform", c.SourceTransform)
		}
	}
	if c.Compare != CompareVideo && c.Frames != 0 {
		return fmt.Errorf("frames = %d: only a video case has frames", c.Frames)
	}
	if c.Compare == CompareVideo && (c.Frames < 0 || c.Frames > 10) {
		return fmt.Errorf("frames = %d: want 1 to 10 (0: 3)", c.Frames)
	}
	for _, a := range c.Args {
		flag, _, _ := strings.Cut(a, "=")
		for _, p := range pathFlags {
			if flag == p {
				return fmt.Errorf("args hold %s: the suite gives the paths itself", p)
			}
		}
	}
	if c.Gap != nil {
		if c.Compare != CompareVideo {
			return fmt.Errorf("gap = %d: only a video case's clip has frames to blank", *c.Gap)
		}
		if *c.Gap < 0 || *c.Gap >= c.FrameCount() {
			return fmt.Errorf("gap = %d: want a frame of the clip, 0 to %d", *c.Gap, c.FrameCount()-1)
		}
	}
	if strings.TrimSpace(c.Cause) != c.Cause {
		return fmt.Errorf("cause has leading or trailing space")
	}
	return nil
}

// FrameCount is a video case's clip length.
func (c *Case) FrameCount() int {
	if c.Frames == 0 {
		return 3
	}
	return c.Frames
}

func sampleHere(samples, what, name string) error {
	if filepath.Base(name) != name {
		return fmt.Errorf("%s %q: want a file name of .cache/samples, not a path", what, name)
	}
	if _, err := os.Stat(filepath.Join(samples, name)); err != nil {
		return fmt.Errorf("%s %q: not in %s (make fetch brings the samples)", what, name, samples)
	}
	return nil
}

// transformOf parses a transform: its name and, for crop, the rectangle x, y, w, h.
func transformOf(t string) (name string, crop [4]int, err error) {
	if m := cropSpec.FindStringSubmatch(t); m != nil {
		for i := range crop {
			crop[i], _ = strconv.Atoi(m[i+1])
		}
		if crop[2] == 0 || crop[3] == 0 {
			return "", crop, fmt.Errorf("transform %q: the crop is empty", t)
		}
		return "crop", crop, nil
	}
	if m := jpegSpec.FindStringSubmatch(t); m != nil {
		if q, _ := strconv.Atoi(m[1]); q < 2 || q > 31 {
			return "", crop, fmt.Errorf("transform %q: want ffmpeg's -q:v, 2 to 31", t)
		}
		return "jpeg", crop, nil
	}
	for _, n := range transforms {
		if t == n {
			return t, crop, nil
		}
	}
	return "", crop, fmt.Errorf("transform %q: want mirror, rotate90, rotate180, rotate270, dark, pair, twin, crop:x,y,w,h or jpeg:Q", t)
}
