// Package outpath keeps a run's writes safe at the paths the user named: it refuses an output
// (or run report, or metrics file) that exists, is an input, or leads through a link before any
// work, and writes the output into a temp file beside it that it moves into place at the end.
package outpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// ReportFile is where the run report of cfg goes: report_path, else beside the output.
func ReportFile(cfg job.Config) string {
	if cfg.ReportPath != "" {
		return cfg.ReportPath
	}
	return report.Path(cfg.OutputPath)
}

// Check refuses an existing output without force and an unwritable output folder,
// before any work is done.
func Check(cfg job.Config) error {
	path, force := cfg.OutputPath, cfg.Force
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			return fault.AsUsage(fmt.Errorf("output %s is a folder: give a file name", path))
		}
		if !force {
			return fault.AsUsage(fmt.Errorf("output %s already exists: pass --force to overwrite it, or choose another -o", path))
		}
	}
	// The run's records go into folders that must exist: said now, not after the last frame.
	for _, f := range []struct{ flag, path string }{{"--report-path", cfg.ReportPath}, {"--metrics-path", cfg.MetricsPath}} {
		if f.path == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(f.path)); err != nil || !st.IsDir() {
			return fault.AsUsage(fmt.Errorf("%s %s: the folder %s does not exist: create it, or give a path in a folder that exists", f.flag, f.path, filepath.Dir(f.path)))
		}
		if st, err := os.Stat(f.path); err == nil && st.IsDir() {
			return fault.AsUsage(fmt.Errorf("%s %s is a folder: give a file name", f.flag, f.path))
		}
	}
	// The run report is written too: never over a file without --force, unless it is the
	// report of a run of this program that did not finish (a failed or stopped attempt's).
	if rep := ReportFile(cfg); !force && !report.Replaceable(rep) {
		return fault.AsUsage(fmt.Errorf("output %s: its run report %s already exists: pass --force to overwrite both, or choose another -o (or --report-path)", path, rep))
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".facefusion-write-check-*")
	if fault.NoRoom(err) { // a full disk or inode quota: the folder is writable, once there is room
		return fault.AsNoRoom(fmt.Errorf("output folder %s has no room for a new file: %w", dir, unwrapPath(err)), dir)
	}
	if err != nil {
		return fault.AsInput(fmt.Errorf("output folder %s is not writable (%v): create it or choose another -o", dir, unwrapPath(err)))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// CheckNoInput refuses an output, run report or metrics file that is the target or a
// source (with --force the final rename would replace the input with its own swap), or is one
// of the others (the report would replace the video, or the metrics the report), and a report
// or metrics path that names something other than a file (writing as root would replace
// /dev/null). Paths are compared by name and by device and inode, so a symlink or a hard link
// is caught too.
func CheckNoInput(cfg job.Config) error {
	type named struct{ what, path string }
	written := []named{{"-o " + cfg.OutputPath, cfg.OutputPath}, {"its run report " + ReportFile(cfg), ReportFile(cfg)}}
	if cfg.MetricsPath != "" {
		written = append(written, named{"--metrics-path " + cfg.MetricsPath, cfg.MetricsPath})
	}
	inputs := []named{{"the target (-t " + cfg.TargetPath + ")", cfg.TargetPath}}
	for _, s := range cfg.SourcePaths {
		inputs = append(inputs, named{"a source (-s " + s + ")", s})
	}
	for i, w := range written {
		if err := brokenLink(w.path, w.what); err != nil {
			return err
		}
		// Its folder reached through another user's link is that user's choice of place (a
		// folder of the running user's they can read, say): a link at the name itself is
		// replaced by the commit's rename, never written through.
		if err := safefs.ForeignLink(filepath.Dir(w.path)); err != nil {
			return fault.AsUsage(fmt.Errorf("%s: %w: give a path that does not", w.what, err))
		}
		for _, in := range inputs {
			if Same(w.path, in.path) {
				return fault.AsUsage(fmt.Errorf("%s is %s itself (the same file, by name or through a link): writing it would destroy the input, even with --force: choose another path", w.what, in.what))
			}
		}
		for _, o := range written[:i] {
			if Same(w.path, o.path) {
				return fault.AsUsage(fmt.Errorf("%s is %s: one would replace the other: give each its own file", w.what, strings.TrimPrefix(o.what, "its ")))
			}
		}
		if i > 0 {
			if st, err := os.Stat(w.path); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
				return fault.AsUsage(fmt.Errorf("%s is not a regular file (a device, a pipe or a socket), and it would be replaced by one: give a file name", w.what))
			}
		}
	}
	if cfg.JobDir != "" {
		if err := safefs.ForeignLink(cfg.JobDir); err != nil {
			return fault.AsUsage(fmt.Errorf("--job-dir %s: %w: choose another --job-dir", cfg.JobDir, err))
		}
	}
	return nil
}

// brokenLink refuses a path the run writes that is a link to a missing file or a link loop:
// found now, not when the output is committed after the last frame.
func brokenLink(path, what string) error {
	lst, err := os.Lstat(path)
	if err != nil || lst.Mode()&os.ModeSymlink == 0 {
		return nil
	}
	_, err = os.Stat(path)
	to, _ := os.Readlink(path)
	switch {
	case errors.Is(err, syscall.ELOOP):
		return fault.AsUsage(fmt.Errorf("%s is a link loop (a link that leads back to itself): remove the link, or choose another path", what))
	case errors.Is(err, fs.ErrNotExist):
		return fault.AsUsage(fmt.Errorf("%s is a link to a missing file (%s): remove the link, or choose another path", what, safefs.Excerpt(to)))
	}
	return nil
}

// Same reports whether a and b name one file: the same absolute path, or (both existing)
// the same device and inode.
func Same(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	aa, err1 := filepath.Abs(a)
	ab, err2 := filepath.Abs(b)
	if err1 == nil && err2 == nil && aa == ab {
		return true
	}
	sa, err := os.Stat(a)
	if err != nil {
		return false // one that does not exist is no other file
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// unwrapPath is the cause of a path error: the message names the path already.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
