package video

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CheckOutput finds, on two frames, what ffmpeg would refuse only at a job's final mux.
func TestCheckOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: ffmpeg's output check on every container (make test)")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the check's own folder goes: it must be gone afterwards
	dir := t.TempDir()
	pcm := clip(t, "pcm3.mkv") // PCM audio: copied into .mkv, AAC in .mp4, nothing in .webm
	x264 := EncodeOptions{Encoder: "libx264", Quality: DefaultQuality, Preset: "veryfast", FPS: Rational{25, 1}, Width: 64, Height: 48}
	with := func(f func(*EncodeOptions)) EncodeOptions { o := x264; f(&o); return o }
	vp9 := with(func(o *EncodeOptions) { o.Encoder, o.Preset = "libvpx-vp9", "" })
	for _, c := range []struct {
		name, out string
		opt       EncodeOptions
		audio     string
		want      OutputProblem // 0: accepted
		detail    string
	}{
		{"x264 in mp4", "o.mp4", x264, "", 0, ""},
		{"x264 in mp4 with PCM audio (as AAC)", "o.mp4", x264, pcm, 0, ""},
		{"x264 in mkv with audio copied", "o.MKV", x264, pcm, 0, ""},
		{"ffv1 in mkv", "o.mkv", with(func(o *EncodeOptions) { o.Encoder = "ffv1" }), "", 0, ""},
		{"unknown extension", "o.xyz", x264, "", NoContainer, "suitable output format"},
		{"no extension", "output", x264, "", NoContainer, ""},
		{"an image format", "o.bmp", x264, "", ImageContainer, ""},
		{"ffv1 in mp4", "o.mp4", with(func(o *EncodeOptions) { o.Encoder = "ffv1" }), "", CodecNotInContainer, "codec not currently supported in container"},
		{"x264 in webm", "o.webm", x264, "", CodecNotInContainer, "WebM"},
		{"unknown preset", "o.mp4", with(func(o *EncodeOptions) { o.Preset = "ultrafastest" }), "", BadPreset, "ultrafastest"},
		{"unknown encoder", "o.mp4", with(func(o *EncodeOptions) { o.Encoder = "no_such_encoder" }), "", UnknownEncoder, "no_such_encoder"},
		{"PCM audio in webm", "o.webm", vp9, pcm, AudioNotInContainer, "WebM"},
		{"x264 in ts", "o.ts", x264, "", 0, ""},
		{"PCM audio in ts (stored as data)", "o.ts", x264, pcm, AudioNotInContainer, "dropped"},
		{"ffv1 in ts (a data stream)", "o.ts", with(func(o *EncodeOptions) { o.Encoder = "ffv1" }), "", NotReadable, "does not read back"},
		{"raw yuv (no frame size)", "o.yuv", x264, "", NotReadable, "does not read back"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := checkOutput(t, filepath.Join(dir, c.out), c.opt, c.audio, AudioOptions{})
			checkRefusal(t, err, c.want, c.detail, tmp)
			if _, err := os.Stat(filepath.Join(dir, c.out)); err == nil {
				t.Errorf("the check wrote %s itself", c.out)
			}
		})
	}
}

// checkRefusal asserts that CheckOutput's err is the refusal want (0: none) whose detail
// mentions detail in one line free of the temp folder tmp and ffmpeg's pointers, and that the
// check left nothing in tmp.
func checkRefusal(t *testing.T, err error, want OutputProblem, detail, tmp string) {
	t.Helper()
	var oe *OutputError
	switch {
	case want == 0 && err != nil:
		t.Fatalf("refused: %v", err)
	case want == 0:
	case !errors.As(err, &oe):
		t.Fatalf("error %v, want an OutputError %d", err, want)
	case oe.Problem != want || !strings.Contains(oe.Detail, detail):
		t.Errorf("problem %d (%q), want %d mentioning %q", oe.Problem, oe.Detail, want, detail)
	case strings.Contains(oe.Detail, tmp) || strings.Contains(oe.Detail, " | ") || strings.Contains(oe.Detail, " @ 0x"):
		t.Errorf("detail %q names the temp folder, spans lines or keeps ffmpeg's pointers", oe.Detail)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the check left %s in the temp folder", left[0].Name())
	}
}

// checkOutput is CheckOutput for the target src ("": none), with its streams as Probe gives them.
func checkOutput(t *testing.T, out string, opt EncodeOptions, src string, audio AudioOptions) (Carried, error) {
	t.Helper()
	var others []Stream
	if src != "" {
		others = probe(t, src).Others
	}
	return CheckOutput(context.Background(), "", out, opt, src, others, audio)
}

// A target with two audio tracks and a subtitle track keeps all three in Matroska; MP4 keeps
// the audio, and the one line that says so names the subtitle it leaves out.
func TestCheckOutputStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: ffmpeg's output check on several tracks (make test)")
	}
	src := clip(t, "streams.mkv")
	x264 := EncodeOptions{Encoder: "libx264", Quality: DefaultQuality, Preset: "veryfast", FPS: Rational{25, 1}, Width: 64, Height: 48}
	dir := t.TempDir()
	mkv, err := checkOutput(t, filepath.Join(dir, "o.mkv"), x264, src, AudioOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(mkv.Keep) != 3 || len(mkv.Drop) != 0 || mkv.Note("o.mkv") != "" {
		t.Errorf("into .mkv: keeps %v, drops %v; want all three kept", mkv.Keep, mkv.Drop)
	}
	mp4, err := checkOutput(t, filepath.Join(dir, "o.mp4"), x264, src, AudioOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// MP4 holds neither PCM nor SubRip as they are: the PCM track goes in as AAC, the SubRip cues
	// as mov_text (checked by a real join that reads back), nothing is dropped.
	if len(mp4.Keep) != 3 || mp4.Keep[0].Type != "audio" || mp4.Keep[1].Type != "audio" || !mp4.Keep[1].AAC ||
		mp4.Keep[2].Index != 3 || mp4.Keep[2].Text != "mov_text" || len(mp4.Drop) != 0 || mp4.Note("o.mp4") != "" {
		t.Errorf("into .mp4: keeps %+v, drops %+v; want the AAC track copied, the PCM one as AAC, the SubRip one as mov_text", mp4.Keep, mp4.Drop)
	}
	// The line for a stream left out names it, in one line; the advice to use .mkv is for other
	// containers only (a .mkv drops only what no container keeps: a second video, a bitmap
	// subtitle it refuses).
	dropped := Carried{Drop: []Dropped{{Stream{Index: 3, Type: "subtitle", Codec: "dvd_subtitle"}, "not in this container"}}}
	note := dropped.Note("o.mp4")
	if !strings.Contains(note, "#3 subtitle dvd_subtitle") || strings.Contains(note, "\n") || !strings.Contains(note, ".mkv output") || strings.Contains(dropped.Note("o.mkv"), ".mkv output") {
		t.Errorf("the dropped line: %q for .mp4, %q for .mkv", note, dropped.Note("o.mkv"))
	}
}

// The segment containers have one home, SegmentExts: the muxer the encoder picks for a
// segment's path is the format the resume fingerprint names (SegmentFormat), and the two
// containers' formats differ, so that a job folder of one is not resumed as the other. An MP4
// output of H.264 on a 1/N time base gets MP4 segments; an MKV output, another encoder or a time
// base not 1/N gets NUT ones.
func TestSegmentContainer(t *testing.T) {
	formats := map[string]bool{}
	for _, ext := range SegmentExts {
		m := muxerFor("seg-000001" + ext)
		if m == "" || muxerFor(".seg-000001.rank0.a1.part"+ext) != m {
			t.Fatalf("no muxer for a segment's path (%s): %q", ext, m)
		}
		if f := SegmentFormat(ext); !strings.HasPrefix(f, m+",") || formats[f] {
			t.Fatalf("SegmentFormat(%s) %q does not name the segments' muxer %s, or is another's", ext, f, m)
		}
		formats[SegmentFormat(ext)] = true
	}
	cfr := Timeline{TimeBase: Rational{1, 30000}, Step: 1001, End: 30030}
	for _, tc := range []struct {
		out, encoder string
		times        Timeline
		want         string
	}{
		{"o.mp4", "libx264", cfr, MP4SegmentExt},
		{"o.mov", "libx265", cfr, MP4SegmentExt},
		{"o.mkv", "libx264", cfr, SegmentExt},
		{"o.mp4", "libvpx-vp9", cfr, SegmentExt},
		{"o.mp4", "libx264", Timeline{TimeBase: Rational{1001, 30000}, Step: 1, End: 30}, SegmentExt},
	} {
		if got := SegmentExtFor(tc.out, tc.encoder, tc.times); got != tc.want {
			t.Errorf("SegmentExtFor(%s, %s, %s) = %s, want %s", tc.out, tc.encoder, tc.times.TimeBase, got, tc.want)
		}
	}
}
