package driver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// fingerprint is what makes the job's output what it is, by name: a resume with any entry
// changed would mix two jobs' segments. Its settings are every key of the job as its spec
// settled it (spec.Spec.Settled: the trim range, the rate and the job's own encoder as
// resolved; job.Config.Settings: default-deny, so a key added later is in it) with the
// providers this node resolved; its other entries are the contents of every file the job
// reads: the target, the sources (or, where no processor reads them, the source audio the
// output carries), each model file and the runtime that runs them (the paths are operational,
// the bytes are not).
func fingerprint(ctx context.Context, cfg job.Config, p *Plan) (map[string]string, error) {
	run, err := pipeline.ResolveProviders(p.Spec.Settled(cfg))
	if err != nil {
		return nil, err
	}
	fp := run.Settings()
	id := func(key string, paths ...string) error {
		ids := make([]string, len(paths))
		for i, path := range paths {
			s, err := lustre.Identity(path)
			if err != nil {
				return fault.AsInput(fmt.Errorf("fingerprinting %s: %w", path, err))
			}
			ids[i] = s
		}
		fp[key] = strings.Join(ids, " ")
		return nil
	}
	if err := id("target file contents", cfg.TargetPath); err != nil {
		return nil, err
	}
	switch {
	case cfg.ReadsSources() || cfg.LipSyncs(): // the lip syncer reads the source audio
		if err := id("source file contents", cfg.SourcePaths...); err != nil {
			return nil, err
		}
	case p.Spec != nil && p.Spec.Audio.Source != "":
		// No processor reads a source, but the output carries the source audio (FaceFusion's
		// replace_audio): another voice is another output, so not this job's to resume or
		// to call done.
		if err := id("source audio file contents", p.Spec.Audio.Source); err != nil {
			return nil, err
		}
	}
	models, err := pipeline.ModelFiles(cfg)
	if err != nil {
		return nil, fault.AsInternal(err)
	}
	for _, m := range models {
		if err := id("model file "+filepath.Base(m), m); err != nil {
			return nil, err
		}
	}
	if len(models) > 0 { // a job that loads a model loads the runtime
		if err := id("onnxruntime library contents", cfg.RuntimeLibrary()); err != nil {
			return nil, err
		}
	}
	// The programs that make the pixels and the bytes: this one (a rebuild between requeues
	// may swap or encode differently) and ffmpeg (another version on another node's image).
	if exe, err := os.Executable(); err == nil {
		if err := id("program file contents", exe); err != nil {
			return nil, err
		}
	}
	v, err := video.Version(ctx)
	if err != nil {
		return nil, fault.AsEnvironment(err)
	}
	fp["ffmpeg version"] = v
	// How the segments are written: a job folder of another layout (Matroska segments, whose
	// clock rounded the frame times; NUT segments of an output now joined from MP4 ones) is
	// refused, not joined with this one's.
	// Of the job's own encoder, as the settings are: not of the NVENC pair a node chose.
	ext := video.SegmentExtFor(cfg.OutputPath, p.Spec.Codecs.Requested, p.Spec.Times())
	fp["container of the segments"] = video.SegmentFormat(lustre.ForJob(p.JobDir, ext).SegmentContainer())
	return fp, nil
}
