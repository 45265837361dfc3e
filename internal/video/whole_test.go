package video

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// tmpfs mounts a tmpfs of size bytes on a new folder and unmounts it when the test ends: a
// file system that fills up for real. The tests run as root; a mount that fails fails the test.
func tmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small")
	testenv.Tmpfs(t, dir, size)
	return dir
}

// wholeClip writes a 320x240 clip of 100 frames with a tone into dir as name (its extension
// names the container; faststart moves an MP4's index to the front).
func wholeClip(t *testing.T, dir, name string, faststart bool) string {
	t.Helper()
	p := filepath.Join(dir, name)
	args := []string{"-f", "lavfi", "-i", "testsrc2=s=320x240:r=25", "-f", "lavfi", "-i", "sine=f=440:r=48000",
		"-frames:v", "100", "-t", "4", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac"}
	if faststart {
		args = append(args, "-movflags", "+faststart")
	}
	ffmpegRun(t, append(args, p)...)
	return p
}

// CheckWhole passes a whole output (Matroska by its packets, MP4 by its index, either place of
// the index) and refuses one cut anywhere (before Matroska's Cues, with every packet there; the
// last few hundred bytes; half), one with a frame fewer or more than the plan's, of another
// size, or lacking a stream the plan carries.
func TestCheckWhole(t *testing.T) {
	testenv.Full(t, "ffmpeg's output check on whole files")
	ctx := context.Background()
	dir := t.TempDir()
	for _, tc := range []struct {
		name      string
		faststart bool
	}{{"out.mkv", false}, {"out.mp4", false}, {"fast.mp4", true}} {
		t.Run(tc.name, func(t *testing.T) {
			p := wholeClip(t, dir, tc.name, tc.faststart)
			info := probe(t, p)
			var keep []Carry
			for _, s := range info.Others {
				keep = append(keep, Carry{Stream: s})
			}
			if len(keep) != 1 || keep[0].Type != "audio" {
				t.Fatalf("the clip's other streams are %v, want one audio stream", info.Others)
			}
			want := Whole{Frames: 100, Width: 320, Height: 240, Carried: keep}
			if err := CheckWhole(ctx, p, want); err != nil {
				t.Fatalf("a whole file: %v", err)
			}
			refused := func(what string, path string, w Whole, detail string) {
				t.Helper()
				err := CheckWhole(ctx, path, w)
				var ie *IncompleteError
				if !errors.As(err, &ie) {
					t.Errorf("%s: CheckWhole = %v, want an *IncompleteError", what, err)
					return
				}
				if !strings.Contains(err.Error(), detail) {
					t.Errorf("%s: %v, want it to say %q", what, err, detail)
				}
			}
			refused("a frame more planned", p, Whole{Frames: 101, Carried: keep}, "holds 100 of the job's 101 frames")
			refused("another size planned", p, Whole{Frames: 100, Width: 640, Height: 480}, "320x240, not 640x480")
			sub := Carry{Stream: Stream{Index: 2, Type: "subtitle", Codec: "subrip"}}
			refused("a subtitle planned", p, Whole{Frames: 100, Carried: append(keep, sub)}, "lacks the target's #2 subtitle subrip")
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			cuts := []int{len(data) - 300, len(data) / 2}
			if filepath.Ext(p) == ".mkv" {
				// Right before its Cues, the index its trailer writes: every packet is there.
				cues := bytes.LastIndex(data, []byte{0x1c, 0x53, 0xbb, 0x6b})
				if cues < len(data)/2 {
					t.Fatalf("no Cues element near the end of %s", p)
				}
				cuts = append(cuts, cues)
			}
			for _, keepBytes := range cuts {
				cut := filepath.Join(dir, "cut-"+strconv.Itoa(keepBytes)+"-"+tc.name)
				if err := os.WriteFile(cut, data[:keepBytes], 0o644); err != nil {
					t.Fatal(err)
				}
				refused("cut to "+strconv.Itoa(keepBytes)+" bytes", cut, want, "not whole")
			}
		})
	}
}

// A serial join into a file system with room for all but the end of the output fails, though
// ffmpeg may exit 0 after "Error writing trailer", and what it left there is not whole.
func TestJoinOnFullDisk(t *testing.T) {
	testenv.Full(t, "joins into a full tmpfs")
	ctx := context.Background()
	src := wholeClip(t, t.TempDir(), "src.mkv", false)
	info := probe(t, src)
	var keep []Carry
	for _, s := range info.Others {
		keep = append(keep, Carry{Stream: s})
	}
	join := func(out string) error {
		// The target is its own segment: the join takes only its video from it.
		return Join(ctx, Mux{Times: info.Times, Target: src, Keep: keep}, []JoinSegment{{Path: src}}, out)
	}
	ref := filepath.Join(t.TempDir(), "ref.mkv")
	if err := join(ref); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(ref)
	if err != nil {
		t.Fatal(err)
	}
	want := Whole{Frames: info.Frames, Width: info.Width, Height: info.Height, Carried: keep}
	if err := CheckWhole(ctx, ref, want); err != nil {
		t.Fatalf("the join with room: %v", err)
	}
	// Every page but the one the output's last bytes (its index) would take.
	out := filepath.Join(tmpfs(t, (st.Size()-1)/4096*4096), "out.mkv")
	err = join(out)
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "no space left on device") {
		t.Fatalf("a join into a file system %d bytes short: %v, want an error naming no space left on device", st.Size()%4096, err)
	}
	t.Logf("the join's error: %v", err)
	var ie *IncompleteError
	if err := CheckWhole(ctx, out, want); !errors.As(err, &ie) {
		t.Errorf("what the join left on the full file system: CheckWhole = %v, want an *IncompleteError", err)
	}
}

// CheckWholeFile reads only through the descriptor: a FIFO put at the file's name after it was
// made (another user who can write into its folder) neither hangs it nor is read; the answer
// is the real file's, for the container of each kind of check (MP4's index, Matroska's
// packets). CheckWhole of the FIFO's name refuses it without blocking.
func TestCheckWholeFileIgnoresItsName(t *testing.T) {
	testenv.Full(t, "ffmpeg's output check on whole files")
	dir := t.TempDir()
	for _, name := range []string{"out.mkv", "out.mp4"} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			p := wholeClip(t, dir, name, false)
			want := Whole{Frames: 100, Width: 320, Height: 240}
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(p, 0o666); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if err := CheckWholeFile(ctx, f, want); err != nil {
				t.Errorf("the file under a FIFO's name: %v", err)
			}
			want.Frames = 99
			var ie *IncompleteError
			if err := CheckWholeFile(ctx, f, want); !errors.As(err, &ie) || !strings.Contains(err.Error(), "100 of the job's 99 frames") {
				t.Errorf("a frame count that is not the file's: %v", err)
			}
			if err := CheckWhole(ctx, p, want); !errors.As(err, &ie) || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("CheckWhole of a FIFO: %v", err)
			}
			if ctx.Err() != nil { // the context is the hang guard: a read of the FIFO would wait on
				t.Errorf("a read waited on the FIFO for %s", time.Since(start))
			}
		})
	}
}

// CheckImage passes a PNG and a JPEG at their size and refuses them cut short or checked for
// another size.
func TestCheckImage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"whole.png", "whole.jpg"} {
		p := filepath.Join(dir, name)
		cmd := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x48", "-frames:v", "1", p)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg: %v: %s", err, out)
		}
		check := func(w, h int) error {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			return CheckImage(f, w, h)
		}
		if err := check(64, 48); err != nil {
			t.Errorf("%s as written: %v", name, err)
		}
		if err := check(32, 24); err == nil || !strings.Contains(err.Error(), "not 32x24") {
			t.Errorf("%s checked for 32x24: %v, want its size refused", name, err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data[:len(data)-20], 0o644); err != nil {
			t.Fatal(err)
		}
		var ie *IncompleteError
		if err := check(64, 48); !errors.As(err, &ie) {
			t.Errorf("%s cut 20 bytes short: CheckImage = %v, want an *IncompleteError", name, err)
		}
	}
}
