package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
)

// Both forms of plan, -t FILE and --frames F, say how many ranks get no frame: 4 frames over 6
// ranks leave 2 without one, whether the 4 are a file's or only a count.
func TestPlanIdleRanks(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // no facefusion.ini of the source tree's
	clip := filepath.Join(dir, "clip4.mp4")
	clitest.FFmpeg(t, "-f", "lavfi", "-i", "testsrc=s=64x48:r=25", "-frames:v", "4", "-c:v", "libx264", "-pix_fmt", "yuv420p", clip)
	const want = "note    2 rank(s) get no frame"
	for _, args := range [][]string{{"--frames", "4"}, {"-t", clip}} {
		var out bytes.Buffer
		err := cmdPlan(context.Background(), append(args, "--ranks", "6", "--processors", "none"), &out)
		if err != nil || strings.Count(out.String(), want) != 1 {
			t.Errorf("plan %s --ranks 6: %v, stdout:\n%s\nwant one line %q", strings.Join(args, " "), err, out.String(), want)
		}
	}
}
