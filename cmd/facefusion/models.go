package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
)

// cmdModels is `facefusion models [flags]`: every FaceFusion model file this program knows,
// checked in the models folder against FaceFusion's published sha256 (verified, mismatched, no
// published hash), and against its signature, .hash and the job's model_sha256 (refused), or
// missing. It takes the same flags and job file as run (the paths are not needed); with none it
// checks the default models folder. The job column says "needs" for the job's files and
// "measure" for the identity measure's recognizer where the job does not need it (optional: its
// file missing or refused only turns the measure off). It fails (exit 4) only when a file the
// job needs is missing or refused: a run goes on past a published-hash mismatch, with a warning. The checksums need
// no runtime: where ONNX Runtime cannot be loaded it warns once and lists them, the signatures
// not checked.
func cmdModels(_ context.Context, args []string, w io.Writer) error {
	cfg, err := job.ParseLoose(args)
	if err != nil {
		if errors.Is(err, job.ErrHelp) {
			return err
		}
		return fault.AsUsage(err)
	}
	log := useLog(cfg)
	signatures := "ok"
	pl := cfg.ProviderLocation()
	infer.SetProviderLibrary(pl.Path, pl.From)
	if err := infer.Init(cfg.RuntimeLibrary()); err != nil {
		log.Warnf("%v: signatures not checked (checksums are)", err)
		signatures = "not checked"
	}
	var specs []infer.Spec
	for _, m := range catalog.All() {
		specs = append(specs, m.Spec())
	}
	custom := customDeepSwapper(&cfg)
	if custom != nil {
		specs = append(specs, custom.Spec())
	}
	reports, err := infer.ListModels(cfg.ModelPath(""), specs, cfg.ModelSHA256)
	if err != nil {
		return fault.AsUsage(err)
	}
	needed := pipeline.ModelNames(cfg)
	if custom != nil {
		needed = append(needed, custom.Name)
	}
	measure := pipeline.MeasureRecognizer(cfg) // optional: a file missing or refused turns the measure off
	// Where it looked, and what chose each place (a flag, an environment variable, the install).
	fmt.Fprintf(w, "models folder  %s\nONNX Runtime   %s\nGPU providers  %s\n", cfg.ModelsLocation(), cfg.RuntimeLocation(), pl)
	writeProviderLibraries(w, signatures == "ok")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tjob\tstate\tsignature\tbytes\tlicence\tfile\tdetail")
	bad, badCustom := 0, ""
	for _, r := range reports {
		use, size := "", "-"
		if slices.Contains(needed, r.Name) {
			use = "needs"
			switch {
			case r.State != infer.ModelMissing && r.State != infer.ModelRefused:
			case custom != nil && r.Name == custom.Name:
				badCustom = r.Path
			default:
				bad++
			}
		} else if r.Name == measure {
			use = "measure"
		}
		// A refused file's detail says what was wrong (the signature is checked only once its
		// checksums pass).
		sig := "-"
		if r.State != infer.ModelMissing {
			size = fmt.Sprint(r.Sums.Size)
			if r.State != infer.ModelRefused {
				sig = signatures
			}
		}
		m := custom
		if m == nil || r.Name != m.Name {
			m = catalog.Must(r.Name)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, use, r.State, sig, size, m.Licence, r.Path, modelDetail(r, m))
	}
	// The embedded default's files the job reads from the same folder: found or missing.
	embedded := pipeline.EmbeddedModelFiles(cfg)
	for _, f := range embedded {
		state, size := infer.ModelMissing, "-"
		if st, err := os.Stat(f.Path); err == nil && st.Mode().IsRegular() {
			state, size = "found", fmt.Sprint(st.Size())
		} else {
			bad++
		}
		fmt.Fprintf(tw, "%s\tneeds\t%s\t-\t%s\t-\t%s\t%s\n", f.Name, state, size, f.Path, "the embedded default's: `make fetch` brings it")
	}
	tw.Flush()
	if len(needed) == 0 {
		fmt.Fprintln(w, "\nthe job needs no FaceFusion model (the embedded default: blazeface, dlib_68, classic swapper)")
	}
	if measure != "" && !slices.Contains(needed, measure) {
		fmt.Fprintf(w, "%s (job: measure) is the identity measure's recognizer: optional, the run report has no identity without it (a refused file: one warning, and the job runs)\n", measure)
	}
	return modelsMissing(&cfg, bad, len(needed)+len(embedded), custom, badCustom)
}

// modelDetail is the detail column of model m's row r: what brings a file the package of the
// embedded default's holds, or the size FaceFusion publishes of a missing one.
func modelDetail(r infer.ModelReport, m *catalog.Model) string {
	switch {
	case r.State == infer.ModelMissing && m.Package != "":
		return fmt.Sprintf("`make fetch` brings it (%s)", m.Package)
	case r.State == infer.ModelRefused && m.Package != "":
		return fmt.Sprintf("%s: `rm %s && make fetch` fetches it again (%s)", r.Detail, r.Path, m.Package)
	case r.State == infer.ModelMissing && m.Published.Bytes > 0:
		return fmt.Sprintf("FaceFusion publishes %d bytes", m.Published.Bytes)
	}
	return r.Detail
}

// modelsMissing is models' failure when bad of the total files the job needs are missing or
// refused, besides the site's custom model at badCustom ("": it is fine or not run): what to
// do for each. Nothing downloads a site's own model: force-download is named for the others.
func modelsMissing(cfg *job.Config, bad, total int, custom *catalog.Model, badCustom string) error {
	if bad == 0 && badCustom == "" {
		return nil
	}
	var todo []string
	if bad > 0 {
		todo = append(todo, "`facefusion force-download` with the job's flags fetches FaceFusion's (with `--force` in place of a refused one), `make fetch` the embedded default's")
	}
	if badCustom != "" {
		bad++
		todo = append(todo, fmt.Sprintf("%s is the site's own model, which no download brings: put a working model file at %s, or name another --deep-swapper-model", custom.Name, badCustom))
	}
	return fault.AsEnvironment(fmt.Errorf("%d of the %d model files the job needs are missing or refused in %s: %s", bad, total, cfg.ModelsLocation(), strings.Join(todo, "; ")))
}

// writeProviderLibraries prints each GPU provider's plugin library: its path, the runtime
// version it is built for, and what loaded or why not (loaded: the runtime is).
func writeProviderLibraries(w io.Writer, loaded bool) {
	if !loaded {
		fmt.Fprint(w, "  not checked: the ONNX Runtime library did not load\n\n")
		return
	}
	for _, l := range infer.ProviderLibraries() {
		fmt.Fprintf(w, "  %-9s    %s\n", l.Provider, l)
	}
	fmt.Fprintln(w)
}

// customDeepSwapper is the site's deep_swapper model the job runs (custom/NAME, a file of
// models_dir/custom), nil when it runs none: not one of the catalog's, so listed after them.
func customDeepSwapper(cfg *job.Config) *catalog.Model {
	if !cfg.DeepSwaps() {
		return nil
	}
	m, err := cfg.DeepSwapperEntry()
	if err != nil || !strings.HasPrefix(m.Name, catalog.DeepSwapperCustomDir+"/") {
		return nil
	}
	return m
}
