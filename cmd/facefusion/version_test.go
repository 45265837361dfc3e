package main

import (
	"regexp"
	"testing"
)

// -v, --version and version print the program, its version and the commit this test binary
// was built from (TestMain builds it from this checkout), and exit 0.
func TestVersion(t *testing.T) {
	head := builtAt
	line := regexp.MustCompile(`^facefusion-hpc ` + regexp.QuoteMeta(version) + ` \(commit ([0-9a-f]{40})(-dirty)?, go[^ ]+ [a-z0-9]+/[a-z0-9]+\)\n$`)
	for _, arg := range []string{"-v", "--version", "version"} {
		r := facefusion(t, arg)
		m := line.FindStringSubmatch(r.stdout)
		if r.code != 0 || r.stderr != "" || m == nil {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", arg, r.code, r.stdout, r.stderr)
		}
		if m[1] != head {
			t.Errorf("%s: commit %s, want %s, HEAD when TestMain built it", arg, m[1], head)
		}
	}
}
