package video

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ffmpeg reads what nutWriter writes back as the same frames with the same timestamps, in
// the time base given: uneven gaps, large values and a frame of more than max_distance bytes.
func TestNUTWriterReadsBack(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		tb   Rational
		pts  []int64
		w, h int
	}{
		{Rational{1, 30000}, []int64{0, 1001, 2002, 5005, 9009, 9010}, 4, 2},
		{Rational{1, 90000}, []int64{0, 3003, 1 << 40}, 200, 120}, // 72000-byte frames
	} {
		path := filepath.Join(t.TempDir(), "frames.nut")
		var buf bytes.Buffer
		nw, err := newNUTWriter(&buf, c.w, c.h, c.tb)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for i, p := range c.pts {
			frame := bytes.Repeat([]byte{byte(i * 40), byte(255 - i), 7}, c.w*c.h)
			if err := nw.WriteFrame(p, frame); err != nil {
				t.Fatal(err)
			}
			sum := md5.Sum(frame)
			want = append(want, hex.EncodeToString(sum[:]))
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		out := ffprobeField(t, path, "v:0", "stream=codec_name,pix_fmt,width,height,time_base")
		if wantS := "rawvideo," + strconv.Itoa(c.w) + "," + strconv.Itoa(c.h) + ",rgb24," + c.tb.String(); out != wantS {
			t.Errorf("stream %q, want %q", out, wantS)
		}
		var got []int64
		for _, l := range strings.Fields(ffprobeField(t, path, "v:0", "packet=pts")) {
			v, _ := strconv.ParseInt(strings.Trim(l, ","), 10, 64)
			got = append(got, v)
		}
		if !slices.Equal(got, c.pts) {
			t.Errorf("pts %v, want %v", got, c.pts)
		}
		if hashes := frameMD5s(ffmpegRun(t, "-i", path, "-fps_mode", "passthrough", "-f", "framemd5", "-")); !slices.Equal(hashes, want) {
			t.Errorf("frames differ: %v, want %v", hashes, want)
		}
	}
}
