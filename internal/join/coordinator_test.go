package join

import (
	"context"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// An output the parallel join cannot write gets no side file and its reason; Parallel then says
// Serial and logs the reason, sends nothing, and Release still frees the other ranks (here the
// single-process communicator's broadcasts).
func TestCoordinatorWithoutASideFile(t *testing.T) {
	times := video.Timeline{TimeBase: video.Rational{Num: 1, Den: 25}, Step: 1, End: 10}
	for _, c := range []struct {
		name string
		out  Output
		why  string
	}{
		{"an image", Output{Image: true, Path: "out.png"}, "an image"},
		{"no frame times", Output{Path: "out.mp4", Encoder: "libx264"}, "the target's frame times are not known"},
		{"matroska", Output{Path: "out.mkv", Encoder: "libx264", Mux: video.Mux{Times: times}}, "a matroska output is joined by ffmpeg"},
		{"another codec", Output{Path: "out.mp4", Encoder: "libvpx-vp9", Mux: video.Mux{Times: times}}, "the encoder libvpx-vp9 is not H.264 or HEVC"},
	} {
		co := Start(context.Background(), collective.Single(), c.out, "")
		if !strings.Contains(co.side.why, c.why) || co.side.done != nil {
			t.Errorf("%s: side file %+v; want none, and why %q", c.name, co.side, c.why)
		}
		var log strings.Builder
		res, err := co.Parallel(context.Background(), nil, nil, 1, nil, logging.New(&log, logging.Info))
		if err != nil || !res.Serial || co.sent || !strings.Contains(log.String(), "join: serial (ffmpeg's concat and mux): "+c.why) {
			t.Errorf("%s: Parallel %+v, %v, sent %v, log %q; want Serial, nothing sent, the reason logged", c.name, res, err, co.sent, log.String())
		}
		if err := co.Release(); err != nil || !co.sent || !co.hashed {
			t.Errorf("%s: Release: %v, sent %v, hashed %v", c.name, err, co.sent, co.hashed)
		}
		co.Remove()
	}
	var none *Coordinator
	none.Remove() // another rank's: nothing to stop
}
