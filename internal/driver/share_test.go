package driver

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/lustre"
)

// A shared frame's per-frame data crosses as it left: the face flag and every identity sum,
// the recognizer's name up to the 255 bytes the header holds; a longer one is refused.
func TestShareHeaderRoundTrip(t *testing.T) {
	for _, c := range []struct {
		kind  byte
		faced bool
		id    lustre.IdentitySums
	}{
		{msgFrame, true, lustre.IdentitySums{Recognizer: "fr_feature", Every: 10, Faces: 2, After: -123456789012, Before: 1 << 40, ToTarget: 7}},
		{msgFrame, false, lustre.IdentitySums{}},
		{msgComplete, false, lustre.IdentitySums{}},
		{msgDiscarded, false, lustre.IdentitySums{Recognizer: string(make([]byte, 255))}},
	} {
		b := make([]byte, headerSize+3)
		if err := putHeader(b, c.kind, c.faced, c.id); err != nil {
			t.Fatal(err)
		}
		kind, faced, id := readHeader(b)
		if kind != c.kind || faced != c.faced || id != c.id {
			t.Errorf("header of (%d, %v, %+v) reads back as (%d, %v, %+v)", c.kind, c.faced, c.id, kind, faced, id)
		}
	}
	if err := putHeader(make([]byte, headerSize), msgFrame, false, lustre.IdentitySums{Recognizer: string(make([]byte, 256))}); err == nil {
		t.Error("a recognizer name of 256 bytes was put in the header")
	}
}
