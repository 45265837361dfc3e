package video

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
)

// ReadPCM decodes the audio of path as FaceFusion's ffmpeg.read_audio_buffer does (the
// lip syncer's source track): `-vn -ar RATE -f s16le -ac CHANNELS -`, 16-bit samples
// interleaved. A file ffmpeg cannot read, or one with no sound, is an error naming it.
func ReadPCM(ctx context.Context, path string, rate, channels int) ([]int16, error) {
	out, err := runTool(ctx, FFmpeg, ffmpegArgs("-i", mediaPath(path), "-vn", "-ar", strconv.Itoa(rate),
		"-f", "s16le", "-ac", strconv.Itoa(channels), "-")...)
	if err != nil {
		return nil, fmt.Errorf("reading the audio of %s: %w", path, err)
	}
	if len(out) < 2*channels {
		return nil, fmt.Errorf("reading the audio of %s: ffmpeg decoded no sound from it", path)
	}
	pcm := make([]int16, len(out)/2)
	for i := range pcm {
		pcm[i] = int16(binary.LittleEndian.Uint16(out[2*i:]))
	}
	return pcm, nil
}
