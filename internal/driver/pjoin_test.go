package driver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// An MP4 output of H.264 is joined in parallel from MP4 segments (seg-*.mp4 in its job folder,
// lustre.ForJob's choice) into a file ffprobe reads with every frame; a folder of the earlier
// layout, NUT segments of an MP4 output, is refused as another job (Usage, naming the segments'
// container), not joined, and left as it was.
func TestMP4SegmentsAndTheEarlierLayout(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: runs jobs with ffmpeg end to end (make test)")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	testenv.Clip(t, in, 10, "25")
	c := passThrough(in, filepath.Join(dir, "out.mp4"))
	c.OutputVideoEncoder = "libx264"
	c.KeepSegments = true
	_, log, err := run(t, c)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if !strings.Contains(log, "join: parallel") {
		t.Errorf("the MP4 output was not joined in parallel:\n%s", log)
	}
	jd := &lustre.JobDir{Path: lustre.DefaultPath(c.OutputPath)}
	segs, _ := filepath.Glob(filepath.Join(jd.Path, "seg-*"))
	if len(segs) != 3 || filepath.Ext(segs[0]) != video.MP4SegmentExt {
		t.Fatalf("segments %v, want 3 of %s", segs, video.MP4SegmentExt)
	}
	info, err := video.Probe(context.Background(), c.OutputPath)
	if err != nil || info.Frames != 10 {
		t.Fatalf("the output: %v, %+v; want 10 frames", err, info)
	}
	// The earlier version's folder: the same job, NUT segments.
	m, ok, err := jd.ReadManifest()
	if err != nil || !ok {
		t.Fatalf("no manifest kept: %v", err)
	}
	m.Fingerprint["container of the segments"] = video.SegmentFormat(video.SegmentExt)
	if err := jd.WriteManifest(m); err != nil {
		t.Fatal(err)
	}
	for _, s := range segs {
		if err := os.Rename(s, strings.TrimSuffix(s, video.MP4SegmentExt)+video.SegmentExt); err != nil {
			t.Fatal(err)
		}
	}
	before := listing(t, jd.Path)
	c.Force = true
	_, log, err = run(t, c)
	if fault.KindOf(err) != fault.Usage || !strings.Contains(err.Error(), "container of the segments") {
		t.Fatalf("want a Usage refusal naming the segments' container, got %v\n%s", err, log)
	}
	if after := listing(t, jd.Path); after != before {
		t.Errorf("the refused run changed the folder:\nbefore %s\nafter  %s", before, after)
	}
}
