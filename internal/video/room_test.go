package video

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/fault"
)

// encodeSegment encodes n frames of seeded noise into path, as a rank writes a segment, and
// returns Close's error.
func encodeSegment(t *testing.T, path string, n int) error {
	t.Helper()
	opt := EncodeOptions{Width: 64, Height: 48, FPS: Rational{Num: 25, Den: 1}, Encoder: "ffv1"}
	enc, err := CreateEncoder(context.Background(), path, opt)
	if err != nil {
		t.Fatalf("creating %s: %v", path, err)
	}
	rng := rand.New(rand.NewSource(1))
	frame := make([]byte, opt.FrameSize())
	for i := 0; i < n; i++ {
		rng.Read(frame)
		if err := enc.Write(frame); err != nil {
			enc.Close()
			return err
		}
	}
	return enc.Close()
}

// A segment whose file system has room for all but its last bytes (the trailer) is not
// finished, though ffmpeg exits 0 after "Error writing trailer": Close fails, as the
// environment's fault (a full disk, exit 4), naming the folder to free room in.
func TestSegmentOnFullDisk(t *testing.T) {
	ref := filepath.Join(t.TempDir(), "seg"+SegmentExt)
	if err := encodeSegment(t, ref, 10); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(ref)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size()%4096 == 0 {
		t.Fatalf("the segment is %d bytes, a whole number of pages: no trailer is cut", st.Size())
	}
	// Every page but the one the segment's last bytes take.
	dir := tmpfs(t, st.Size()/4096*4096)
	err = encodeSegment(t, filepath.Join(dir, "seg"+SegmentExt), 10)
	if err == nil {
		t.Fatalf("a segment %d bytes short of room was taken as finished", st.Size()%4096)
	}
	t.Logf("the segment's error: %v", err)
	if k := fault.KindOf(err); k != fault.Environment || !strings.Contains(strings.ToLower(err.Error()), "no space left on device") || !strings.Contains(err.Error(), fault.RoomFix(dir)) {
		t.Errorf("a segment without room: kind %d, %v; want Environment, no space left on device and %q", k, err, fault.RoomFix(dir))
	}
}
