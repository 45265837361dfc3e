// Package batch is facefusion batch-run: FaceFusion's source, target and output patterns
// expanded into entries (every source against every target), each entry its own checkpointed
// job run by the driver over every rank, with the state a cron pipeline needs kept in one
// folder: frozen lists shared by the tasks of a Slurm array, a done record per target's
// contents, failure records and quarantine, and a summary report.
package batch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// Entry is one job of the batch: its sources (one, or none without a swapper), target and
// output, and its position in the expanded list (FaceFusion's {index}).
type Entry struct {
	Index   int      `json:"index"`
	Sources []string `json:"sources,omitempty"`
	Target  string   `json:"target"`
	Output  string   `json:"output"`
	// Skip is why a name the inbox holds is no entry ("a link to nothing"): listed in the
	// summary as skipped, with no output and index -1, instead of vanishing without a word.
	Skip string `json:"skip,omitempty"`
}

// Expand resolves cfg's patterns as FaceFusion's batch-run does: the sources and the targets
// each sorted by name, every source with every target (sources outermost), each output from
// output_pattern. Hidden files (a name starting with '.', as rsync and many copy tools name a
// file while they write it) and folders are not targets or sources. Two entries with one output
// are an error naming both, before any work.
//
// A name that is a link to nothing, a link loop, or a FIFO, device or socket is no entry but
// is listed after the entries, with Skip saying why.
func Expand(cfg job.Config) ([]Entry, error) {
	targets, badTargets, err := match(cfg.TargetPattern, "target_pattern")
	if err != nil {
		return nil, err
	}
	var skipped []Entry
	for _, b := range badTargets {
		skipped = append(skipped, Entry{Index: -1, Target: b.path, Skip: b.why})
	}
	sources := []string{""}
	if cfg.SourcePattern != "" {
		var badSources []unusable
		if sources, badSources, err = match(cfg.SourcePattern, "source_pattern"); err != nil {
			return nil, err
		}
		for _, b := range badSources {
			skipped = append(skipped, Entry{Index: -1, Sources: []string{b.path}, Skip: b.why})
		}
		if len(sources) == 0 && cfg.Swaps() {
			return nil, fmt.Errorf("source_pattern %q matches no file: give the source images, e.g. 'faces/*.jpg'", cfg.SourcePattern)
		}
		if len(sources) == 0 {
			sources = []string{""}
		}
	}
	var out []Entry
	seen := map[string]int{}
	for _, s := range sources {
		for _, t := range targets {
			e := Entry{Index: len(out), Target: t}
			vals := map[string]string{"index": strconv.Itoa(e.Index), "target_name": name(t), "target_extension": strings.ToLower(filepath.Ext(t))}
			if s != "" {
				e.Sources = []string{s}
				vals["source_name"] = name(s)
			}
			if e.Output, err = job.ExpandOutput(cfg.OutputPattern, vals); err != nil {
				return nil, fmt.Errorf("output_pattern: %w", err)
			}
			if e.Output == "" {
				return nil, fmt.Errorf("output_pattern %q gives an empty output path for target %s", cfg.OutputPattern, t)
			}
			if err := notATarget(cfg.TargetPattern, e.Output); err != nil {
				return nil, err
			}
			key := filepath.Clean(e.Output)
			if i, dup := seen[key]; dup {
				return nil, fmt.Errorf("output_pattern %q gives one output, %s, for two entries (%s and %s): %s", cfg.OutputPattern, e.Output, describe(out[i]), describe(e), apart(cfg.OutputPattern, out[i], e))
			}
			seen[key] = e.Index
			out = append(out, e)
		}
	}
	return append(out, skipped...), nil
}

// unusable is a name a pattern matched that is no target or source, and why.
type unusable struct{ path, why string }

// match is a pattern's regular files, sorted, and the names it matched that are links to
// nothing, link loops, FIFOs, devices or sockets, with why (folders and hidden names are left
// out without a word). A malformed pattern, or one whose folder does not exist (FaceFusion's
// resolve_file_pattern matches nothing there), is an error.
func match(pattern, key string) ([]string, []unusable, error) {
	names, err := filepath.Glob(pattern)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %q: %v", key, pattern, err)
	}
	// An inbox that is not there is a mistake (a typo, an unmounted file system), not an empty
	// inbox: cron would read "nothing to do" every night.
	if dir := filepath.Dir(pattern); !strings.ContainsAny(dir, `*?[\`) {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, nil, fmt.Errorf("%s %q: folder %s does not exist (or is not a folder): check the path, or mount its file system", key, pattern, dir)
		}
	}
	if len(names) == 0 && !strings.ContainsAny(pattern, `*?[\\`) {
		return nil, nil, fmt.Errorf("%s %q: no such file (a name without * ? or [ must exist)", key, pattern)
	}
	var files []string
	var bad []unusable
	for _, n := range names {
		if strings.HasPrefix(filepath.Base(n), ".") {
			continue
		}
		// Another user's link in the inbox would have this user's job read (and publish) a
		// file of theirs that the link's maker cannot read.
		if lst, err := os.Lstat(n); err == nil && lst.Mode()&fs.ModeSymlink != 0 {
			var le *safefs.LinkError
			if errors.As(safefs.ForeignLink(n), &le) {
				bad = append(bad, unusable{n, "a link made by " + le.Owner + ", not by you (facefusion follows no other user's links)"})
				continue
			}
		}
		st, err := os.Stat(n)
		switch {
		case err == nil && st.Mode().IsRegular():
			files = append(files, n)
		case err == nil && st.IsDir():
		case err == nil:
			bad = append(bad, unusable{n, safefs.KindOf(st.Mode()) + ", not a regular file"})
		case errors.Is(err, syscall.ELOOP):
			bad = append(bad, unusable{n, "a link loop (a link that leads back to itself)"})
		case errors.Is(err, fs.ErrNotExist):
			if to, lerr := os.Readlink(n); lerr == nil {
				bad = append(bad, unusable{n, "a link to nothing (" + safefs.Excerpt(to) + " does not exist)"})
			} // else: gone since the glob
		default:
			bad = append(bad, unusable{n, fmt.Sprintf("cannot be looked at (%v)", errors.Unwrap(err))})
		}
	}
	sort.Strings(files)
	return files, bad, nil
}

// notATarget refuses an output that pattern matches: in a batch run again and again (cron), each
// run's outputs would be the next run's targets, and an output named as its own target would
// fail every run until quarantined. Both are compared as absolute paths.
func notATarget(pattern, output string) error {
	if matches(pattern, output) {
		return fmt.Errorf("output_pattern puts output %s where target_pattern %q finds targets: each run's outputs would be the next run's targets; write the outputs to another folder or give them another extension", output, pattern)
	}
	return nil
}

// matches reports whether pattern matches path, both made absolute and with links in their
// folders resolved (an output folder that is a link to the inbox is the inbox).
func matches(pattern, path string) bool {
	real := func(p string) string {
		abs, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
			return filepath.Join(dir, filepath.Base(abs))
		}
		return abs
	}
	for _, pat := range []string{pattern, real(pattern)} {
		for _, p := range []string{path, real(path)} {
			ap, err1 := filepath.Abs(pat)
			aq, err2 := filepath.Abs(p)
			if ok, _ := filepath.Match(ap, aq); err1 == nil && err2 == nil && ok {
				return true
			}
		}
	}
	return false
}

// name is FaceFusion's get_file_name: the base name without its extension.
func name(path string) string {
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// apart is the advice for two entries given one output: the placeholders missing from pattern
// that tell them apart.
func apart(pattern string, a, b Entry) string {
	has := func(p string) bool { return strings.Contains(pattern, "{"+p+"}") }
	var add []string
	switch {
	case a.Target != b.Target:
		if !has("target_name") {
			add = append(add, "{target_name}")
		}
		if !has("target_extension") && !strings.EqualFold(filepath.Ext(a.Target), filepath.Ext(b.Target)) {
			add = append(add, "{target_extension}")
		}
		if len(add) == 0 {
			return fmt.Sprintf("the targets have one name and extension in two folders (%s, %s): add {index}, or match one folder", filepath.Dir(a.Target), filepath.Dir(b.Target))
		}
	case len(a.Sources) > 0 && len(b.Sources) > 0:
		if has("source_name") || name(a.Sources[0]) == name(b.Sources[0]) {
			return fmt.Sprintf("the sources have one name in two folders (%s, %s): add {index}, or match one folder", filepath.Dir(a.Sources[0]), filepath.Dir(b.Sources[0]))
		}
		add = append(add, "{source_name}")
	default:
		add = append(add, "{index}")
	}
	return "add " + strings.Join(add, " and ")
}

// Names come from whoever put the files in the inbox: one with a control character (a terminal
// escape, a line break) is quoted, never printed as it is.
func describe(e Entry) string {
	name := func(p string) string { return safefs.Name(p, safefs.PathLen) }
	if e.Target == "" && len(e.Sources) > 0 {
		return "source " + name(e.Sources[0])
	}
	if len(e.Sources) > 0 {
		return fmt.Sprintf("source %s with target %s", name(e.Sources[0]), name(e.Target))
	}
	return "target " + name(e.Target)
}
