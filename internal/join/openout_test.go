package join

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A rank opens the join's output only when it is the file rank 0 created (its inode): never a
// link put at the name, never another file, and the victim behind a link is untouched.
func TestJoinOutputOpenedOnlyWhenRankZeros(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, ".out.part-1.mp4")
	os.WriteFile(out, nil, 0o644)
	st, _ := os.Stat(out)
	ins := &instruction{Out: out, Inode: st.Sys().(*syscall.Stat_t).Ino}
	f, err := openOut(ins, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	// Held open, as rank 0 holds it: its inode number is not given to another file meanwhile.
	held, _ := os.Open(out)
	defer held.Close()
	victim := filepath.Join(dir, "victim.txt")
	os.WriteFile(victim, []byte("theirs"), 0o644)
	os.Remove(out)
	os.Symlink(victim, out)
	if _, err := openOut(ins, os.O_TRUNC); err == nil {
		t.Error("the output opened through a link")
	}
	os.Remove(out)
	os.WriteFile(out, nil, 0o644) // another file under the name
	if _, err := openOut(ins, 0); err == nil || !strings.Contains(err.Error(), "not the file rank 0 created") {
		t.Errorf("another file under the output's name: %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "theirs" {
		t.Errorf("the victim changed: %q", b)
	}
}
