package video

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The codec floor: how fast ffmpeg alone moves 1280×720 frames through the pipes, the ceiling
// for any pipeline built on this package. Reported as frames per second.
func BenchmarkDecode720p(b *testing.B) {
	info := probe(b, clip(b, "hd.mp4"))
	buf := make([]byte, info.FrameSize())
	b.SetBytes(int64(info.FrameSize()))
	b.ResetTimer()
	frames := 0
	for frames < b.N {
		d, err := OpenDecoder(context.Background(), info, 0, info.Frames)
		if err != nil {
			b.Fatal(err)
		}
		for frames < b.N {
			if err := d.Next(buf); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				b.Fatal(err)
			}
			frames++
		}
		d.Close()
	}
	b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "fps")
}

func BenchmarkEncode720pX264(b *testing.B) {
	info := probe(b, clip(b, "hd.mp4"))
	// Real frames (encoding a constant frame would flatter x264).
	frames := make([][]byte, 0, 30)
	d, err := OpenDecoder(context.Background(), info, 0, 30)
	if err != nil {
		b.Fatal(err)
	}
	for {
		buf := make([]byte, info.FrameSize())
		if err := d.Next(buf); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			b.Fatal(err)
		}
		frames = append(frames, buf)
	}
	d.Close()
	out := filepath.Join(b.TempDir(), "bench.mp4")
	b.SetBytes(int64(info.FrameSize()))
	b.ResetTimer()
	e, err := OpenEncoder(context.Background(), out, EncodeOptions{Encoder: "libx264", Quality: DefaultQuality,
		Width: info.Width, Height: info.Height, FPS: info.FPS})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if err := e.Write(frames[i%len(frames)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.Close(); err != nil { // the encoder's lookahead drains here: part of the cost
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "fps")
}

// A late range by seeking against counting from frame 0, the choice OpenDecoder makes per
// container.
func BenchmarkDecodeLateRange(b *testing.B) {
	info := probe(b, clip(b, "long.mp4"))
	buf := make([]byte, info.FrameSize())
	for _, mode := range []struct {
		name string
		vfr  bool
	}{{"seek", false}, {"from-0", true}} {
		b.Run(mode.name, func(b *testing.B) {
			in := *info
			in.VFR = mode.vfr // forces the decode-from-0 path
			for i := 0; i < b.N; i++ {
				d, err := OpenDecoder(context.Background(), &in, 900, 925)
				if err != nil {
					b.Fatal(err)
				}
				for err = d.Next(buf); err == nil; err = d.Next(buf) {
				}
				if !errors.Is(err, io.EOF) {
					b.Fatal(err)
				}
				d.Close()
			}
		})
	}
}

// The parallel join's cost a segment (scaling's DefaultParallelPerSegment): reading one MP4
// segment's index (ReadSegment: open, the box headers, the moov) and its table's trip to rank 0
// (MarshalBinary, UnmarshalBinary), for segments of 25 frames (the demo run's chunks), 64
// files in turn. Reported as seconds a segment.
func BenchmarkReadSegmentIndex(b *testing.B) {
	dir := b.TempDir()
	info, _, first := benchSegment(b, dir)
	data, err := os.ReadFile(first)
	if err != nil {
		b.Fatal(err)
	}
	segs := make([]JoinSegment, 64)
	for i := range segs {
		segs[i] = JoinSegment{Path: filepath.Join(dir, fmt.Sprintf("seg-%d%s", i, MP4SegmentExt)), Start: info.Times.At(0)}
		if err := os.WriteFile(segs[i].Path, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, err := ReadSegment(segs[i%len(segs)], info.Times)
		if err != nil {
			b.Fatal(err)
		}
		t, _ := p.Table.MarshalBinary()
		var back PieceTable
		if err := back.UnmarshalBinary(t); err != nil || len(back.Samples) != 25 {
			b.Fatalf("the table's round trip: %v, %d samples", err, len(back.Samples))
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/segment")
}

// benchSegment makes in dir a 25-frame 64x48 target (target.mp4) and its frames as one MP4
// segment (seg-0), as a 25-frame chunk's encoder writes it: the parallel join benchmarks' input.
func benchSegment(b *testing.B, dir string) (info *Info, target, seg string) {
	target = filepath.Join(dir, "target.mp4")
	if out, err := exec.Command(FFmpeg, "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25", "-frames:v", "25",
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", target).CombinedOutput(); err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	info = probe(b, target)
	seg = filepath.Join(dir, "seg-0"+MP4SegmentExt)
	transcode(b, info, 0, 25, seg, EncodeOptions{Preset: "ultrafast", Quality: DefaultQuality, Times: info.Times})
	return info, target, seg
}
