package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/facefusion-hpc/facefusion/internal/driver"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/rank"
)

const planUsage = `usage: facefusion plan -t TARGET --ranks N [run flags]

Prints how a run over N ranks would split TARGET: the trimmed frame range, the chunks (one
segment file each) and the contiguous block of chunks and frames each rank gets. It takes run's
flags (--chunk-frames, --trim-frame-start, --trim-frame-end, --output-video-fps,
--output-video-scale, --config FILE, --config-path INI, …) with run's precedence: FaceFusion's
facefusion.ini from the working folder (or --config-path), then the job file, then the flags.
With --output-video-fps the frames are the output's, resampled from the trimmed range before
they are split. Nothing is decoded or written; only ffprobe runs.
`

// cmdPlan is `facefusion plan`: the static partition a run would use, without running it.
// Its flags are run's (one flag table, one parser), plus --ranks.
func cmdPlan(ctx context.Context, args []string, w io.Writer) error {
	ranks, rest, err := takeRanks(args)
	if err != nil {
		return fault.AsUsage(fmt.Errorf("plan: %v (see facefusion plan --help)", err))
	}
	cfg, err := job.ParseLoose(rest)
	if errors.Is(err, job.ErrHelp) {
		fmt.Fprint(os.Stderr, planUsage)
		return nil
	}
	if err != nil {
		return fault.AsUsage(fmt.Errorf("plan: %w", err))
	}
	switch { // every value was checked as run checks it; what plan needs besides
	case cfg.TargetPath == "":
		return fault.AsUsage(errors.New("plan: give the target video (-t FILE)"))
	case ranks < 1:
		return fault.AsUsage(fmt.Errorf("plan: --ranks %d: give the number of ranks the run will have (at least 1)", ranks))
	}
	if _, err := os.Stat(cfg.TargetPath); err != nil {
		return fault.AsInput(fmt.Errorf("target %s: no such file: check the path given to -t", cfg.TargetPath))
	}
	if pipeline.IsImagePath(cfg.TargetPath) {
		fmt.Fprintf(w, "target  %s: an image; rank 0 processes it alone and the other %d rank(s) idle\n", cfg.TargetPath, ranks-1)
		return nil
	}
	info, err := video.Probe(ctx, cfg.TargetPath)
	if err != nil {
		return fault.AsInput(err)
	}
	m, err := pipeline.OutputFrames(cfg, info)
	if err != nil {
		return fault.AsInput(fmt.Errorf("target %s: %w", cfg.TargetPath, err))
	}
	if err := pipeline.CheckOutputSize(cfg, info); err != nil {
		return err
	}
	start, end := m.Output()
	frames := rank.Range{Start: start, End: end}
	chunks, assignment := driver.MakePlan(frames, cfg.ChunkFrames, ranks)
	output := ""
	if m.Resampled() || cfg.OutputVideoScale != 1 {
		ow, oh := pipeline.OutputSize(cfg, info)
		output = fmt.Sprintf("%d frames, %dx%d, %v fps", m.Frames(), ow, oh, m.Out)
		if m.Resampled() {
			output += fmt.Sprintf(": the target's frames [%d,%d) resampled; frame numbers below count the output's frames from %d", m.Start, m.End, m.Start)
		}
	}
	writePlan(w, cfg.TargetPath, info, frames, cfg.ChunkFrames, chunks, assignment, output)
	return nil
}

// takeRanks takes plan's own --ranks N (or --ranks=N) out of args; 0 when it is not there.
func takeRanks(args []string) (int, []string, error) {
	n, rest := 0, make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		v, ok := "", false
		switch a := args[i]; {
		case a == "--ranks" || a == "-ranks":
			if i+1 >= len(args) {
				return 0, nil, errors.New("--ranks needs a value (N)")
			}
			v, ok = args[i+1], true
			i++
		case strings.HasPrefix(a, "--ranks="):
			v, ok = strings.TrimPrefix(a, "--ranks="), true
		default:
			rest = append(rest, a)
		}
		if ok {
			r, err := strconv.Atoi(v)
			if err != nil {
				return 0, nil, fmt.Errorf("--ranks %q is not a whole number", v)
			}
			n = r
		}
	}
	return n, rest, nil
}

// writePlan prints the plan as two aligned tables: per rank, then per chunk. The rank table
// comes first because it is what a user sizing a job looks at; the chunk table names the
// segment files a rerun or a failure message refers to. output describes an output resampled
// or scaled from the target ("": the target's rate and size).
func writePlan(w io.Writer, target string, info *video.Info, frames rank.Range, chunkFrames int, chunks, assignment []rank.Range, output string) {
	audio := "no audio"
	if info.HasAudio {
		audio = "audio"
	}
	fmt.Fprintf(w, "target  %s: %d frames, %dx%d, %v fps, %s\n", target, info.Frames, info.Width, info.Height, info.FPS, audio)
	if output != "" {
		fmt.Fprintf(w, "output  %s\n", output)
	}
	fmt.Fprintf(w, "frames  %v: %d frames in %d chunk(s) of %d, over %d rank(s)\n", frames, frames.Len(), len(chunks), chunkFrames, len(assignment))
	idle := 0
	for _, a := range assignment {
		if a.Empty() {
			idle++
		}
	}
	if idle > 0 {
		fmt.Fprintf(w, "note    %d rank(s) get no chunk: they take part in the run but encode nothing; use fewer ranks or a smaller --chunk-frames\n", idle)
	}
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rank\tchunks\tframes\tcount")
	chunkRank := make([]int, len(chunks))
	for r, a := range assignment {
		if a.Empty() {
			fmt.Fprintf(tw, "%d\t-\t-\t0\n", r)
			continue
		}
		span := rank.Range{Start: chunks[a.Start].Start, End: chunks[a.End-1].End}
		fmt.Fprintf(tw, "%d\t%v\t%v\t%d\n", r, a, span, span.Len())
		for c := a.Start; c < a.End; c++ {
			chunkRank[c] = r
		}
	}
	tw.Flush()
	fmt.Fprintln(w)

	fmt.Fprintln(tw, "chunk\tframes\tcount\trank")
	for c, ch := range chunks {
		fmt.Fprintf(tw, "%d\t%v\t%d\t%d\n", c, ch, ch.Len(), chunkRank[c])
	}
	tw.Flush()
}
