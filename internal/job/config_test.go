package job

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseFlagsOverFileOverDefault(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "job.toml")
	os.WriteFile(file, []byte("source_paths = [\"a.png\"]\ntarget_path = \"t.mp4\"\noutput_path = \"o.mp4\"\nface_detector_score = 0.7\nchunk_frames = 10\n"), 0o644)
	c, err := Parse([]string{"--config", file, "-s", "x.png", "y.jpg", "--face-detector-score=0.3", "--trim-frame-end", "50"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.SourcePaths, []string{"x.png", "y.jpg"}) {
		t.Errorf("source_paths %v: the flag's two values should win", c.SourcePaths)
	}
	if c.FaceDetectorScore != 0.3 || c.ChunkFrames != 10 || c.TargetPath != "t.mp4" || c.TrimFrameEnd != 50 {
		t.Errorf("got %+v", c)
	}
	if c.OutputVideoEncoder != "libx264" || c.Processors[0] != "face_swapper" {
		t.Errorf("defaults lost: %+v", c)
	}
}

func TestParseErrorsNameTheKey(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("target_path = \"t.mp4\"\n[face]\nswaper = 1\n"), 0o644)
	cases := map[string][]string{
		"face.swaper":              {"--config", bad},
		"--nope":                   {"--nope"},
		"face_selector_mode":       {"-s", "a", "-t", "b", "-o", "c", "--face-selector-mode", "all"},
		"output_video_quality":     {"-s", "a", "-t", "b", "-o", "c", "--output-video-quality", "-1"},
		"trim_frame_end":           {"-s", "a", "-t", "b", "-o", "c", "--trim-frame-start", "9", "--trim-frame-end", "3"},
		"--execution-thread-count": {"--execution-thread-count", "two"},
		"source_paths":             {"-t", "b", "-o", "c"},
		"chunk_frames":             {"-s", "a", "-t", "b", "-o", "c", "--chunk-frames", "0"},
	}
	for want, args := range cases {
		_, err := Parse(args)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: error %v, want one naming %s", args, err, want)
		}
	}
}

func TestProcessorsNoneNeedsNoSource(t *testing.T) {
	c, err := Parse([]string{"--processors", "none", "-t", "b.mp4", "-o", "c.mp4"})
	if err != nil || c.Swaps() {
		t.Fatalf("err %v, swaps %v", err, c.Swaps())
	}
}

func TestThreadsShareTheNode(t *testing.T) {
	c := Default()
	if c.Threads(1) < 1 || c.Threads(1000) != 1 {
		t.Errorf("threads %d for one rank, %d for 1000 ranks", c.Threads(1), c.Threads(1000))
	}
	c.ExecutionThreadCount = 3
	if c.Threads(4) != 3 {
		t.Error("execution_thread_count is not honoured")
	}
}
