package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is the program's version: the one place it is written.
const version = "0.1.0"

// programName is how the program names itself, FaceFusion's "FaceFusion 3.8.1" being its model.
const programName = "facefusion-hpc"

// commit is the git commit the binary was built from, with "-dirty" when the working tree had
// changes Go saw at build time; "unknown" when it was built outside a git checkout (or with
// -buildvcs=false).
func commit() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}

// cmdVersion is `facefusion version` (and -v, --version): the name, the version and the commit.
func cmdVersion(w io.Writer) {
	fmt.Fprintf(w, "%s %s (commit %s, %s %s/%s)\n", programName, version, commit(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
