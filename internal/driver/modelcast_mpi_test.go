package driver

import (
	"context"
	"crypto/md5"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/ranktest"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// castEnv marks this test binary started by TestModelBroadcast under mpirun: its value is the
// folder of the case, and each rank runs the case's jobs instead of launching them.
const castEnv = "FACEFUSION_TEST_MODEL_BROADCAST"

// castDone is the line each rank prints once its jobs ran as the case wants.
const castDone = "model broadcast: rank %d ran its jobs"

// The model broadcast on 2 real MPI ranks (one host, so model_broadcast on, as auto would be
// across hosts), each rank traced by strace: with the broadcast, rank 1 never names a file of
// the models folder (no open, no stat) and rank 0 opens each; without it, rank 1 opens every
// model file itself (which shows the trace sees them). The job (FaceFusion's inswapper_128 and
// arcface as fixtures, with a MODEL.hash; the real BlazeFace and dlib files) gives the same
// output bytes either way, and the run report records the broadcast's files and bytes. Before
// the job with the broadcast, the same job over a models folder without inswapper_128.onnx
// fails on rank 0 with the usual missing-model message and on rank 1 as rank 0's error, with
// nothing hung. The payload goes in 1-MiB pieces.
func TestModelBroadcast(t *testing.T) {
	if dir := os.Getenv(castEnv); dir != "" {
		castRanks(t, dir)
		return
	}
	root := t.TempDir()
	models := filepath.Join(root, "models")
	partial := filepath.Join(root, "partial")
	for _, d := range []string{models, partial} {
		if err := fixtures.Write(d); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{job.BlazeFaceFile, job.DlibFile} {
			if err := os.Symlink(testenv.Model(t, f), filepath.Join(d, f)); err != nil {
				t.Fatal(err)
			}
		}
	}
	swapper := filepath.Join(models, "inswapper_128.onnx")
	data, err := os.ReadFile(swapper)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(infer.HashPath(swapper), []byte(fmt.Sprintf("%08x", crc32.ChecksumIEEE(data))), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(partial, "inswapper_128.onnx")); err != nil {
		t.Fatal(err)
	}
	// The files the job reads, and their bytes: what the broadcast must carry.
	read := []string{job.BlazeFaceFile, job.DlibFile, "arcface_w600k_r50.onnx", "inswapper_128.onnx", "inswapper_128.hash"}
	var bytes int64
	for _, f := range read {
		st, err := os.Stat(filepath.Join(models, f))
		if err != nil {
			t.Fatal(err)
		}
		bytes += st.Size()
	}
	target := filepath.Join(root, "in.mp4")
	if out, err := exec.Command(testenv.Tool(t, "ffmpeg"), "-v", "error", "-y", "-loop", "1", "-i", testenv.Sample(t, "astronaut.png"),
		"-vf", "crop=250:250:100:20,scale=96:96", "-frames:v", "6", "-c:v", "libx264", "-pix_fmt", "yuv420p", target).CombinedOutput(); err != nil {
		t.Fatalf("making the target: %v %s", err, out)
	}
	strace := testenv.Tool(t, "strace")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a hang's net, not a speed limit
	defer cancel()
	launch := func(mode string) (traces [2]string) {
		dir := filepath.Join(root, mode)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		wrap := fmt.Sprintf(`exec %s -f -qq -e trace=%%file -o "%s/trace.$OMPI_COMM_WORLD_RANK" "$0" "$@"`, strace, dir)
		env := []string{castEnv + "=" + dir, "CAST_MODE=" + mode, "CAST_MODELS=" + models, "CAST_PARTIAL=" + partial, "CAST_TARGET=" + target}
		out, err := ranktest.Command(ctx, t, 2, env, "sh", "-c", wrap).CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("%s: the ranks hung:\n%s", mode, out)
		}
		for r := range 2 {
			if !strings.Contains(string(out), fmt.Sprintf(castDone, r)) {
				err = errors.Join(err, fmt.Errorf("rank %d did not finish", r))
			}
			b, rerr := os.ReadFile(filepath.Join(dir, fmt.Sprintf("trace.%d", r)))
			if rerr != nil {
				t.Fatal(rerr)
			}
			traces[r] = string(b)
		}
		if err != nil {
			t.Fatalf("%s: mpirun -np 2: %v\n%s", mode, err, out)
		}
		return traces
	}
	on, off := launch("on"), launch("off")
	// opens are the files of the models folder a trace opens (a stat is a line too).
	opens := func(trace string) (named int, opened map[string]bool) {
		opened = map[string]bool{}
		for _, line := range strings.Split(trace, "\n") {
			if !strings.Contains(line, models+"/") {
				continue
			}
			named++
			for _, f := range read {
				if strings.Contains(line, "openat(") && strings.Contains(line, `"`+filepath.Join(models, f)+`"`) && !strings.Contains(line, "ENOENT") {
					opened[f] = true
				}
			}
		}
		return named, opened
	}
	for _, c := range []struct {
		mode     string
		rank     int
		trace    string
		named    bool // any line names a file of the folder
		opensAll bool
	}{{"on", 0, on[0], true, true}, {"on", 1, on[1], false, false}, {"off", 0, off[0], true, true}, {"off", 1, off[1], true, true}} {
		named, opened := opens(c.trace)
		if (named > 0) != c.named || (len(opened) == len(read)) != c.opensAll {
			t.Errorf("broadcast %s, rank %d: %d trace line(s) name a model file, it opened %d of %v; want lines: %v, every file opened: %v",
				c.mode, c.rank, named, len(opened), read, c.named, c.opensAll)
		}
	}
	// Rank 0's own load takes the bytes it read for the broadcast: the MODEL.hash, which only the
	// read and the load's checks open (the fingerprint does not), is opened once, not again by
	// its load as without the broadcast.
	hashOpens := func(trace string) (n int) {
		for _, line := range strings.Split(trace, "\n") {
			if strings.Contains(line, "openat(") && strings.Contains(line, `"`+filepath.Join(models, "inswapper_128.hash")+`"`) && !strings.Contains(line, "ENOENT") {
				n++
			}
		}
		return n
	}
	if n, m := hashOpens(on[0]), hashOpens(off[0]); n != 1 || m < 2 {
		t.Errorf("rank 0 opened inswapper_128.hash %d time(s) with the broadcast (want 1: its read; its load takes the bytes) and %d without (want 2 or more)", n, m)
	}
	sum := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%x", md5.Sum(b))
	}
	if a, b := sum(filepath.Join(root, "on", "out.mp4")), sum(filepath.Join(root, "off", "out.mp4")); a != b {
		t.Errorf("the output with the broadcast (md5 %s) is not the output without it (%s)", a, b)
	}
	for _, mode := range []string{"on", "off"} {
		var rep report.Report
		b, err := os.ReadFile(filepath.Join(root, mode, "out.mp4.report.json"))
		if err == nil {
			err = json.Unmarshal(b, &rep)
		}
		if err != nil || len(rep.PerRank) != 2 {
			t.Fatalf("%s: the run report: %v", mode, err)
		}
		for _, r := range rep.PerRank {
			mb := r.ModelBroadcast
			switch {
			case mode == "off" && mb != nil:
				t.Errorf("off: rank %d reports a model broadcast: %+v", r.Rank, *mb)
			case mode == "on" && (mb == nil || mb.Files != len(read) || mb.Bytes != bytes || mb.Seconds <= 0 || (r.Rank == 0) != (mb.ReadSeconds > 0)):
				t.Errorf("on: rank %d reports the broadcast as %+v, want %d files of %d bytes", r.Rank, mb, len(read), bytes)
			}
		}
		if faces := rep.PerRank[0].FacesSwapped + rep.PerRank[1].FacesSwapped; faces != 6 {
			t.Errorf("%s: %d face(s) swapped, want one a frame", mode, faces)
		}
	}
}

// castRanks is one rank's part of TestModelBroadcast: in the case's folder dir, the job over
// the folder without the swapper (case on: it must fail), then the job.
func castRanks(t *testing.T, dir string) {
	comm := ranktest.Comm(t, 0)
	me, mode := comm.Rank(), os.Getenv("CAST_MODE")
	castChunk = 1 << 20 // the payload (101 MB) in 97 pieces: the cut a payload over 1 GiB needs
	cfg := job.Default()
	cfg.SourcePaths = []string{testenv.Sample(t, "grace_hopper.png")}
	cfg.TargetPath, cfg.OutputPath = os.Getenv("CAST_TARGET"), filepath.Join(dir, "out.mp4")
	cfg.OnnxruntimeLibrary = testenv.ORTLibrary(t)
	cfg.FaceSwapperModel = "inswapper_128"
	cfg.ChunkFrames = 3
	cfg.ModelBroadcast = mode
	opt := Options{Log: logging.New(os.Stderr, logging.Info)}
	if mode == "on" {
		missing := cfg
		missing.ModelsDir, missing.OutputPath = os.Getenv("CAST_PARTIAL"), filepath.Join(dir, "missing.mp4")
		_, err := Run(context.Background(), comm, missing, opt)
		var remote *RemoteError
		switch {
		case me == 0 && (fault.KindOf(err) != fault.Environment || !strings.Contains(fmt.Sprint(err), "model inswapper_128: file "+filepath.Join(missing.ModelsDir, "inswapper_128.onnx")+" is missing")):
			t.Fatalf("rank 0, the swapper missing: %v, want the missing-model error", err)
		case me != 0 && (!errors.As(err, &remote) || remote.Kind != fault.Environment):
			t.Fatalf("rank %d, the swapper missing: %v, want rank 0's error", me, err)
		}
	}
	cfg.ModelsDir = os.Getenv("CAST_MODELS")
	if _, err := Run(context.Background(), comm, cfg, opt); err != nil {
		t.Fatalf("rank %d: %v", me, err)
	}
	fmt.Printf(castDone+"\n", me)
}
