package outpath

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// TempPath is a hidden name beside path with the same extension (so ffmpeg picks the same
// container): .NAME.TAG-RANDOM.EXT, with 63 random bits no one else can predict, so that no
// one can plant a file or link there beforehand. CreateTemp makes it.
func TempPath(path, tag string) string {
	dir, base := filepath.Split(path)
	ext := filepath.Ext(base)
	var b [8]byte
	rand.Read(b[:])
	n := binary.BigEndian.Uint64(b[:]) >> 1
	return filepath.Join(dir, fmt.Sprintf(".%s.%s-%d%s", strings.TrimSuffix(base, ext), tag, n, ext))
}

// Temp is the file an output is written into before Commit moves it into place: beside
// the output (a rename stays on one file system), under an unpredictable name (TempPath),
// created exclusively (O_EXCL: a file or link planted there makes the creation fail, never
// the write land elsewhere), and held open, so that ffmpeg writes through the descriptor
// (video.JoinFile; an image output's ffmpeg is given the name, as FaceFusion's command is)
// and Commit checks that the name still is this file.
type Temp struct {
	Path string
	File *os.File
}

// CreateTemp creates the temp file path (TempPath), which must not exist, with the mode a new
// file gets (rw-rw-rw- less the umask).
func CreateTemp(path string) (*Temp, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o666)
	if err != nil {
		return nil, fmt.Errorf("cannot create the output's temp file %s: %w", path, unwrapPath(err))
	}
	return &Temp{Path: path, File: f}, nil
}

// Check refuses a temp file whose name no longer is the file CreateTemp made (another user who
// can write into the output's folder replaced it, with a link or a file of theirs, or a cleaner
// of temp files removed it): nothing under that name is the program's to commit, read or
// remove. Neither the settings nor the input is at fault: the output folder's environment is
// (fault.Environment), and a batch-run stops rather than hold it against the target.
func (t *Temp) Check() error {
	fst, err := t.File.Stat()
	if err != nil {
		return err
	}
	lst, err := os.Lstat(t.Path)
	if err == nil && lst.Mode().IsRegular() && os.SameFile(lst, fst) {
		return nil
	}
	what := "is gone"
	if err == nil {
		what = "was replaced by " + safefs.KindOf(lst.Mode()) + " facefusion did not make"
	}
	return fault.AsEnvironment(fmt.Errorf("the output's temp file %s %s while the job ran: nothing was committed; make sure no one else can write into %s (chmod o-w,g-w), or choose another -o",
		t.Path, what, filepath.Dir(t.Path)))
}

// Remove removes the temp file, only while its name still is the file made, and closes it
// (the room it took comes back only then); a second call does nothing.
func (t *Temp) Remove() {
	if t.Check() == nil {
		os.Remove(t.Path)
	}
	t.File.Close()
}

// IsTemp reports whether path is one of the names TempPath gives beside output
// (.NAME.TAG-DIGITS.EXT): the only names beside an output the program may remove when a killed
// run left them (and then only its own regular files, lustre.JobDir.CleanStale).
func IsTemp(path, output string) bool {
	if a, err := filepath.Abs(path); err == nil {
		path = a
	}
	if a, err := filepath.Abs(output); err == nil {
		output = a
	}
	dir, base := filepath.Split(output)
	ext := filepath.Ext(base)
	pd, pb := filepath.Split(path)
	prefix := "." + strings.TrimSuffix(base, ext) + "."
	if filepath.Clean(pd) != filepath.Clean(dir) || !strings.HasPrefix(pb, prefix) || !strings.HasSuffix(pb, ext) {
		return false
	}
	tag, random, ok := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(pb, prefix), ext), "-")
	if !ok || tag == "" || strings.ContainsAny(tag, "./") {
		return false
	}
	for _, r := range random {
		if r < '0' || r > '9' {
			return false
		}
	}
	return random != ""
}

// Commit moves a finished temp file to its final path, after checking that its name still is
// the file made (Temp.Check): fsync, rename (never over an existing file unless force),
// fsync of the folder. The temp file is closed.
func Commit(tmp *Temp, final string, force bool) error {
	defer tmp.File.Close()
	if err := tmp.Check(); err != nil {
		return err
	}
	if err := tmp.File.Sync(); err != nil { // NFS and Lustre may say only now that there was no room
		return fault.AsNoRoom(fmt.Errorf("output %s: %w", final, err), filepath.Dir(final))
	}
	fst, err := tmp.File.Stat()
	if err != nil {
		return fmt.Errorf("output %s: %w", final, err)
	}
	if force {
		err = os.Rename(tmp.Path, final)
	} else {
		// link fails if final appeared meanwhile: never overwrite without --force
		if err = os.Link(tmp.Path, final); err == nil {
			if lst, lerr := os.Lstat(tmp.Path); lerr == nil && os.SameFile(lst, fst) {
				os.Remove(tmp.Path)
			}
		}
	}
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fault.AsUsage(fmt.Errorf("output %s appeared while the job ran: pass --force to overwrite it", final))
		}
		return fault.AsNoRoom(fmt.Errorf("output %s: %w", final, err), filepath.Dir(final))
	}
	// The name moved is the one checked a moment ago, unless someone swapped it in between.
	if lst, err := os.Lstat(final); err != nil || !os.SameFile(fst, lst) {
		return fault.AsEnvironment(fmt.Errorf("output %s is not the file facefusion wrote: its temp file %s was replaced as it was moved into place; make sure no one else can write into %s, or choose another -o",
			final, tmp.Path, filepath.Dir(final)))
	}
	if d, err := os.Open(filepath.Dir(final)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
