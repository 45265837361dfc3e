package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/catalog"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
)

// cmdModels is `facefusion models [flags]`: for the configured processors and models, which
// model files are found, verified (checksum), mismatched (checksum or signature) or missing.
// It takes the same flags and job file as run; the paths are not needed.
func cmdModels(_ context.Context, args []string, w io.Writer) error {
	cfg, err := job.ParseLoose(args)
	if err != nil {
		if errors.Is(err, job.ErrHelp) {
			return err
		}
		return fault.AsUsage(err)
	}
	useLog(cfg)
	if err := infer.Init(cfg.RuntimeLibrary()); err != nil {
		return fault.AsEnvironment(err)
	}
	specs, err := catalog.Specs(pipeline.ModelNames(cfg)...)
	if err != nil {
		return fault.AsUsage(err)
	}
	reports, err := infer.ListModels(cfg.ModelPath(""), specs, cfg.ModelSHA256)
	if err != nil {
		return fault.AsUsage(err)
	}
	// Where it looked, and what chose each place (a flag, an environment variable, the install).
	fmt.Fprintf(w, "models folder  %s\nONNX Runtime   %s\n\n", cfg.ModelsLocation(), cfg.RuntimeLocation())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tstate\tfile\tdetail")
	bad := 0
	for _, r := range reports {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.State, r.Path, r.Detail)
		if r.State == infer.ModelMissing || r.State == infer.ModelMismatched {
			bad++
		}
	}
	if len(reports) == 0 {
		fmt.Fprintln(tw, "(the embedded default: blazeface, dlib_68, classic swapper: no FaceFusion model needed)\t\t\t")
	}
	tw.Flush()
	if bad > 0 {
		return fault.AsEnvironment(fmt.Errorf("%d of %d model files are missing or mismatched in %s", bad, len(reports), cfg.ModelsLocation()))
	}
	return nil
}
