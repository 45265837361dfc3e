package mp4

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// tiny makes a 64x48 clip of 20 frames at 29.97 fps with B-frames (libx264's default preset)
// and audio, with the video's clock 1/30000; faststart puts the index first.
func tiny(t testing.TB, faststart bool) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tiny.mp4")
	args := []string{"-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=30000/1001",
		"-f", "lavfi", "-i", "sine=sample_rate=48000", "-frames:v", "20", "-t", "0.667", "-c:v", "libx264", "-g", "8",
		"-pix_fmt", "yuv420p", "-c:a", "aac", "-video_track_timescale", "30000"}
	if faststart {
		args = append(args, "-movflags", "+faststart")
	}
	if out, err := exec.Command(testenv.Tool(t, "ffmpeg"), append(args, p)...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
	return p
}

// ffprobeSamples is ffprobe's view of stream's packets, in the form sampleLines writes.
func ffprobeSamples(t *testing.T, path, stream string) []string {
	t.Helper()
	out, err := exec.Command(testenv.Tool(t, "ffprobe"), "-v", "error", "-select_streams", stream,
		"-show_entries", "packet=pts,dts,size,pos,flags", "-of", "csv=p=0", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(l, ",") // pts,dts,size,pos,flags
		if len(f) < 5 {
			continue // a packet's side data, on a line of its own
		}
		lines = append(lines, fmt.Sprintf("pts %s dts %s size %s pos %s key %v", f[0], f[1], f[2], f[3], strings.HasPrefix(f[4], "K")))
	}
	return lines
}

// sampleLines is t's samples with ffprobe's times: the first edit's media time is the
// presentation's 0.
func sampleLines(t *Track) []string {
	var lines []string
	for _, s := range t.Samples {
		dts := s.DTS - t.MediaTime
		lines = append(lines, fmt.Sprintf("pts %d dts %d size %d pos %d key %v", dts+int64(s.CTS), dts, s.Size, s.Offset, s.Sync))
	}
	return lines
}

// The sample tables read from ffmpeg's MP4s (index last, and first) are ffprobe's packets:
// sizes, positions, decode and presentation times, keyframes, for the video (B-frames) and
// the audio; ReadFile (bytes) and ReadIndex (the index alone) agree.
func TestReadTracksMatchFFprobe(t *testing.T) {
	for _, faststart := range []bool{false, true} {
		path := tiny(t, faststart)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := ReadFile(b)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		index, err := ReadIndex(f, int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		if len(index.Tracks) != 2 || len(whole.Tracks) != 2 {
			t.Fatalf("faststart %v: %d and %d tracks, want 2", faststart, len(index.Tracks), len(whole.Tracks))
		}
		v := index.Video()
		if v == nil || v.Timescale != 30000 || len(v.Samples) != 20 {
			t.Fatalf("faststart %v: video track %+v, want 20 samples at 1/30000", faststart, v)
		}
		// The sound track's samples are read on demand.
		if a := index.Tracks[1]; a.Samples != nil || a.Count == 0 {
			t.Fatalf("faststart %v: the sound track came with %d samples read (count %d); they are read on demand", faststart, len(a.Samples), a.Count)
		}
		for _, f := range []*File{index, whole} {
			if err := f.Tracks[1].LoadSamples(int64(len(b))); err != nil || len(f.Tracks[1].Samples) != f.Tracks[1].Count {
				t.Fatalf("faststart %v: the sound track's samples: %v, %d of %d", faststart, err, len(f.Tracks[1].Samples), f.Tracks[1].Count)
			}
		}
		for i, stream := range []string{"v", "a"} {
			got, want := sampleLines(index.Tracks[i]), ffprobeSamples(t, path, stream)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("faststart %v, stream %s: read\n%s\nffprobe\n%s", faststart, stream, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if strings.Join(sampleLines(whole.Tracks[i]), "\n") != strings.Join(got, "\n") {
				t.Errorf("faststart %v, stream %s: ReadFile and ReadIndex differ", faststart, stream)
			}
		}
		// Some frames are B-frames, shown after they decode, and not every frame is a keyframe.
		cts, nonKey := false, false
		for _, s := range v.Samples {
			cts = cts || s.CTS != 0
			nonKey = nonKey || !s.Sync
		}
		if !cts || !nonKey {
			t.Errorf("faststart %v: composition offsets %v, non-keyframes %v: the clip lost its B-frames", faststart, cts, nonKey)
		}
	}
}

// Boxes encode back to their own bytes, and a cut-off file is an error that names the box.
func TestBoxesRoundTrip(t *testing.T) {
	b, err := os.ReadFile(tiny(t, true))
	if err != nil {
		t.Fatal(err)
	}
	boxes, err := Parse(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	var again []byte
	for _, x := range boxes {
		again = append(again, x.Encode()...)
	}
	if string(again) != string(b) {
		t.Error("parsing and encoding the boxes changed the file")
	}
	moov := Find(boxes, "moov")
	cut := b[:moov.Offset+moov.Size-5]
	if _, err := Parse(cut, 0); err == nil || !strings.Contains(err.Error(), `"moov"`) {
		t.Errorf("a cut-off moov: %v, want an error naming it", err)
	}
	if h := MdatHeader(100); len(h) != 16 || strconv.Itoa(int(h[15])) != "116" {
		t.Errorf("MdatHeader(100) = %x", h)
	}
}

// pcm makes a MOV of secs seconds of 64x48 video and 48 kHz PCM sound: a sample per audio
// sample, of fixed size.
func pcm(t testing.TB, secs int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pcm.mov")
	args := []string{"-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25",
		"-f", "lavfi", "-i", "sine=sample_rate=48000", "-t", strconv.Itoa(secs), "-c:v", "libx264", "-preset", "ultrafast",
		"-pix_fmt", "yuv420p", "-c:a", "pcm_s16le", p}
	if out, err := exec.Command(testenv.Tool(t, "ffmpeg"), args...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
	return p
}

// Extents, which checks a chunk at a time without building a track's samples, agrees with the
// samples themselves: every sample of the track lies in [first sample, end of the last), and
// the range narrowed by a byte at either end is refused; for variable-size samples (H.264, AAC)
// and the fixed-size ones of PCM, whose chunks are not walked sample by sample.
func TestExtentsMatchTheSamples(t *testing.T) {
	for _, path := range []string{tiny(t, false), pcm(t, 1)} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := ReadFile(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range f.Tracks {
			if err := tr.LoadSamples(int64(len(b))); err != nil {
				t.Fatal(err)
			}
			from, to := int64(len(b)), int64(0)
			for _, s := range tr.Samples {
				from, to = min(from, s.Offset), max(to, s.Offset+int64(s.Size))
			}
			what := fmt.Sprintf("%s track %d (%s, %d samples)", filepath.Base(path), tr.ID, tr.Handler, tr.Count)
			if err := tr.Extents(from, to); err != nil {
				t.Errorf("%s: Extents(%d, %d): %v", what, from, to, err)
			}
			for _, r := range [][2]int64{{from + 1, to}, {from, to - 1}} {
				if err := tr.Extents(r[0], r[1]); err == nil {
					t.Errorf("%s: Extents(%d, %d) passed, but a sample lies outside", what, r[0], r[1])
				}
			}
		}
	}
}

// BenchmarkReadIndexPCM reads the index of a MOV with a minute of 48 kHz PCM sound (2.88
// million sound samples), as the parallel join reads its side file.
func BenchmarkReadIndexPCM(b *testing.B) {
	path := pcm(b, 60)
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadIndex(f, st.Size()); err != nil {
			b.Fatal(err)
		}
	}
}
