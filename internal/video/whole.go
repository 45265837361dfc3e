package video

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"image"
	_ "image/jpeg" // the image outputs' formats, for CheckImage
	_ "image/png"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/facefusion-hpc/facefusion/internal/mp4"
)

// Whole is what a joined output must hold before it is committed: every frame of the plan, at
// its size, and every stream the plan carries.
type Whole struct {
	Frames        int
	Width, Height int     // 0: not checked
	Carried       []Carry // the target's other streams the output keeps (Carried.Keep)
	Audio         bool    // an audio stream beside them: the source audio (AudioOptions.Source)
}

// IncompleteError is an output that is not whole: Detail says what is missing.
type IncompleteError struct {
	Path, Detail string
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("video: %s is not whole: %s", e.Path, e.Detail)
}

// CheckWhole checks that the file at path holds want (CheckWholeFile); a FIFO or device there
// is refused without blocking.
func CheckWhole(ctx context.Context, path string, want Whole) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return &IncompleteError{Path: path, Detail: err.Error()}
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return &IncompleteError{Path: path, Detail: "it is not a regular file"}
	}
	return CheckWholeFile(ctx, f, want)
}

// CheckWholeFile checks that the open file f holds want, reading it only through f (ffprobe
// reopens it as /dev/fd/3, the very inode): its name is in a folder others may write into,
// where a FIFO put in its place would hang a reader. ffmpeg can exit 0 after "Error writing
// trailer", and NFS or Lustre may report a full quota only at close, which ffmpeg only logs:
// what was written is judged from the file, not from an exit code. MP4 and MOV by their own
// index, read without a process (no index: the trailer never came; a box that claims more bytes
// than the file holds, or a sample outside it: a cut file); other containers by their video
// packets, counted by ffprobe (a demux, no decoding), whose "ended prematurely" marks a file
// cut before its trailer. The streams, from the same ffprobe run (MP4: its header alone). The
// container is f's name's (muxerFor).
func CheckWholeFile(ctx context.Context, f *os.File, want Whole) error {
	path := f.Name()
	index := muxerFor(path) == "mp4" || muxerFor(path) == "mov"
	args := []string{"-v", "error", "-of", "json", "-show_format", "-show_streams"}
	if !index {
		args = append(args, "-count_packets")
	}
	cmd, tail := command(ctx, FFprobe, append(args, mediaPath(fdOutput)))
	cmd.ExtraFiles = []*os.File{f}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return exitError(ctx, FFprobe, err, tail)
		}
		return &IncompleteError{Path: path, Detail: fmt.Sprintf("ffprobe cannot read it (%v)", exitError(ctx, FFprobe, err, tail))}
	}
	out, said := stdout.Bytes(), tail.String()
	if cut(said) {
		return &IncompleteError{Path: path, Detail: "it ends before its last bytes (ffprobe: " + said + ")"}
	}
	info, _, err := parseProbe(path, out)
	if err != nil {
		return &IncompleteError{Path: path, Detail: err.Error()}
	}
	var frames int
	if index {
		frames, err = indexedFrames(f)
	} else {
		frames, err = countedFrames(out)
	}
	if err != nil {
		return &IncompleteError{Path: path, Detail: err.Error()}
	}
	if frames != want.Frames {
		return &IncompleteError{Path: path, Detail: fmt.Sprintf("it holds %d of the job's %d frames", frames, want.Frames)}
	}
	if want.Width > 0 && (info.Width != want.Width || info.Height != want.Height) {
		return &IncompleteError{Path: path, Detail: fmt.Sprintf("its frames are %dx%d, not %dx%d", info.Width, info.Height, want.Width, want.Height)}
	}
	if want.Audio && !info.HasAudio {
		return &IncompleteError{Path: path, Detail: "it lacks the source audio"}
	}
	if missing := missingStreams(want.Carried, info.Others); missing != "" {
		return &IncompleteError{Path: path, Detail: "it lacks " + missing}
	}
	return nil
}

// cut reports whether ffprobe's words say that the file ends before its container does.
func cut(said string) bool {
	s := strings.ToLower(said)
	return strings.Contains(s, "ended prematurely") || strings.Contains(s, "truncat") || strings.Contains(s, "moov atom not found")
}

// indexedFrames is the video sample count of the open MP4 or MOV file f from its index, once
// every video sample is found inside the file.
func indexedFrames(f *os.File) (int, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	mf, err := mp4.ReadIndex(f, st.Size())
	if err != nil {
		return 0, err
	}
	t := mf.Video()
	if t == nil {
		return 0, fmt.Errorf("its index has no video track")
	}
	for i, s := range t.Samples {
		if s.Offset < 0 || s.Offset+int64(s.Size) > st.Size() {
			return 0, fmt.Errorf("video sample %d lies past its %d bytes", i, st.Size())
		}
	}
	return len(t.Samples), nil
}

// countedFrames is the packets ffprobe -count_packets counted of the first video stream that
// is no cover picture (parseProbe's choice), from its JSON.
func countedFrames(data []byte) (int, error) {
	var p struct {
		Streams []struct {
			CodecType   string         `json:"codec_type"`
			Disposition map[string]int `json:"disposition"`
			Packets     string         `json:"nb_read_packets"`
		} `json:"streams"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return 0, err
	}
	for _, s := range p.Streams {
		if s.CodecType == "video" && s.Disposition["attached_pic"] == 0 {
			n, err := strconv.Atoi(s.Packets)
			if err != nil {
				return 0, fmt.Errorf("ffprobe counted no video packets (%q)", s.Packets)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("it has no video stream")
}

// missingStreams names the carried streams that others (the output's streams besides its video)
// lack, by kind: a muxer writes them in its own order. "" when none is missing.
func missingStreams(carried []Carry, others []Stream) string {
	have := map[string]int{}
	for _, s := range others {
		have[s.Type]++
	}
	var missing []string
	for _, c := range carried {
		if have[c.Type] > 0 {
			have[c.Type]--
			continue
		}
		missing = append(missing, "the target's "+c.Stream.String())
	}
	return strings.Join(missing, ", ")
}

// CarriedBytes estimates the bytes the streams keep of target take over seconds of it, from
// their bit rates in the target's header; ok is false when one of them has none (Matroska keeps
// none). For a message, not a plan: re-encoded audio takes other room.
func CarriedBytes(ctx context.Context, target string, keep []Carry, seconds float64) (n int64, ok bool) {
	if len(keep) == 0 {
		return 0, true
	}
	out, err := runTool(ctx, FFprobe, "-v", "error", "-of", "json", "-show_entries", "stream=index,bit_rate", mediaPath(target))
	if err != nil {
		return 0, false
	}
	var p struct {
		Streams []struct {
			Index   int    `json:"index"`
			BitRate string `json:"bit_rate"`
		} `json:"streams"`
	}
	if json.Unmarshal(out, &p) != nil {
		return 0, false
	}
	rate := map[int]float64{}
	for _, s := range p.Streams {
		if v, err := strconv.ParseFloat(s.BitRate, 64); err == nil && v > 0 {
			rate[s.Index] = v
		}
	}
	var bits float64
	for _, c := range keep {
		r, found := rate[c.Index]
		if !found {
			return 0, false
		}
		bits += r * seconds
	}
	return int64(bits / 8), true
}

// CheckImage checks that the image written to f decodes whole at w×h: ffmpeg's exit code does
// not say that its bytes reached the file. It reads through f, never by name: the name is in a
// folder others may write into.
func CheckImage(f *os.File, w, h int) error {
	path := f.Name()
	m, _, err := image.Decode(io.NewSectionReader(f, 0, 1<<62))
	if err != nil {
		return &IncompleteError{Path: path, Detail: fmt.Sprintf("it does not decode (%v)", err)}
	}
	if b := m.Bounds(); b.Dx() != w || b.Dy() != h {
		return &IncompleteError{Path: path, Detail: fmt.Sprintf("it is %dx%d, not %dx%d", b.Dx(), b.Dy(), w, h)}
	}
	return nil
}
