package conformance

import (
	"bytes"
	"crypto/md5"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

var (
	onlyFlag = flag.String("cases", "", "run only these cases (comma-separated names); the docs check is then skipped")
	keepFlag = flag.String("keep", "", "folder for every input, output and diff image (default: a folder of the system's temp folder, kept until the next run)")
)

func TestMain(m *testing.M) { clitest.Main(m) }

// baseArgs start both sides' flags, before a case's own (which override them: argparse and our
// flags take the last value): FaceFusion's defaults are not facefusion's embedded default.
var baseArgs = []string{"--processors", "face_swapper", "--face-swapper-model", "inswapper_128",
	"--face-detector-model", "scrfd", "--face-landmarker-model", "2dfan4", "--face-selector-mode", "one",
	"--execution-providers", "cpu", "--execution-thread-count", "1", "--log-level", "error"}

// oursOnly are our own flags: our departures from FaceFusion turned off (landmark smoothing),
// the identity measure (a report, no pixels) off, and the plumbing.
var oursOnly = []string{"--face-landmark-smoothing", "0", "--identity-measure", "off"}

// paths are one case's files.
type paths struct {
	input, source, ffOut, oursOut, ffResult, oursFaces, diff string
	extraSources                                             []string
}

func casePaths(work, samples string, c *Case) paths {
	p := paths{input: filepath.Join(work, "in", inputName(c)), ffResult: filepath.Join(work, "out", c.Name+".ff.json")}
	if c.Source != "" {
		p.source = filepath.Join(samples, c.Source)
	}
	if c.SourceTransform != "" {
		p.source = filepath.Join(work, "in", sourceName(c))
	}
	for _, s := range c.ExtraSources {
		p.extraSources = append(p.extraSources, filepath.Join(samples, s))
	}
	if c.Voice > 0 {
		p.extraSources = append(p.extraSources, filepath.Join(work, "in", voiceName(c)))
	}
	switch c.Compare {
	case CompareFaces:
		p.oursFaces = filepath.Join(work, "out", c.Name+".ours.json")
		p.ffOut = filepath.Join(work, "out", c.Name+".unused.png")
	case CompareImage:
		// FaceFusion wants the output's extension to be the target's (.png, or .jpg after jpeg:Q).
		ext := filepath.Ext(inputName(c))
		p.ffOut, p.oursOut = filepath.Join(work, "out", c.Name+".ff"+ext), filepath.Join(work, "out", c.Name+".ours"+ext)
	case CompareVideo:
		p.ffOut, p.oursOut = filepath.Join(work, "out", c.Name+".ff.mov"), filepath.Join(work, "out", c.Name+".ours.mov")
	}
	p.diff = filepath.Join(work, "out", c.Name+".diffx10.png")
	return p
}

// videoArgs: FaceFusion wants the output's extension to be the target's; rawvideo in .mov keeps
// every frame exact on both sides.
var videoArgs = []string{"--output-video-encoder", "rawvideo"}

func ffArgv(c *Case, p paths) []string {
	argv := append([]string{"headless-run"}, baseArgs...)
	if c.Compare == CompareVideo {
		argv = append(argv, videoArgs...)
	}
	argv = append(argv, c.Args...)
	if p.source != "" { // a faces case may have none: nothing then reads a source
		argv = append(append(argv, "-s", p.source), p.extraSources...)
	}
	return append(argv, "-t", p.input, "-o", p.ffOut)
}

func oursArgv(c *Case, p paths, models string) []string {
	var argv []string
	if c.Compare == CompareFaces {
		argv = []string{"faces", "-t", p.input}
	} else {
		argv = []string{"run", "-t", p.input, "-o", p.oursOut, "--force"}
	}
	if p.source != "" {
		argv = append(append(argv, "-s", p.source), p.extraSources...)
	}
	argv = append(argv, baseArgs...)
	if c.Compare == CompareVideo {
		argv = append(argv, videoArgs...)
	}
	argv = append(argv, oursOnly...)
	argv = append(argv, "--models-dir", models)
	return append(argv, c.Args...)
}

// reference is FaceFusion's oracle beside the checkout (../shared/reference).
func reference(t *testing.T) string {
	t.Helper()
	ref := filepath.Clean(filepath.Join(testenv.Root(t), "..", "shared", "reference"))
	if _, err := os.Stat(filepath.Join(ref, "run-facefusion")); err != nil {
		t.Fatalf("FaceFusion's oracle is missing: %s/run-facefusion (the conformance suite runs FaceFusion 3.8.1 from ../shared/reference beside the checkout, see DESIGN.md section 11): put the shared folder beside the checkout", ref)
	}
	return ref
}

// workDir is the suite's folder: the oracle's work copy (kept between runs: its copy and bridge
// are made once), the models, and this run's inputs and outputs (kept until the next run, for the
// diff images a failure names). Locked against another run of the suite from this checkout.
func workDir(t *testing.T) string {
	t.Helper()
	dir, own := *keepFlag, false
	if dir == "" {
		dir, own = filepath.Join(os.TempDir(), fmt.Sprintf("facefusion-conformance-%d-%x", os.Getuid(), md5.Sum([]byte(testenv.Root(t))))), true
	}
	if err := claimWorkDir(dir, own); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Close() })
	for _, sub := range []string{"in", "out", "models"} {
		if err := os.RemoveAll(filepath.Join(dir, sub)); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// workMarker marks a folder the suite made: only such a folder's in, out and models are
// emptied by a run.
const workMarker = ".facefusion-conformance"

// claimWorkDir makes dir with the marker, or checks that an existing dir has it: a -keep
// folder the user named for something else is refused, never emptied. own says the suite
// named dir itself (its default folder, marked whatever it holds).
func claimWorkDir(dir string, own bool) error {
	marker := filepath.Join(dir, workMarker)
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist) || err == nil && (len(entries) == 0 || own):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		return os.WriteFile(marker, []byte("made by the conformance suite; its in, out and models are emptied by each run\n"), 0o644)
	case err != nil:
		return err
	}
	if _, err := os.Stat(marker); err != nil {
		return fmt.Errorf("-keep %s: the folder exists and the suite did not make it (no %s in it): each run empties its in, out and models, so name a new or empty folder", dir, workMarker)
	}
	return nil
}

// writeModels writes our stand-ins and links the real scrfd_2.5g: the model files both sides run.
func writeModels(t *testing.T, dir string) {
	t.Helper()
	if err := fixtures.Write(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "scrfd_2.5g.onnx")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(testenv.SharedModel(t, "scrfd_2.5g.onnx"), filepath.Join(dir, "scrfd_2.5g.onnx")); err != nil {
		t.Fatal(err)
	}
	writeDeepSwapperModels(t, dir)
}

// CustomDeepSwapper is the site's deep_swapper model the cases name (custom/NAME): the 224
// stand-in again, in models_dir/custom, where FaceFusion and we list such files.
const CustomDeepSwapper = "custom/site_face"

// writeDeepSwapperModels adds the custom model and a .hash (FaceFusion's CRC32, which it checks
// before it loads a model and run-facefusion writes only beside the folder's own files) beside
// each deep_swapper stand-in in its scope folder.
func writeDeepSwapperModels(t *testing.T, dir string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, fixtures.File(fixtures.DeepSwapStandIns[0])))
	if err != nil {
		t.Fatal(err)
	}
	if err := fixtures.WriteFile(filepath.Join(dir, CustomDeepSwapper+".dfm"), data); err != nil {
		t.Fatal(err)
	}
	for _, name := range fixtures.DeepSwapStandIns {
		file := filepath.Join(dir, fixtures.File(name))
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		sum := fmt.Sprintf("%08x", crc32.ChecksumIEEE(b))
		if err := os.WriteFile(strings.TrimSuffix(file, filepath.Ext(file))+".hash", []byte(sum), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type ffJob struct {
	Name    string   `json:"name"`
	Compare string   `json:"compare"`
	Argv    []string `json:"argv"`
	Result  string   `json:"result"`
}

type ffResult struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	Trace string `json:"trace"`
	facesJSON
}

// oursWorkers is how many of our cases run at once.
const oursWorkers = 2

// cpuOf is the CPU time a finished command and the children it waited for used.
func cpuOf(cmd *exec.Cmd) time.Duration {
	if cmd.ProcessState == nil {
		return 0
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// runOurs runs one case's command of our binary; "" when it ran, else what failed.
func runOurs(cmd *exec.Cmd, c *Case, p paths) string {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Sprintf("facefusion %s: %v: %s", strings.Join(cmd.Args[1:], " "), err, strings.TrimSpace(stderr.String()))
	}
	if c.Compare == CompareFaces {
		if err := os.WriteFile(p.oursFaces, stdout.Bytes(), 0o644); err != nil {
			return fmt.Sprintf("writing %s: %v", p.oursFaces, err)
		}
	}
	return ""
}

// oracleShards is how many FaceFusion processes share the cases: FaceFusion is the slower side,
// and two processes (each in its own work folder, which run-facefusion locks) with ours beside
// them keep both cores busy.
const oracleShards = 2

// runOracle runs every case through FaceFusion: the cases are dealt round-robin to
// oracleShards run-facefusion calls running at once, each one long-lived driver process.
func runOracle(ref, work, models, ort string, cases []Case, ps []paths) (string, time.Duration, error) {
	shards := make([][]ffJob, oracleShards)
	for i := range cases {
		k := i % oracleShards
		shards[k] = append(shards[k], ffJob{cases[i].Name, cases[i].Compare, ffArgv(&cases[i], ps[i]), ps[i].ffResult})
	}
	_, file, _, _ := runtime.Caller(0)
	logs := make([]bytes.Buffer, oracleShards)
	errs := make([]error, oracleShards)
	cmds := make([]*exec.Cmd, oracleShards)
	var wg sync.WaitGroup
	for k, jobs := range shards {
		if len(jobs) == 0 {
			continue
		}
		data, err := json.Marshal(jobs)
		if err != nil {
			return "", 0, err
		}
		list := filepath.Join(work, "out", fmt.Sprintf("jobs-%d.json", k))
		if err := os.WriteFile(list, data, 0o644); err != nil {
			return "", 0, err
		}
		cmd := exec.Command(filepath.Join(ref, "run-facefusion"), "--work", filepath.Join(work, fmt.Sprintf("ffwork-%d", k)), "--models", models, "--ort", ort, "--", list)
		// FFREF_PYTHON (the user's, as need.sh and run-facefusion read it) becomes the
		// wrapper's interpreter; the wrapper takes its place.
		real := os.Getenv("FFREF_PYTHON")
		if real == "" {
			real = "/usr/bin/python3"
		}
		cmd.Env = append(os.Environ(), "FFREF_FLOAT_WARP=1", "FFREF_PYTHON="+filepath.Join(filepath.Dir(file), "oracle", "python"), "FFREF_PYTHON_WRAPPED="+real)
		cmd.Stdout, cmd.Stderr = &logs[k], &logs[k]
		cmds[k] = cmd
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = cmd.Run()
		}()
	}
	wg.Wait()
	var out strings.Builder
	var cpu time.Duration
	for k := range logs {
		out.Write(logs[k].Bytes())
		if cmds[k] != nil {
			cpu += cpuOf(cmds[k])
		}
	}
	return out.String(), cpu, errors.Join(errs...)
}

func TestConformance(t *testing.T) {
	testenv.Full(t, "runs every case through FaceFusion's code and the binary")
	root, ref := testenv.Root(t), reference(t)
	samples := filepath.Join(testenv.Cache(t), "samples")
	all, err := LoadCases(filepath.Join(root, "internal", "conformance", "cases"), samples)
	if err != nil {
		t.Fatal(err)
	}
	cases := all
	if *onlyFlag != "" {
		cases = nil
		for _, name := range strings.Split(*onlyFlag, ",") {
			found := false
			for _, c := range all {
				if c.Name == name {
					cases, found = append(cases, c), true
				}
			}
			if !found {
				t.Fatalf("-cases: no case named %q", name)
			}
		}
	}
	testenv.Tool(t, "ffmpeg")
	work := workDir(t)
	models := filepath.Join(work, "models")
	writeModels(t, models)
	ps := make([]paths, len(cases))
	for i := range cases {
		ps[i] = casePaths(work, samples, &cases[i])
	}
	prepared := time.Now()
	if err := makeInputs(filepath.Join(work, "in"), samples, cases); err != nil {
		t.Fatal(err)
	}
	inputsTime := time.Since(prepared)

	// FaceFusion in the background (oracleShards processes), ours meanwhile.
	start := time.Now()
	type oracleRun struct {
		log     string
		err     error
		at, cpu time.Duration
	}
	oracle := make(chan oracleRun, 1)
	go func() {
		log, cpu, err := runOracle(ref, work, models, testenv.ORTLibrary(t), cases, ps)
		oracle <- oracleRun{log, err, time.Since(start), cpu}
	}()
	// Ours, two cases at a time: with FaceFusion's shards beside them, both cores stay busy to
	// the end whichever side finishes first.
	oursErr := make([]string, len(cases))
	cmds := make([]*exec.Cmd, len(cases))
	for i := range cases {
		cmds[i] = clitest.Command(t, oursArgv(&cases[i], ps[i], models)...)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range oursWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				oursErr[i] = runOurs(cmds[i], &cases[i], ps[i])
			}
		}()
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()
	oursTime := time.Since(start)
	o := <-oracle
	var oursCPU time.Duration
	for _, cmd := range cmds {
		oursCPU += cpuOf(cmd)
	}
	// CPU seconds besides wall: on a loaded machine the wall times say little of either side.
	t.Logf("%d cases: ours %.1f s (%.0f CPU-s), FaceFusion %.1f s (%.0f CPU-s) (side by side), in %s",
		len(cases), oursTime.Seconds(), oursCPU.Seconds(), o.at.Seconds(), o.cpu.Seconds(), work)
	if o.err != nil {
		t.Fatalf("the FaceFusion oracle failed: %v\n%s", o.err, o.log)
	}

	// The comparisons read and decode both sides' outputs and write the diff images: every core.
	compared := time.Now()
	results := make([]result, len(cases))
	eachAtOnce(len(cases), func(i int) { results[i] = measure(&cases[i], ps[i], oursErr[i]) })
	t.Logf("inputs %.1f s, comparisons %.1f s, on %d cores", inputsTime.Seconds(), time.Since(compared).Seconds(), runtime.NumCPU())
	for i := range cases {
		c, p, r := &cases[i], ps[i], results[i]
		t.Run(c.Name, func(t *testing.T) {
			switch {
			case r.verdict == verdictAgrees && c.Cause != "":
				t.Errorf("%s: meets the tolerances (%s): take its cause out of %s", c.Name, r.figures.text(c.Compare), c.File)
			case r.verdict == verdictAgrees:
				t.Logf("%s", r.figures.text(c.Compare))
			case r.verdict == verdictKnown:
				t.Logf("known divergence (%s): %s; %s", c.Cause, r.why, r.figures.text(c.Compare))
			default:
				where := ""
				if c.Compare != CompareFaces {
					where = fmt.Sprintf("; diff ×10: %s (FaceFusion %s, ours %s)", p.diff, p.ffOut, p.oursOut)
				}
				t.Errorf("%s (%s): %s; %s%s", c.Name, c.File, r.why, r.figures.text(c.Compare), where)
			}
		})
	}

	if *onlyFlag != "" {
		t.Logf("-cases given: docs/conformance.md not checked")
		return
	}
	testenv.Generated(t, filepath.Join(root, "docs", "conformance.md"), renderTable(results, uncovered(all)), tableBegin, tableEnd,
		"a case added, a verdict or figure changed")
}

// measure compares one case's outputs.
func measure(c *Case, p paths, oursErr string) result {
	r := result{c: c}
	fail := func(why string) result {
		r.verdict, r.why = verdictFails, why
		return r
	}
	data, err := os.ReadFile(p.ffResult)
	if err != nil {
		return fail("FaceFusion left no result: " + err.Error())
	}
	var ff ffResult
	if err := json.Unmarshal(data, &ff); err != nil {
		return fail(fmt.Sprintf("FaceFusion's result %s: %v", p.ffResult, err))
	}
	if !ff.OK {
		return fail("FaceFusion failed: " + ff.Error + "\n" + ff.Trace)
	}
	if oursErr != "" {
		return fail(oursErr)
	}
	switch c.Compare {
	case CompareFaces:
		ours, err := readFaces(p.oursFaces)
		if err != nil {
			return fail(err.Error())
		}
		r.figures = compareFaces(&ff.facesJSON, ours)
	case CompareImage, CompareVideo:
		var a, b []frameRGB
		if c.Compare == CompareImage {
			fa, err1 := readPNG(p.ffOut)
			fb, err2 := readPNG(p.oursOut)
			if err1 != nil || err2 != nil {
				return fail(fmt.Sprintf("reading the outputs: %v, %v", err1, err2))
			}
			a, b = []frameRGB{fa}, []frameRGB{fb}
		} else {
			var err1, err2 error
			a, err1 = readFrames(p.ffOut)
			b, err2 = readFrames(p.oursOut)
			if err1 != nil || err2 != nil {
				return fail(fmt.Sprintf("reading the outputs: %v, %v", err1, err2))
			}
		}
		if r.figures, err = comparePixels(a, b, &ff.facesJSON, p.diff); err != nil {
			return fail(err.Error())
		}
		if c.Compare == CompareImage { // FaceFusion's alpha too (background_remover's mask)
			if why := alphaDiffers(p.ffOut, p.oursOut); why != "" {
				return fail(why)
			}
		}
	}
	ok, why := r.figures.within(c.Compare)
	switch {
	case ok:
		r.verdict = verdictAgrees
	case c.Cause != "":
		r.verdict, r.why = verdictKnown, why
	default:
		r.verdict, r.why = verdictFails, why
	}
	return r
}
