package driver

import (
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/join"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// jobDir is p's job folder, its segments in the container cfg's output is joined from: MP4 when
// it is joined in parallel (video.ParallelJoin's test), NUT otherwise.
func jobDir(cfg job.Config, p *Plan) *lustre.JobDir {
	if p.Image {
		return &lustre.JobDir{Path: p.JobDir, ID: p.jobDirID}
	}
	jd := lustre.ForJob(p.JobDir, video.SegmentExtFor(cfg.OutputPath, p.Spec.Codecs.Encoder, p.Spec.Times()))
	jd.ID = p.jobDirID
	return jd
}

// joinOutput is what the join needs to know of p's output (its spec, the target's length).
func joinOutput(cfg job.Config, p *Plan) join.Output {
	if p.Image {
		return join.Output{Image: true, Path: cfg.OutputPath}
	}
	return join.Output{
		Path:     cfg.OutputPath,
		Encoder:  p.Spec.Codecs.Encoder,
		Duration: p.Info.Duration,
		Mux: video.Mux{
			Scratch: cfg.TempDir(),
			Times:   p.Spec.Times(),
			Target:  cfg.TargetPath,
			Span:    p.Spec.Span,
			Keep:    p.Spec.Carried.Keep,
			Audio:   p.Spec.Audio,
		},
	}
}
