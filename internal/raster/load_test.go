package raster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Without internal/jpeg linked (raster's own tests do not import it) a JPEG file is refused by
// name, saying what the program lacks, rather than read as a broken PNG.
func TestLoadWithoutJPEGDecoder(t *testing.T) {
	if decodeJPEG != nil {
		t.Fatal("raster's tests have a JPEG decoder registered: this test needs none")
	}
	p := filepath.Join(t.TempDir(), "x.jpg")
	if err := os.WriteFile(p, []byte{0xff, 0xd8, 0xff, 0xe0, 0, 2}, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(p)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "internal/jpeg") {
		t.Errorf("Load of a JPEG without a decoder: %v", err)
	}
}
