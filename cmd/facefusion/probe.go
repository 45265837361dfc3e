package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/driver"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/rank"
)

const probeUsage = `usage: facefusion probe [--execution-device-ids auto|cpu|N...] [--onnxruntime-library PATH]
                       [--execution-provider-library PATH]

Every rank of the launch (alone, mpirun, or srun --mpi=pmix) works out who it is (world and
node-local rank, host), which GPU it binds and which execution providers its ONNX Runtime has,
and rank 0 prints one table. Run it with the same launcher line as the job to check the
binding before spending an allocation on it.

--execution-device-ids (FaceFusion's flag; --execution-device-id or
FACEFUSION_EXECUTION_DEVICE_ID the same) overrides the binding: auto picks by node-local rank
within CUDA_VISIBLE_DEVICES, cpu forces CPU execution, N picks visible device N on every rank,
and several numbers give a rank the one at its node-local rank, as a job's
execution_device_ids does.

--onnxruntime-library (or ONNXRUNTIME_LIBRARY) is the runtime to ask, else the one beside the
program, as a job finds it: the table's runtime lines say which file that is and why there.
--execution-provider-library (or FACEFUSION_EXECUTION_PROVIDER_LIBRARY) is where the GPU
providers' plugin libraries are, else as a job finds them: a line each says which file, the
runtime version it is built for, and whether it loaded or why not.
`

// deviceEnv overrides the GPU binding when no flag is given, so a batch script can set it
// once for every rank.
const deviceEnv = "FACEFUSION_EXECUTION_DEVICE_ID"

// probeRow is what one rank sends to rank 0.
type probeRow struct {
	ID  rank.Identity
	Err string `json:",omitempty"`
	// Runtime is the rank's ONNX Runtime: where it was found and which providers it has.
	Runtime string
}

// cmdProbe is `facefusion probe`: every rank's identity and GPU binding, in one table on rank 0.
func cmdProbe(ctx context.Context, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	device := fs.String("execution-device-id", os.Getenv(deviceEnv), "auto, cpu or a visible device number")
	library := fs.String("onnxruntime-library", "", "the ONNX Runtime library to ask")
	providers := fs.String("execution-provider-library", "", "the GPU providers' plugin library or folder")
	args, ids, err := takeDeviceIDs(args)
	if err != nil {
		return fault.AsUsage(err)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(os.Stderr, probeUsage)
			return nil
		}
		return fault.AsUsage(fmt.Errorf("probe: %v (see facefusion probe --help)", err))
	}
	if fs.NArg() > 0 {
		return fault.AsUsage(fmt.Errorf("probe: unexpected argument %q (see facefusion probe --help)", fs.Arg(0)))
	}
	// A malformed value is the same mistake on every rank: say so before MPI starts.
	for _, d := range append([]string{*device}, ids...) {
		if err := checkDevice(d); err != nil {
			return fault.AsUsage(err)
		}
	}

	comm, err := collective.Init()
	if err != nil {
		return fault.AsEnvironment(err)
	}
	defer comm.Finalize()
	if len(ids) > 0 {
		*device = ids[comm.LocalRank()%len(ids)]
	}
	id, err := rank.Identify(comm.Rank(), comm.Size(), comm.LocalRank(), comm.LocalSize(), rank.Options{Device: *device})
	row := probeRow{ID: id, Runtime: probeRuntime(*library, *providers)}
	if err != nil {
		row.Err = err.Error()
	}
	b, _ := json.Marshal(&row)
	all, err := comm.Gather(0, b)
	if err != nil {
		return fault.AsInternal(fmt.Errorf("probe: gathering identities: %w", err))
	}

	// Rank 0 prints the table and the first problem; the verdict goes back to every rank so
	// that each exits with the same code and only rank 0 speaks.
	var verdict [1]byte
	var first error
	if comm.Rank() == 0 {
		rows := make([]probeRow, len(all))
		for i, b := range all {
			if err := json.Unmarshal(b, &rows[i]); err != nil {
				return fault.AsInternal(fmt.Errorf("probe: decoding rank %d's identity: %w", i, err))
			}
		}
		writeProbe(w, rows)
		for i, r := range rows {
			if r.Err != "" {
				first = fault.AsEnvironment(fmt.Errorf("probe: rank %d: %s", i, r.Err))
				verdict[0] = 1
				break
			}
		}
	}
	if err := comm.Bcast(0, verdict[:]); err != nil {
		return fault.AsInternal(fmt.Errorf("probe: broadcasting the verdict: %w", err))
	}
	if comm.Rank() == 0 {
		return first
	}
	if verdict[0] != 0 {
		return &driver.RemoteError{Kind: fault.Environment}
	}
	return nil
}

func checkDevice(d string) error {
	switch strings.TrimSpace(d) {
	case "", "auto", "cpu":
		return nil
	}
	if n, err := strconv.Atoi(strings.TrimSpace(d)); err == nil && n >= 0 {
		return nil
	}
	return fmt.Errorf("--execution-device-ids %q: want auto, cpu or device numbers (flag or %s)", d, deviceEnv)
}

// takeDeviceIDs takes FaceFusion's --execution-device-ids and the values after it out of args
// (the flag package takes one value a flag).
func takeDeviceIDs(args []string) (rest, ids []string, err error) {
	for i := 0; i < len(args); i++ {
		name, val, inline := strings.Cut(args[i], "=")
		if name != "--execution-device-ids" && name != "-execution-device-ids" {
			rest = append(rest, args[i])
			continue
		}
		if inline {
			ids = append(ids, val)
			continue
		}
		n := len(ids)
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			ids = append(ids, args[i])
		}
		if len(ids) == n {
			return nil, nil, fmt.Errorf("probe: --execution-device-ids needs a value: auto, cpu or device numbers")
		}
	}
	return rest, ids, nil
}

// probeRuntime is the rank's ONNX Runtime as a job would find it (library, else
// ONNXRUNTIME_LIBRARY, else beside the program) and the providers it has here, in FaceFusion's
// order, with why each other one is missing; then a line for each GPU provider's plugin
// library (providers, else as a job finds them).
func probeRuntime(library, providers string) string {
	cfg := job.Default()
	cfg.OnnxruntimeLibrary = library
	cfg.ExecutionProviderLibrary = providers
	loc := cfg.RuntimeLocation()
	if err := pipeline.InitRuntime(cfg); err != nil {
		return fmt.Sprintf("%s: not loadable: %v", loc, err)
	}
	a, err := infer.AvailableProviders()
	if err != nil {
		return fmt.Sprintf("%s: %v", loc, err)
	}
	line := fmt.Sprintf("%s, version %s: providers %s", loc, infer.RuntimeVersion(), strings.Join(a.Available, " "))
	libs := infer.ProviderLibraries()
	below, rest := providersBelow(a, libs)
	if len(below) > 0 {
		line += "; no " + strings.Join(below, ", ") + " (why: their lines below)"
	}
	if why := rest.Why(); why != "" {
		line += "; no " + why
	}
	line += fmt.Sprintf("\n  GPU providers from %s", cfg.ProviderLocation())
	for _, l := range libs {
		line += fmt.Sprintf("\n  %s: %s", l.Provider, l)
	}
	return line
}

// providersBelow splits the unavailable providers into those whose provider library line says
// why (a library found, or the same reason as its line), so that the runtime line names them
// without saying it again, and the rest, whose reason the runtime line keeps.
func providersBelow(a infer.Availability, libs []infer.ProviderLibrary) (below []string, rest infer.Availability) {
	rest = infer.Availability{Available: a.Available, Unavailable: maps.Clone(a.Unavailable)}
	for _, l := range libs {
		if why, ok := a.Unavailable[l.Provider]; ok && (l.Path != "" || why == l.Why) {
			below = append(below, l.Provider)
			delete(rest.Unavailable, l.Provider)
		}
	}
	return below, rest
}

// writeProbe prints one line per rank, in rank order, and a summary line first.
func writeProbe(w io.Writer, rows []probeRow) {
	hosts := map[string]bool{}
	gpus := 0
	for _, r := range rows {
		hosts[r.ID.Host] = true
		if r.Err == "" && !r.ID.GPU.CPU() {
			gpus++
		}
	}
	fmt.Fprintf(w, "%d rank(s) on %d host(s), %d bound to a GPU, %s\n\n", len(rows), len(hosts), gpus, launcher())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rank\tlocal\thost\tdevice\tbinding")
	for i, r := range rows {
		dev := "cpu"
		if !r.ID.GPU.CPU() {
			dev = strconv.Itoa(r.ID.GPU.Device)
		}
		binding := r.ID.GPU.String()
		if r.Err != "" {
			dev, binding = "error", r.Err
		}
		fmt.Fprintf(tw, "%d/%d\t%d/%d\t%s\t%s\t%s\n", i, r.ID.WorldSize, r.ID.LocalRank, r.ID.LocalSize, r.ID.Host, dev, binding)
	}
	tw.Flush()
	writeRuntimes(w, rows)
}

// writeRuntimes prints each distinct runtime line once, with the ranks it is theirs when not
// every rank's.
func writeRuntimes(w io.Writer, rows []probeRow) {
	var lines []string
	ranks := map[string][]string{}
	for i, r := range rows {
		if ranks[r.Runtime] == nil {
			lines = append(lines, r.Runtime)
		}
		ranks[r.Runtime] = append(ranks[r.Runtime], strconv.Itoa(i))
	}
	fmt.Fprintln(w)
	for _, l := range lines {
		who := ""
		if len(lines) > 1 {
			who = " (ranks " + strings.Join(ranks[l], ",") + ")"
		}
		fmt.Fprintf(w, "onnx runtime%s: %s\n", who, l)
	}
}

// launcher names what started rank 0, as far as its environment tells.
func launcher() string {
	job := ""
	if id := os.Getenv("SLURM_JOB_ID"); id != "" {
		job = " in Slurm job " + id
	}
	switch {
	case os.Getenv("OMPI_COMM_WORLD_SIZE") != "":
		return "started by mpirun" + job
	case os.Getenv("SLURM_STEP_ID") != "" && os.Getenv("PMIX_RANK") != "":
		return "started by srun (PMIx)" + job
	case os.Getenv("PMIX_RANK") != "":
		return "started by a PMIx launcher" + job
	}
	return "started alone" + job
}
