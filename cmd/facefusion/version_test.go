package main

import (
	"regexp"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
)

// -v, --version and version print the program, its version and the commit this test binary
// was built from (TestMain builds it from this checkout), and exit 0.
func TestVersion(t *testing.T) {
	head := clitest.BuiltAt
	line := regexp.MustCompile(`^facefusion-hpc ` + regexp.QuoteMeta(version) + ` \(commit ([0-9a-f]{40})(-dirty)?, go[^ ]+ [a-z0-9]+/[a-z0-9]+\)\n$`)
	for _, arg := range []string{"-v", "--version", "version"} {
		r := clitest.Run(t, arg)
		m := line.FindStringSubmatch(r.Stdout)
		if r.Code != 0 || r.Stderr != "" || m == nil {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", arg, r.Code, r.Stdout, r.Stderr)
		}
		if m[1] != head {
			t.Errorf("%s: commit %s, want %s, HEAD when TestMain built it", arg, m[1], head)
		}
	}
}
