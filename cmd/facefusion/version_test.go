package main

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// -v, --version and version print the program, its version and the commit this test binary
// was built from (TestMain builds it from this checkout), and exit 0.
func TestVersion(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	line := regexp.MustCompile(`^facefusion-hpc ` + regexp.QuoteMeta(version) + ` \(commit ([0-9a-f]{40})(-dirty)?, go[^ ]+ [a-z0-9]+/[a-z0-9]+\)\n$`)
	for _, arg := range []string{"-v", "--version", "version"} {
		r := facefusion(t, arg)
		m := line.FindStringSubmatch(r.stdout)
		if r.code != 0 || r.stderr != "" || m == nil {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", arg, r.code, r.stdout, r.stderr)
		}
		if m[1] != strings.TrimSpace(string(head)) {
			t.Errorf("%s: commit %s, want HEAD %s", arg, m[1], head)
		}
	}
}
