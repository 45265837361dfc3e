package testenv

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// Nobody is the uid and gid of user nobody. The tests run as root (as CI does) and simulate
// another user by giving a file to nobody (GiveToNobody) or by running a command as nobody
// (setpriv --reuid=65534 --regid=65534 --clear-groups).
const Nobody = 65534

// GiveToNobody makes each path another user's: nobody's. A link itself is given, not what it
// leads to (chown -h): a link planted by another user. A chown that fails fails the test.
func GiveToNobody(t testing.TB, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.Lchown(p, Nobody, Nobody); err != nil {
			t.Fatalf("giving %s to nobody (uid %d; the tests run as root): %v", p, Nobody, err)
		}
	}
}

// AsNobody runs the shell script in dir as uid and gid nobody, with no other groups: another
// user at work beside the test's (which runs as root).
func AsNobody(t testing.TB, dir, script string) {
	t.Helper()
	id := strconv.Itoa(Nobody)
	cmd := exec.Command("setpriv", "--reuid="+id, "--regid="+id, "--clear-groups", "sh", "-ec", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as nobody: %s: %v\n%s", script, err, out)
	}
}
