package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
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

// plan's model read counts every model file of the job, each at its size here or, absent,
// FaceFusion's published size: for an inswapper_128 job over the fetched models folder, the
// swapper's and its arcface's published sizes (arcface is the identity measure's recognizer
// too) and the embedded detector's and landmarker's files; not only the largest.
func TestPlanModelBytesAreTheJobs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // no facefusion.ini of the source tree's
	models := filepath.Dir(testenv.Model(t, job.BlazeFaceFile))
	want := int64(555303150 + 174388474) // table.go's published sizes (absent here)
	for _, f := range []string{job.BlazeFaceFile, job.DlibFile} {
		st, err := os.Stat(filepath.Join(models, f))
		if err != nil {
			t.Fatal(err)
		}
		want += st.Size()
	}
	for _, f := range []string{"inswapper_128.onnx", "arcface_w600k_r50.onnx"} {
		if _, err := os.Stat(filepath.Join(models, f)); err == nil {
			t.Fatalf("%s is in %s: this test counts it at its published size", f, models)
		}
	}
	var out bytes.Buffer
	err := cmdPlan(context.Background(), []string{"--frames", "100", "--ranks", "8", "--face-swapper-model", "inswapper_128",
		"--models-dir", models, "--model-broadcast", "on"}, &out)
	line := fmt.Sprintf("rank 0 reads %.3g GB", float64(want)/1e9)
	if err != nil || !strings.Contains(out.String(), line) {
		t.Errorf("plan: %v; want %q (%d bytes) in:\n%s", err, line, want, out.String())
	}
}
