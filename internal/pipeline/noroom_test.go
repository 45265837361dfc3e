package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/outpath"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// An output folder with room for no more files (a full disk, an inode quota): the write check
// and the image output's temp file each fail as the environment's (exit 4), saying where to
// free room, not as a bad input; nothing is left there.
func TestNoRoomForTheTemp(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "full")
	testenv.TmpfsInodes(t, dir, 1<<20, 1) // its root alone
	cfg := job.Config{OutputPath: filepath.Join(dir, "out.png")}
	_, tempErr := createImageTemp(cfg)
	for what, err := range map[string]error{
		"outpath.Check":   outpath.Check(cfg),
		"createImageTemp": tempErr,
	} {
		if fault.KindOf(err) != fault.Environment || !strings.Contains(err.Error(), "no space left on device") || !strings.Contains(err.Error(), fault.RoomFix(dir)) {
			t.Errorf("%s without room for a file: kind %v: %v; want Environment, the cause and %q", what, fault.KindOf(err), err, fault.RoomFix(dir))
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left in the full folder: %v", ents)
	}
}
