package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// useProviderLibrary hands the GPU providers' plugin libraries (make fetch-gpu's folder, or a
// provider library file) to the runtime, as the binary's --execution-provider-library does,
// before the runtime resolves its providers.
func useProviderLibrary(path string) error {
	if path != "" {
		infer.SetProviderLibrary(path, "-execution-provider-library")
	}
	return nil
}

// providerVersion is the ONNX Runtime version the provider libraries of path are built for
// (the VERSION file make fetch-gpu writes beside them), "" when unknown.
func providerVersion(path string) string {
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		path = filepath.Dir(path)
	}
	b, err := os.ReadFile(filepath.Join(path, "VERSION"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// hardwareCodecs tries NVENC (h264_nvenc, hevc_nvenc) and NVDEC on clip as a rank does before
// its first frame (internal/video's trials): through the node's ffmpeg.
func (c *check) hardwareCodecs(clip string) {
	if _, err := exec.LookPath(video.FFmpeg); err != nil {
		c.not("NVENC and NVDEC: no %s on this node's PATH (a rank runs them through ffmpeg: load the site's ffmpeg module and run again)", video.FFmpeg)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, enc := range []string{"h264_nvenc", "hevc_nvenc"} {
		if err := video.TryEncoder(ctx, enc); err != nil {
			c.not("NVENC: %v", err)
		} else {
			c.ok("NVENC: %s encodes on this node", enc)
		}
	}
	if clip == "" {
		return
	}
	info, err := video.ProbeHeader(ctx, clip)
	if err != nil {
		c.not("NVDEC: probing %s: %v", clip, err)
		return
	}
	if err := video.TryHardwareDecode(ctx, info); err != nil {
		c.not("NVDEC: %v", err)
	} else {
		c.ok("NVDEC decodes %s (%s %s) on this node", clip, info.Codec, info.PixFmt)
	}
}
