package job

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// INIFile is FaceFusion's defaults file, read from the working folder when it is there (as
// FaceFusion's --config-path defaults to it).
const INIFile = "facefusion.ini"

// shippedINI is FaceFusion 3.8.1's facefusion.ini as shipped (every key empty): its sections,
// and in each the keys FaceFusion reads from it. It is the one statement of that format in this
// program; which of its keys this program supports is not listed anywhere either: it is every
// key whose flag (the key with '-' for '_') is in the flag table.
//
//go:embed facefusion.ini
var shippedINI []byte

// faceFusionINI is shippedINI's sections and keys, in the file's order.
var faceFusionINI = func() (secs []struct {
	section string
	keys    []string
}) {
	entries, err := parseINI(shippedINI, "the embedded facefusion.ini")
	if err != nil {
		panic(err) // the embedded file is part of the program
	}
	for _, e := range entries {
		if len(secs) == 0 || secs[len(secs)-1].section != e.section {
			secs = append(secs, struct {
				section string
				keys    []string
			}{section: e.section})
		}
		if e.key != "" {
			secs[len(secs)-1].keys = append(secs[len(secs)-1].keys, e.key)
		}
	}
	return secs
}()

// iniSection is the section of FaceFusion's file that holds key, or "".
func iniSection(key string) string {
	for _, s := range faceFusionINI {
		if slices.Contains(s.keys, key) {
			return s.section
		}
	}
	return ""
}

// iniOption is the flag a FaceFusion key sets, or nil when this program does not support it.
func iniOption(key string) *option {
	o := lookup("--" + strings.ReplaceAll(key, "_", "-"))
	if o == nil || o.set == nil {
		return nil
	}
	return o
}

// LoadINI overlays FaceFusion's defaults file on c. path is --config-path: that file, which
// must exist; "" reads facefusion.ini in the working folder when there is one. A key left empty
// is ignored, as FaceFusion ignores it. A key set to a value is applied as its flag applies it
// (a list is space-separated, like the flag's values); a FaceFusion key this program does not
// support, and a section or key FaceFusion does not have, are errors naming the file, section
// and key.
func LoadINI(path string, c *Config) error {
	given := path != ""
	if !given {
		path = INIFile
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil
		}
	}
	// A FIFO or device is refused before it is read: opening a FIFO would wait for a writer.
	data, err := safefs.ReadFile(path, safefs.ConfigLimit, "FaceFusion defaults file")
	var kind *safefs.KindError
	var limit *safefs.LimitError
	switch {
	case err != nil && given && errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("--config-path %s: no such file: give FaceFusion's facefusion.ini, or leave the flag out", path)
	case err != nil && (errors.As(err, &kind) || errors.As(err, &limit)) && given:
		return fmt.Errorf("--config-path: %v; give FaceFusion's facefusion.ini", err)
	case err != nil && (errors.As(err, &kind) || errors.As(err, &limit)):
		return fmt.Errorf("%v (read when it is in the working folder): move it away, or give --config-path", err)
	case err != nil && given:
		return fmt.Errorf("--config-path %s: %v", path, err)
	case err != nil:
		return fmt.Errorf("%s in the working folder (FaceFusion's defaults file, read when it is there): %v", path, err)
	}
	return loadINI(data, path, c)
}

// loadINI overlays the facefusion.ini data, read from path, on c.
func loadINI(data []byte, path string, c *Config) error {
	entries, err := parseINI(data, path)
	if err != nil {
		return err
	}
	var errs complaints
	for _, e := range entries {
		if err := e.apply(c); err != nil {
			errs.add(fmt.Sprintf("%s:%d: %s: %v", path, e.line, strings.TrimSpace("["+safefs.Name(e.section, safefs.ExcerptLen)+"] "+safefs.Name(e.key, safefs.ExcerptLen)), err))
		}
	}
	if err := errs.err(); err != nil {
		return err
	}
	// A value every flag parses may still be one this program refuses (a FaceFusion model it
	// does not have): said here, where the file can be named. A value refused only beside
	// another key's (a margin with the embedded blazeface) may meet another value in the job
	// file or a flag: that is for the final check.
	if err := c.validateKeys(); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	return nil
}

// iniEntry is one "key = value" of a facefusion.ini, or a [section] header (key "").
type iniEntry struct {
	section, key, value string
	line                int
}

// apply sets the entry's value on c, or says why it cannot.
func (e iniEntry) apply(c *Config) error {
	if sections := iniSections(); !slices.Contains(sections, e.section) {
		if e.key != "" {
			return nil // said once, at the header
		}
		for i, s := range sections {
			sections[i] = "[" + s + "]"
		}
		return fmt.Errorf("FaceFusion has no section [%s]%s", safefs.Name(e.section, safefs.ExcerptLen), hint("["+e.section+"]", sections))
	}
	if e.key == "" {
		return nil
	}
	if home := iniSection(e.key); home != e.section {
		if home != "" {
			return fmt.Errorf("this key belongs in section [%s]", home)
		}
		if ours := tomlKeys(); slices.Contains(ours, e.key) {
			return fmt.Errorf("not a key of FaceFusion's file: it is facefusion-hpc's own; set it in the TOML job file (--config) or with --%s", strings.ReplaceAll(e.key, "_", "-"))
		}
		return fmt.Errorf("FaceFusion has no key %s in [%s]%s", safefs.Name(e.key, safefs.ExcerptLen), safefs.Name(e.section, safefs.ExcerptLen), hint(e.key, iniKeys()))
	}
	value := strings.TrimSpace(e.value)
	if value == "" {
		return nil // FaceFusion's fallback, here the job's default
	}
	o := iniOption(e.key)
	if o == nil {
		return fmt.Errorf("set to %s, but not supported by facefusion-hpc: leave it empty or remove it", safefs.Excerpt(value))
	}
	var vals []string
	switch {
	case o.arg == "": // a switch; every switch is off in the embedded default (TestINISwitchesAreOffByDefault)
		on, err := iniBool(value)
		if err != nil || !on {
			return err
		}
	case o.multi:
		vals = strings.Fields(value) // FaceFusion's get_str_list and get_int_list: str.split()
	default:
		vals = []string{value}
	}
	if err := o.set(c, vals); err != nil {
		// The setter names the flag; here the key is named already.
		return errors.New(strings.TrimPrefix(err.Error(), "--"+o.long+": "))
	}
	return nil
}

// iniBool reads a boolean as Python's configparser does (getboolean).
func iniBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "1", "yes", "true", "on":
		return true, nil
	case "0", "no", "false", "off":
		return false, nil
	}
	return false, fmt.Errorf("%s is not a boolean (true or false)", safefs.Excerpt(v))
}

// parseINI reads an INI file by the rules of Python's configparser as FaceFusion uses it:
// [section] headers, "key = value" or "key: value" (split at the first '=' or ':'), keys in
// lower case, whole-line comments starting with '#' or ';' (there are no inline comments: a
// ';' after a value is part of it), lines indented under a key continue its value, and '%%' is
// a percent sign ('%' alone starts an interpolation, which FaceFusion's files never use). A
// key outside a section, a line that is neither, and a section or key given twice are errors.
func parseINI(data []byte, name string) ([]iniEntry, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var out []iniEntry
	// more[i] are out[i]'s continuation lines, joined once at the end: adding each to the value
	// as it comes would copy the value again for every line.
	more := map[int][]string{}
	section, sections := "", map[string]bool{}
	keys := map[string]bool{}
	cur := -1      // index in out of the key a continuation line extends, -1: none
	keyIndent := 0 // that key's indentation
	bad := func(n int, format string, a ...any) error {
		return fmt.Errorf("%s:%d: %s", name, n, fmt.Sprintf(format, a...))
	}
	for i, raw := range strings.Split(string(data), "\n") {
		n := i + 1
		line := strings.TrimRight(raw, "\r")
		text := strings.TrimSpace(line)
		if text == "" || text[0] == '#' || text[0] == ';' {
			continue // neither ends a value that continues below
		}
		indent := len(line) - len(strings.TrimLeft(line, " \t"))
		if cur >= 0 && indent > keyIndent {
			more[cur] = append(more[cur], text)
			continue
		}
		cur = -1
		if strings.HasPrefix(text, "[") {
			if !strings.HasSuffix(text, "]") || len(text) < 3 {
				return nil, bad(n, "%s is not a section header like [paths]", safefs.Excerpt(text))
			}
			section = text[1 : len(text)-1]
			if sections[section] {
				return nil, bad(n, "section [%s] is given twice", safefs.Name(section, safefs.ExcerptLen))
			}
			sections[section] = true
			out = append(out, iniEntry{section: section, line: n})
			continue
		}
		at := strings.IndexAny(text, "=:")
		if at < 0 {
			return nil, bad(n, "%s is not \"key = value\"", safefs.Excerpt(text))
		}
		key := strings.ToLower(strings.TrimSpace(text[:at]))
		if key == "" {
			return nil, bad(n, "%s has no key before its %q", safefs.Excerpt(text), text[at])
		}
		if section == "" {
			return nil, bad(n, "%s comes before the first [section]", safefs.Name(key, safefs.ExcerptLen))
		}
		if keys[section+"\x00"+key] {
			return nil, bad(n, "[%s] %s is given twice", safefs.Name(section, safefs.ExcerptLen), safefs.Name(key, safefs.ExcerptLen))
		}
		keys[section+"\x00"+key] = true
		out = append(out, iniEntry{section: section, key: key, value: strings.TrimSpace(text[at+1:]), line: n})
		cur, keyIndent = len(out)-1, indent
	}
	for i := range out {
		if out[i].key == "" {
			continue
		}
		if lines := more[i]; len(lines) > 0 {
			out[i].value += "\n" + strings.Join(lines, "\n")
		}
		v, err := uninterpolate(out[i].value)
		if err != nil {
			return nil, bad(out[i].line, "[%s] %s: %v", safefs.Name(out[i].section, safefs.ExcerptLen), safefs.Name(out[i].key, safefs.ExcerptLen), err)
		}
		out[i].value = v
	}
	return out, nil
}

// uninterpolate undoes configparser's escape: "%%" is '%'; any other '%' is an interpolation.
func uninterpolate(v string) (string, error) {
	if !strings.Contains(v, "%") {
		return v, nil
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '%' {
			b.WriteByte(v[i])
			continue
		}
		if i+1 < len(v) && v[i+1] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		return "", fmt.Errorf("%s: a '%%' starts an interpolation in FaceFusion's configparser, which this program does not do: write %%%% for a percent sign", safefs.Excerpt(v))
	}
	return b.String(), nil
}

func iniSections() []string {
	var s []string
	for _, sec := range faceFusionINI {
		s = append(s, sec.section)
	}
	return s
}

func iniKeys() []string {
	var k []string
	for _, sec := range faceFusionINI {
		k = append(k, sec.keys...)
	}
	return k
}

// tomlKeys are the keys of the TOML job file.
func tomlKeys() []string {
	var keys []string
	var c Config
	eachSetting(reflect.ValueOf(&c).Elem(), "", false, func(key string, _ reflect.Value, _ bool) { keys = append(keys, key) })
	return keys
}

// hint is ": did you mean X?" for the candidate nearest to s, when it is near.
func hint(s string, candidates []string) string {
	best, dist := "", 3 // at most two edits away
	for _, c := range candidates {
		// The lengths' difference is a lower bound of the distance: a candidate it rules out
		// costs nothing, so a huge key costs no more than a short one.
		if abs(len(s)-len(c)) >= dist {
			continue
		}
		if d := editDistance(s, c); d < dist {
			best, dist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(": did you mean %s?", best)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
