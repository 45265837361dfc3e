package video

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// swappedForLink creates path, then puts a link to a victim's file in its place, as another
// user who can write into the folder could between the creation and ffmpeg's open. It returns
// the created file, and a check that the victim is unchanged.
func swappedForLink(t *testing.T, path string) (*os.File, func()) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	victim := filepath.Join(t.TempDir(), "victim.txt")
	want := []byte("the victim's own bytes\n")
	os.WriteFile(victim, want, 0o644)
	os.Remove(path)
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	return f, func() {
		t.Helper()
		if got, _ := os.ReadFile(victim); !bytes.Equal(got, want) {
			t.Errorf("ffmpeg wrote through the link planted at %s into the victim: %d bytes now", path, len(got))
		}
	}
}

// JoinFile writes into the file it is given, through its descriptor: a link put in place of
// its name meanwhile is not followed, and the container is the one of the name's extension
// (here Matroska, which muxerFor also knows, and FLV, which it does not).
func TestJoinFileWritesThroughTheDescriptor(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: encodes and joins clips with ffmpeg (make test)")
	}
	info := probe(t, clip(t, "bf.mp4"))
	dir := t.TempDir()
	seg := filepath.Join(dir, "seg.nut")
	transcode(t, info, 0, 10, seg, EncodeOptions{Preset: "ultrafast", Quality: DefaultQuality})
	for _, name := range []string{".out.part-1.mkv", ".out.part-2.flv"} {
		path := filepath.Join(dir, name)
		f, unchanged := swappedForLink(t, path)
		scratch := t.TempDir()
		if err := JoinFile(context.Background(), Mux{Scratch: scratch, Times: info.Times, Target: info.Path}, []JoinSegment{{Path: seg}}, f); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		unchanged()
		// What ffmpeg wrote, read through the descriptor (its name in /proc, which ffprobe can open too).
		got := probe(t, fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), f.Fd()))
		if got.Frames != 10 {
			t.Errorf("%s: %d frames written into the created file, want 10", name, got.Frames)
		}
		if ents, _ := os.ReadDir(scratch); len(ents) != 0 {
			t.Errorf("%s: %s left in scratch", name, ents[0].Name())
		}
	}
}

// CreateEncoder makes its file itself, exclusively: a link planted at the name is refused
// (and its target untouched), a link put there while ffmpeg runs is not written through, and a
// regular file of the user's (a failed try's) is replaced.
func TestCreateEncoderNeverWritesThroughALink(t *testing.T) {
	t.Parallel()
	info := probe(t, clip(t, "bf.mp4"))
	dir := t.TempDir()
	opt := EncodeOptions{Width: info.Width, Height: info.Height, FPS: info.FPS, Encoder: "ffv1"}
	victim := filepath.Join(t.TempDir(), "victim.txt")
	want := []byte("the victim's own bytes\n")
	os.WriteFile(victim, want, 0o644)
	unchanged := func() {
		t.Helper()
		if got, _ := os.ReadFile(victim); !bytes.Equal(got, want) {
			t.Errorf("the victim was written: %d bytes", len(got))
		}
	}
	planted := filepath.Join(dir, ".seg-000000.rank0.a1.part.nut")
	os.Symlink(victim, planted)
	if _, err := CreateEncoder(context.Background(), planted, opt); err == nil || !strings.Contains(err.Error(), "a link facefusion did not make") {
		t.Errorf("a link at the segment's name: %v", err)
	}
	unchanged()

	frame := make([]byte, opt.FrameSize())
	for _, before := range []string{"nothing", "own file"} {
		path := filepath.Join(dir, ".seg-000001.rank0.a1.part.nut")
		os.Remove(path)
		if before == "own file" {
			os.WriteFile(path, []byte("a failed try's"), 0o644)
		}
		enc, err := CreateEncoder(context.Background(), path, opt)
		if err != nil {
			t.Fatalf("%s at the name: %v", before, err)
		}
		// Swapped for a link while ffmpeg runs.
		os.Remove(path)
		os.Symlink(victim, path)
		for i := 0; i < 3; i++ {
			if err := enc.Write(frame); err != nil {
				t.Fatal(err)
			}
		}
		if err := enc.Close(); err != nil {
			t.Fatal(err)
		}
		unchanged()
	}
}
