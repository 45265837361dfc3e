package driver

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/audio"
	"github.com/facefusion-hpc/facefusion/internal/job"
)

// The voice file reads back the features written, and only for the job it was written for:
// another job's, a file cut short, a flipped byte or a stranger's file are refused, each with
// why, never read as features.
func TestVoiceFile(t *testing.T) {
	samples := make([]float64, audio.SampleRate) // 1 s of a tone
	for i := range samples {
		samples[i] = 0.3 * math.Sin(2*math.Pi*220*float64(i)/audio.SampleRate)
	}
	track := audio.NewTrack(audio.Prepare(samples), 25).Remap([]int{0, 0, 1, 2, 3, 5, 8, 13})
	fp := map[string]string{"source file contents": "1:ab", "output_video_fps": "25"}
	path := filepath.Join(t.TempDir(), "voice.bin")
	if err := writeVoice(path, fp, track); err != nil {
		t.Fatal(err)
	}
	got, why := readVoice(path, fp)
	want, _ := track.MarshalBinary()
	if got == nil {
		t.Fatalf("the file written is not read back: %s", why)
	}
	if b, _ := got.MarshalBinary(); !reflect.DeepEqual(b, want) {
		t.Fatal("the features read back differ from those written")
	}
	if _, why := readVoice(filepath.Join(t.TempDir(), "none"), fp); why != "" {
		t.Errorf("no file: %q, want nothing said", why)
	}
	other := map[string]string{"source file contents": "1:cd", "output_video_fps": "25"}
	if got, why := readVoice(path, other); got != nil || !strings.Contains(why, "another job") {
		t.Errorf("another job's fingerprint: %v, %q", got != nil, why)
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		b    []byte
		why  string
	}{
		{"cut short", orig[:len(orig)-100], "cut short"},
		{"a flipped byte", flip(orig, len(orig)-50), "checksum"},
		{"a stranger's file", []byte(strings.Repeat("a file of the user's own, not ours. ", 8)), "not a voice features file"},
		{"an empty file", nil, "cut short"},
	} {
		if err := os.WriteFile(path, c.b, 0o600); err != nil {
			t.Fatal(err)
		}
		if got, why := readVoice(path, fp); got != nil || !strings.Contains(why, c.why) {
			t.Errorf("%s: read %v, %q, want refused as %q", c.name, got != nil, why, c.why)
		}
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 0x40
	return c
}

// A stop during rank 0's voice analysis says that the analysis needs the time (a requeue would
// start it over), not that chunks need it.
func TestStopDuringVoiceAnalysis(t *testing.T) {
	t.Setenv("SLURM_JOB_ID", "42")
	r := stopResult(job.Config{MaxRestarts: 3}, 0, "rank 0: SIGUSR1", kept{analysing: true})
	if r.Next != NoRequeue || !strings.Contains(r.Err, "analysing lip_syncer's voice") || !strings.Contains(r.Err, "--time") || strings.Contains(r.Err, "chunk_frames") {
		t.Errorf("%v: %s", r.Next, r.Err)
	}
}

// A stop after rank 0 saved its voice analysis, before any chunk, requeues: the next attempt
// reuses the analysis and starts on the chunks; the line says so, not "more --time or lower
// chunk_frames". By hand (no Slurm) it says to rerun.
func TestStopAfterVoiceSavedRequeues(t *testing.T) {
	t.Setenv("SLURM_JOB_ID", "42")
	t.Setenv("SLURM_RESTART_COUNT", "1")
	k := kept{0, 0, 4, 0, 8, "J", false, true, "J/voice.bin"}
	r := stopResult(job.Config{MaxRestarts: 3}, 0, "rank 0: SIGUSR1", k)
	if r.Next != Requeue || r.Next.ExitCode() != 75 || !strings.Contains(r.Err, "voice analysis is kept in J/voice.bin") ||
		!strings.Contains(r.Err, "requeues the job (restart 2 of at most 3)") || strings.Contains(r.Err, "chunk_frames") {
		t.Errorf("%v: %s", r.Next, r.Err)
	}
	t.Setenv("SLURM_JOB_ID", "")
	if r := stopResult(job.Config{MaxRestarts: 3}, 0, "deadline", k); r.Next != Requeue || !strings.Contains(r.Err, "which a resume reuses: rerun the same command") {
		t.Errorf("by hand: %v: %s", r.Next, r.Err)
	}
}
