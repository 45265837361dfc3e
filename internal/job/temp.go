package job

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// TempDir is the folder for the program's temp files that need not be on the shared file
// system (temp_path, --temp-path): given, or the system's ($TMPDIR, else /tmp), as FaceFusion's
// default is Python's tempfile.gettempdir(). The job folder and the join's temp file beside
// the output are not temp files in this sense: they stay on the shared file system.
func (c *Config) TempDir() string {
	if c.TempPath != "" {
		return c.TempPath
	}
	return os.TempDir()
}

// CheckTempDir refuses a temp folder that does not exist or cannot be written to, before any
// work: otherwise the first temp file would fail later, far from the setting's name.
func (c *Config) CheckTempDir() error {
	dir := c.TempDir()
	name := "--temp-path " + dir
	if c.TempPath == "" {
		name = "the temp folder " + dir + " ($TMPDIR, or set --temp-path)"
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s: no such folder: create it, or give a node-local folder that exists", name)
	case err != nil:
		return fmt.Errorf("%s: %v", name, err)
	case !st.IsDir():
		return fmt.Errorf("%s is not a folder: give a node-local folder", name)
	}
	// access(2), not a test file: the check leaves the folder as it was.
	if err := syscall.Access(dir, writeSearch); err != nil {
		return fmt.Errorf("%s is not writable (%v): give a folder you can write to", name, err)
	}
	return nil
}

// writeSearch is access(2)'s W_OK|X_OK: files can be made in the folder.
const writeSearch = 0x2 | 0x1
