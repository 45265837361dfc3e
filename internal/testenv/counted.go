package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// countedC is a program that appends a line to LOG and then becomes REAL with its own
// arguments: compiled, so that what the code under test finds at the tool's path is a program,
// as a real ffmpeg is (video keeps facts about programs only, not about scripts).
const countedC = `#include <fcntl.h>
#include <unistd.h>
int main(int argc, char **argv) {
	(void)argc;
	int fd = open(LOG, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd >= 0) {
		if (write(fd, "run\n", 4) < 0) {}
		close(fd);
	}
	execv(REAL, argv);
	return 127;
}
`

// Counted is a program that runs the real tool name (found as Tool finds it) and counts its
// runs: the path of a compiled program to put where the code under test looks for the tool,
// and a function that says how many times it has run since the last call. The tool itself runs,
// with the same arguments, input and output: only the count is added.
func Counted(t testing.TB, name string) (path string, runs func() int) {
	t.Helper()
	real, dir := Tool(t, name), t.TempDir()
	log, path, src := filepath.Join(dir, "runs"), filepath.Join(dir, name), filepath.Join(dir, name+".c")
	defines := "#define LOG " + strconv.Quote(log) + "\n#define REAL " + strconv.Quote(real) + "\n"
	if err := os.WriteFile(src, []byte(defines+countedC), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(Tool(t, "cc"), "-o", path, src).CombinedOutput(); err != nil {
		t.Fatalf("compiling the counted %s: %v: %s", name, err, out)
	}
	return path, countRuns(log)
}

// CountedWrapper is Counted as a shell script that execs the real tool, as a cluster's wrapper
// does (Apptainer's, an Lmod shim): `#!/bin/sh`, the count, `exec TOOL "$@"`.
func CountedWrapper(t testing.TB, name string) (path string, runs func() int) {
	t.Helper()
	real, dir := Tool(t, name), t.TempDir()
	log, path := filepath.Join(dir, "runs"), filepath.Join(dir, name)
	script := "#!/bin/sh\necho run >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, countRuns(log)
}

// countRuns says how many lines the counted tool appended to log since it was last asked.
func countRuns(log string) func() int {
	return func() int {
		data, _ := os.ReadFile(log)
		os.Remove(log)
		return strings.Count(string(data), "run\n")
	}
}
