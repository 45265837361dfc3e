package video

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/rank"
)

// roundHalfUp is round(x·out/in) by exact rationals, halves up.
func roundHalfUp(x int, in, out Rational) int {
	r := big.NewRat(int64(x)*int64(out.Num)*int64(in.Den), int64(out.Den)*int64(in.Num))
	r.Add(r, big.NewRat(1, 2))
	q := new(big.Int).Quo(r.Num(), r.Denom())
	return int(q.Int64())
}

// sourceByScan is the obvious reference for FrameMap.Source: walk the range and keep the last
// frame whose time, rounded to the nearest output tick of the whole video (halves up), is not
// after output frame k's tick, the first frame's tick plus k − Start.
func sourceByScan(m FrameMap, k int) int {
	tick := roundHalfUp(m.Start, m.In, m.Out) + k - m.Start
	best := m.Start
	for i := m.Start; i < m.End; i++ {
		if roundHalfUp(i, m.In, m.Out) <= tick {
			best = i
		}
	}
	return best
}

var rateCases = []struct{ in, out Rational }{
	{Rational{25, 1}, Rational{10, 1}},       // drops: 2 of every 5 kept
	{Rational{25, 1}, Rational{30, 1}},       // repeats 1 in 5
	{Rational{30000, 1001}, Rational{24, 1}}, // NTSC to film
	{Rational{24, 1}, Rational{60, 1}},       // 2.5×: every other frame sits on a half tick
	{Rational{25, 1}, Rational{25, 2}},       // 12.5
	{Rational{30, 1}, Rational{7, 1}},
	{Rational{50, 1}, Rational{2997, 100}}, // 29.97 as typed
	{Rational{25, 1}, Rational{1, 1}},
	{Rational{25, 1}, Rational{25, 1}}, // the identity
	{Rational{30000, 1001}, Rational{30000, 1001}},
}

// The map is a function of four numbers: every rank count and chunk size cuts the same list of
// source frames, the count is the number of output ticks from the range's start to its end,
// and each frame is the one the slow scan picks.
func TestFrameMapAnyPartition(t *testing.T) {
	t.Parallel()
	for _, rc := range rateCases {
		for _, rng := range [][2]int{{0, 50}, {7, 33}, {0, 1}, {13, 14}, {100, 397}} {
			m := FrameMap{Start: rng[0], End: rng[1], In: rc.in, Out: rc.out}
			name := fmt.Sprintf("%v→%v/[%d,%d)", rc.in, rc.out, rng[0], rng[1])
			n := m.Frames()
			want := max(1, roundHalfUp(rng[1], rc.in, rc.out)-roundHalfUp(rng[0], rc.in, rc.out))
			if n != want {
				t.Fatalf("%s: %d frames, want round(end × rate) − round(start × rate) = %d", name, n, want)
			}
			start, end := m.Output()
			if start != rng[0] || end != rng[0]+n {
				t.Fatalf("%s: output [%d,%d), want [%d,%d)", name, start, end, rng[0], rng[0]+n)
			}
			global := make([]int, 0, n)
			for k := start; k < end; k++ {
				s := m.Source(k)
				if s < rng[0] || s >= rng[1] {
					t.Fatalf("%s: output frame %d shows target frame %d, outside the range", name, k, s)
				}
				if k < start+60 && s != sourceByScan(m, k) { // the scan is quadratic: a prefix
					t.Fatalf("%s: output frame %d shows %d, the scan picks %d", name, k, s, sourceByScan(m, k))
				}
				if len(global) > 0 && s < global[len(global)-1] {
					t.Fatalf("%s: output frame %d goes back in time (%d after %d)", name, k, s, global[len(global)-1])
				}
				global = append(global, s)
			}
			if !m.Resampled() {
				for i, s := range global {
					if s != rng[0]+i {
						t.Fatalf("%s: the target's own rate is not the identity at output frame %d", name, rng[0]+i)
					}
				}
			}
			for _, chunk := range []int{1, 3, 7, 16, 96} {
				chunks := rank.Chunks(rank.Range{Start: start, End: end}, chunk)
				all := make([]int, len(chunks))
				for i := range all {
					all[i] = i
				}
				for _, ranks := range []int{1, 2, 3, 5} {
					var got []int
					for _, pieces := range rank.Split(chunks, all, ranks) {
						for _, pc := range pieces {
							ch := pc.Frames // a rank's frames of a chunk: all of them, or its part
							first, stop := m.Sources(ch.Start, ch.End)
							for k := ch.Start; k < ch.End; k++ {
								s := m.Source(k)
								if s < first || s >= stop {
									t.Fatalf("%s: frames %v need target frames [%d,%d) but show %d", name, ch, first, stop, s)
								}
								got = append(got, s)
							}
						}
					}
					if fmt.Sprint(got) != fmt.Sprint(global) {
						t.Fatalf("%s, chunks of %d over %d ranks: %v, want %v", name, chunk, ranks, got, global)
					}
				}
			}
		}
	}
}

// The map is ffmpeg's fps filter, asked of ffmpeg itself: frames numbered by their bytes go
// through `-vf fps=OUT` (one ffmpeg, one output per rate) and come back in the order the map
// predicts.
func TestFrameMapMatchesFFmpegFPS(t *testing.T) {
	t.Parallel()
	const w, h, frames = 4, 2, 50
	in := filepath.Join(t.TempDir(), "numbered.nut")
	var raw bytes.Buffer
	for i := 0; i < frames; i++ {
		raw.Write(bytes.Repeat([]byte{byte(i * 5)}, w*h*3))
	}
	if err := os.WriteFile(in+".rgb", raw.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// One input per rate of the target, each through a split into its cases' fps filters.
	byIn := map[Rational][]int{}
	var ins []Rational
	for i, rc := range rateCases {
		if _, ok := byIn[rc.in]; !ok {
			ins = append(ins, rc.in)
		}
		byIn[rc.in] = append(byIn[rc.in], i)
	}
	// Each case twice: the whole clip, and trimmed as FaceFusion trims (the frames keep their
	// times, so the ticks are the whole video's). A trimmed case reads its own input: after a
	// split, the fps filter would run on to the end of the shared input.
	const trimStart, trimEnd = 7, 43
	var args, graph []string
	input := func(r Rational) {
		args = append(args, "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", fmt.Sprintf("%dx%d", w, h), "-framerate", r.String(), "-i", in+".rgb")
	}
	inputs := 0
	for _, r := range ins {
		input(r)
		cases := byIn[r]
		g := fmt.Sprintf("[%d:v]split=%d", inputs, len(cases))
		inputs++
		for _, i := range cases {
			g += fmt.Sprintf("[s%d]", i)
		}
		for _, i := range cases {
			g += fmt.Sprintf(";[s%d]fps=%v[o%d]", i, rateCases[i].out, i)
		}
		graph = append(graph, g)
	}
	for i, rc := range rateCases {
		input(rc.in)
		graph = append(graph, fmt.Sprintf("[%d:v]trim=start_frame=%d:end_frame=%d,fps=%v[t%d]", inputs, trimStart, trimEnd, rc.out, i))
		inputs++
	}
	args = append(args, "-filter_complex", strings.Join(graph, ";"))
	out := func(kind string, i int) string { return filepath.Join(t.TempDir(), fmt.Sprintf("%s%d.rgb", kind, i)) }
	outs := map[string][]string{}
	for _, kind := range []string{"o", "t"} {
		for i := range rateCases {
			outs[kind] = append(outs[kind], out(kind, i))
			// passthrough: the muxer must not pad a trimmed stream back to time 0.
			args = append(args, "-map", fmt.Sprintf("[%s%d]", kind, i), "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "rgb24", outs[kind][i])
		}
	}
	ffmpegRun(t, args...)
	for i, rc := range rateCases {
		for _, m := range []FrameMap{{Start: 0, End: frames, In: rc.in, Out: rc.out}, {Start: trimStart, End: trimEnd, In: rc.in, Out: rc.out}} {
			kind := "o"
			if m.Start != 0 {
				kind = "t"
			}
			data, err := os.ReadFile(outs[kind][i])
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for j := 0; j+w*h*3 <= len(data); j += w * h * 3 {
				got = append(got, int(data[j])/5)
			}
			var want []int
			for k := m.Start; k < m.Start+m.Frames(); k++ {
				want = append(want, m.Source(k))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%v → %v, frames [%d,%d): ffmpeg's trim and fps filters give\n%v\nthe map\n%v", rc.in, rc.out, m.Start, m.End, got, want)
			}
		}
	}
}

func TestRateOf(t *testing.T) {
	for _, c := range []struct {
		fps  float64
		want Rational
	}{
		{25, Rational{25, 1}}, {29.97, Rational{2997, 100}}, {23.976, Rational{2997, 125}},
		{59.94, Rational{2997, 50}}, {12.5, Rational{25, 2}}, {1, Rational{1, 1}}, {60, Rational{60, 1}},
		{30000.0 / 1001, Rational{30000, 1001}}, {24000.0 / 1001, Rational{24000, 1001}},
		{1.0 / 3, Rational{1, 3}}, {0.123456789, Rational{10, 81}},
	} {
		got, err := RateOf(c.fps)
		if err != nil || got != c.want {
			t.Errorf("RateOf(%v) = %v, %v; want %v", c.fps, got, err, c.want)
		}
	}
	for _, bad := range []float64{0, -1} {
		if _, err := RateOf(bad); err == nil {
			t.Errorf("RateOf(%v) gave no error", bad)
		}
	}
}

// ScaleSize is FaceFusion's scale_resolution: int() of each side, then round(side/2)·2 with
// Python's halves-to-even.
func TestScaleSize(t *testing.T) {
	for _, c := range []struct {
		w, h   int
		s      float64
		ww, wh int
	}{
		{64, 48, 0.5, 32, 24},
		{1920, 1080, 0.75, 1440, 810},
		{100, 75, 0.25, 24, 18}, // 25 → 24 (12.5 rounds to 12), 18.75 → 18
		{100, 75, 0.75, 76, 56}, // 75 → 76 (37.5 rounds to 38), 56.25 → 56
		{65, 49, 1, 64, 48},     // 65 → 64 (32.5 → 32), 49 → 48 (24.5 → 24)
		{66, 54, 1, 66, 54},     // even sides are kept
		{321, 241, 2, 642, 482},
		{3, 3, 0.25, 0, 0},   // nothing left
		{640, 2, 0.25, 0, 0}, // one side gone is the whole frame gone
	} {
		w, h := ScaleSize(c.w, c.h, c.s)
		if w != c.ww || h != c.wh {
			t.Errorf("ScaleSize(%d, %d, %v) = %dx%d, want %dx%d", c.w, c.h, c.s, w, h, c.ww, c.wh)
		}
	}
}

// framemd5 is ffmpeg's per-frame MD5 of path's video through the filter graph vf, as rgb24.
func framemd5(t *testing.T, path, vf string) []string {
	t.Helper()
	return frameMD5s(ffmpegRun(t, "-i", path, "-map", "0:v:0", "-vf", vf, "-pix_fmt", "rgb24", "-f", "framemd5", "-"))
}

// A resampled, scaled output read chunk by chunk is, frame for frame, what ffmpeg's own trim
// and fps filters make of the target's range, each frame then shrunk by cv2.resize's
// INTER_LINEAR (raster.Resizer, held to cv2 in its package) as FaceFusion shrinks the frames
// it reads: dropped frames, repeated frames, a chunk boundary inside a repeat and chunks that
// start inside a B-frame group included.
func TestResamplerMatchesFFmpeg(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: compares every rate change with ffmpeg's fps filter (make test)")
	}
	path := filepath.Join(t.TempDir(), "bf.mp4")
	ffmpegRun(t, "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=30000/1001", "-frames:v", "45",
		"-c:v", "libx264", "-bf", "3", "-g", "12", "-preset", "veryfast", "-pix_fmt", "yuv420p", path)
	info := probe(t, path)
	for _, c := range []struct {
		start, end    int
		out           Rational
		width, height int
		chunk         int
	}{
		{5, 41, Rational{12, 1}, 32, 24, 7},  // drops, a trimmed range, halved: 14 frames
		{0, 19, Rational{50, 1}, 64, 48, 16}, // repeats: output frames 15 and 16 both show frame 9
	} {
		m := FrameMap{Start: c.start, End: c.end, In: info.FPS, Out: c.out}
		name := fmt.Sprintf("[%d,%d)→%v@%dx%d/chunk=%d", c.start, c.end, c.out, c.width, c.height, c.chunk)
		vf := fmt.Sprintf("trim=start_frame=%d:end_frame=%d,setpts=PTS-STARTPTS,fps=%v", c.start, c.end, c.out)
		want := framemd5(t, info.Path, vf)
		if c.width != info.Width {
			want = want[:0]
			raw := ffmpegRun(t, "-i", info.Path, "-map", "0:v:0", "-vf", vf, "-pix_fmt", "rgb24", "-f", "rawvideo", "-")
			whole, small := raster.New(info.Width, info.Height), raster.New(c.width, c.height)
			var z raster.Resizer
			for ; len(raw) >= len(whole.Pix); raw = raw[len(whole.Pix):] {
				copy(whole.Pix, raw)
				z.Resize(small, small.Bounds(), whole)
				sum := md5.Sum(small.Pix)
				want = append(want, hex.EncodeToString(sum[:]))
			}
		}
		if len(want) != m.Frames() {
			t.Fatalf("%s: ffmpeg made %d frames, the map %d", name, len(want), m.Frames())
		}
		var got []string
		start, end := m.Output()
		buf := make([]byte, c.width*c.height*3)
		for _, ch := range rank.Chunks(rank.Range{Start: start, End: end}, c.chunk) {
			r, err := OpenResampler(context.Background(), info, m, ch.Start, ch.End, c.width, c.height)
			if err != nil {
				t.Fatal(err)
			}
			for {
				if err := r.Next(buf); errors.Is(err, io.EOF) {
					break
				} else if err != nil {
					t.Fatalf("%s: chunk %v, frame %d: %v", name, ch, r.Frame(), err)
				}
				sum := md5.Sum(buf)
				got = append(got, hex.EncodeToString(sum[:]))
			}
			r.Close()
		}
		if i := firstDiff(got, want); i < len(want) || len(got) != len(want) {
			t.Fatalf("%s: output frame %d (of %d, want %d) differs from ffmpeg's", name, start+i, len(got), len(want))
		}
	}
	if _, err := OpenResampler(context.Background(), info, FrameMap{Start: 0, End: 10, In: info.FPS, Out: Rational{5, 1}}, 0, 3, 64, 48); err == nil ||
		!strings.Contains(err.Error(), "output frames [0,3) are outside [0,2)") {
		t.Errorf("a range past the output's end: %v", err)
	}
}
