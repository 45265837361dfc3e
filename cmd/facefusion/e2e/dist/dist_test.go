package dist

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/slurm"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/driver"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/scaling"
	"github.com/facefusion-hpc/facefusion/internal/slurmtest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// Distributed runs under the real launchers: mpirun without Slurm, and srun/sbatch on a Slurm
// cluster the test starts. Pass-through runs encode with lossless ffv1, so "correct" means
// frame-for-frame equal to the target's decoded frames.

// Any rank count and chunk size gives the very frames of the target (or of its trimmed range),
// and its audio. Each case stands for a kind of split (ranks get even contiguous shares, chunks
// are cut inside them): one rank; a chunk cut between two ranks, the last chunk short; ranks
// that encode no chunk (4 ranks, 2 chunks: ranks 1 and 3 only send their frames, yet take part
// in every collective step, so the run ends: formerly TestDistIdleRanks); a 30000/1001 fps
// target with a chunk cut between ranks; a trimmed range whose chunks fall on the ranks'
// bounds, and one cut inside them.
func TestDistPassThrough(t *testing.T) {
	t.Parallel() // two at a time, after the rest: see main_test.go
	dir := t.TempDir()
	bf := filepath.Join(dir, "bframes.mp4")
	clitest.BframeClip(t, bf, 40)
	ntsc := filepath.Join(dir, "ntsc.mp4")
	clitest.FaceClip(t, ntsc, 160, 120, 30, "30000/1001")
	if fps := clitest.Probe(t, ntsc).FPS; fps.Num != 30000 || fps.Den != 1001 {
		t.Fatalf("fixture %s runs at %v fps, want 30000/1001", ntsc, fps)
	}

	cases := []struct {
		target       string
		ranks, chunk int
		start, end   int // trim; -1: none
	}{
		{bf, 1, 16, -1, -1},  // 40 = 16+16+8
		{bf, 3, 7, -1, -1},   // 14, 13, 13 frames; 6 chunks, chunk 3 cut at 27, the last of 5 frames
		{bf, 4, 20, -1, -1},  // 10 frames a rank, 2 chunks: ranks 1 and 3 encode nothing
		{ntsc, 2, 7, -1, -1}, // 15 frames a rank; 5 chunks, chunk 2 cut at 15
		{bf, 2, 13, 7, 33},   // 26 frames: 13 a rank, one chunk each
		{bf, 3, 6, 7, 33},    // 9, 9, 8 frames; 5 chunks, chunk 1 cut at 16, the last of 2 frames
	}
	hashes := map[string][]string{bf: clitest.FrameHashes(t, bf), ntsc: clitest.FrameHashes(t, ntsc)}
	for _, c := range cases {
		name := fmt.Sprintf("%s/ranks=%d/chunk=%d", strings.TrimSuffix(filepath.Base(c.target), ".mp4"), c.ranks, c.chunk)
		var trim []string
		want := hashes[c.target]
		if c.start >= 0 {
			name += fmt.Sprintf("/trim=%d-%d", c.start, c.end)
			trim = []string{"--trim-frame-start", strconv.Itoa(c.start), "--trim-frame-end", strconv.Itoa(c.end)}
			want = want[c.start:c.end]
		}
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.mkv")
			r := clitest.Mpirun(t, clitest.HangGuard(t), c.ranks, clitest.PassThroughArgs(c.target, out, c.chunk, trim...)...)
			if r.Code != 0 {
				t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
			}
			if strings.TrimSpace(r.Stdout) != out {
				t.Errorf("stdout %q, want the output path once (from rank 0 only)", r.Stdout)
			}
			clitest.CheckFrames(t, out, want)
			if _, err := os.Stat(out + ".job"); err == nil {
				t.Errorf("the job folder %s.job is left after a finished run", out)
			}
		})
	}
}

// A face swap split over 3 ranks is bit-identical to the same swap on 1 rank, with the
// lossy default encoder (libx264) into MP4 (joined in parallel), packet by packet and file by
// file: ranks share the source analysis rank 0
// made, every chunk is encoded from its own start by its own encoder, whose thread count follows
// the output and not the rank's CPUs, and the landmarks' time window (face_landmark_smoothing,
// on by default) is fed by halo frames each rank decodes and analyses around its run, clipped to
// the video's ends: so neither chunk boundaries nor rank count change a byte of video. In chunks
// of 25 the even split cuts inside chunks: on 3 ranks (14, 13, 13) rank 1 both sends [14,25)
// to rank 0, which encodes chunk 0, and encodes chunk 1 with [27,40) from rank 2, while rank 2
// encodes nothing (a 2-rank run, rank 1 sending [20,25), tested no path this one misses, and was
// dropped for the time it cost). Across chunk sizes the encoder's keyframes
// differ, so there the frames are compared, losslessly (ffv1): 1 rank in one chunk of 96 (one
// window over the whole clip) and 3 ranks in chunks of 8 (chunks 1 and 3 shared; rank 1 sends 2
// frames of chunk 1 and takes 5 of chunk 3). The frames
// with a face are counted per chunk, shared ones included, and add up the same.
func TestDistSwapMatchesOneRank(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "face.mp4")
	clitest.FaceClip(t, in, 320, 240, 40, "25")
	src := testenv.Sample(t, "grace_hopper.png")
	// Every 10th frame measured (the job's own sample would take frame 0 alone): frames on
	// every rank of the 3.
	t.Setenv(pipeline.IdentityEveryEnv, "10")
	type run struct {
		ranks, chunk int
		encoder      string
	}
	runs := []run{{1, 25, "libx264"}, {3, 25, "libx264"}, {1, 96, "ffv1"}, {3, 8, "ffv1"}}
	outs, faces := map[run]string{}, map[run]string{}
	for _, c := range runs {
		// libx264's into MP4: joined in parallel, from MP4 segments, by every rank.
		ext := map[string]string{"libx264": ".mp4", "ffv1": ".mkv"}[c.encoder]
		out := filepath.Join(dir, fmt.Sprintf("swap-%d-%d-%s%s", c.ranks, c.chunk, c.encoder, ext))
		prom := filepath.Join(dir, fmt.Sprintf("swap-%d-%d-%s.prom", c.ranks, c.chunk, c.encoder))
		args := []string{"run", "-s", src, "-t", in, "-o", out, "--chunk-frames", strconv.Itoa(c.chunk), "--metrics-path", prom, "--output-video-encoder", c.encoder}
		// 1 rank without mpirun: not bound, it may use both cores (ffmpeg's own thread count
		// would be 3), where each of the ranks under mpirun has one.
		var r clitest.Result
		if c.ranks == 1 {
			r = clitest.Run(t, args...)
		} else {
			r = clitest.Mpirun(t, clitest.HangGuard(t), c.ranks, args...)
		}
		if r.Code != 0 {
			t.Fatalf("%d rank(s), chunks of %d: exit %d\n%s", c.ranks, c.chunk, r.Code, r.Stderr)
		}
		if parallel := strings.Contains(r.Stderr, "join: parallel"); parallel != (ext == ".mp4") {
			t.Errorf("%s: joined in parallel %v, want %v\n%s", filepath.Base(out), parallel, ext == ".mp4", r.Stderr)
		}
		outs[c] = out
		faces[c] = facesLine.FindString(r.Stderr)
		// Every run's report holds the output's block hash, coreutils' (the parallel join's MP4,
		// hashed in the join's copy: its one block over the 3 ranks goes along their chain, and
		// no rank reads the output back (CheckRunReport: stage hash 0); the serial join's
		// Matroska, read back: under one block, rank 0's alone; TestOutputHashRanks in
		// internal/driver has the ranks' shares).
		clitest.CheckOutputHash(t, clitest.ReadReport(t, report.Path(out)), out)
		if c == runs[1] { // the run report and the metrics, validated against what the run did
			rep := clitest.CheckReportEnd(t, out, r, lustre.Complete)
			clitest.CheckRunReport(t, rep, in, out, []string{src}, c.ranks, clitest.Probe(t, out).Frames, false)
			clitest.CheckMetrics(t, prom, rep)
			// Each rank processed its even share: no rank more than one frame over another.
			var per []int
			for _, pr := range rep.PerRank {
				per = append(per, pr.Frames)
			}
			if fmt.Sprint(per) != "[14 13 13]" {
				t.Errorf("the run report's frames per rank are %v, want [14 13 13]", per)
			}
		}
	}
	one := packetHashes(t, outs[runs[0]])
	for _, c := range runs[1:2] {
		many := packetHashes(t, outs[c])
		if len(one) != 40 || len(many) != 40 {
			t.Fatalf("outputs have %d and %d video packets, want 40", len(one), len(many))
		}
		for i := range one {
			if one[i] != many[i] {
				t.Fatalf("video packet %d differs between 1 rank and %d ranks:\n%s\n%s", i, c.ranks, one[i], many[i])
			}
		}
		// The files too, byte for byte: the parallel join's layout does not depend on how the
		// segments were shared among the ranks.
		if a, b := clitest.FileMD5(t, outs[runs[0]]), clitest.FileMD5(t, outs[c]); a != b {
			t.Fatalf("1-rank and %d-rank outputs hold the same packets but differ as files (%s, %s)", c.ranks, a, b)
		}
	}
	whole, small := clitest.FrameHashes(t, outs[runs[2]]), clitest.FrameHashes(t, outs[runs[3]])
	if len(whole) != 40 || len(small) != 40 {
		t.Fatalf("lossless outputs have %d and %d frames, want 40", len(whole), len(small))
	}
	for i := range whole {
		if whole[i] != small[i] {
			t.Fatalf("frame %d differs between 1 rank in one chunk of 96 and 3 ranks in chunks of 8", i)
		}
	}
	// Not a vacuous match: the swap found a face in most frames, and says so alike.
	m := facesLine.FindStringSubmatch(faces[runs[0]])
	for _, c := range runs[1:] {
		if m == nil || faces[c] != faces[runs[0]] {
			t.Fatalf("face lines %q (1 rank, chunks of 25) and %q (%d ranks, chunks of %d): want the same count", faces[runs[0]], faces[c], c.ranks, c.chunk)
		}
	}
	if n, _ := strconv.Atoi(m[1]); n < 20 {
		t.Fatalf("%s: the swap found few faces to replace", faces[runs[0]])
	}
	// The identity measure takes frames at fixed places of the video (0, 10, 20 and 30 of these
	// 40, by the test's stride), so 1 and 3 ranks measure the same faces and report the same.
	id1, id3 := clitest.ReadReport(t, report.Path(outs[runs[0]])).Identity, clitest.ReadReport(t, report.Path(outs[runs[1]])).Identity
	if id1 == nil || id3 == nil || id1.Faces != 4 || id1.Every != 10 || *id1 != *id3 {
		t.Errorf("identity measure: 1 rank %+v, 3 ranks %+v; want the same, of 4 faces every 10th frame", id1, id3)
	}
}

// facesLine is the log line of the frames with a face swapped (summed from the chunks').
var facesLine = regexp.MustCompile(`a face was swapped in ([0-9]+) of 40 frames`)

// packetHashes is ffmpeg's framemd5 of the video stream's packets as stored (no decoding):
// each line its timestamps, size and hash.
func packetHashes(t *testing.T, path string) []string {
	t.Helper()
	out, err := exec.Command(testenv.Tool(t, "ffmpeg"), "-nostdin", "-loglevel", "error", "-i", path, "-map", "0:v:0", "-c", "copy", "-f", "framemd5", "-").Output()
	if err != nil {
		t.Fatalf("framemd5 of %s's packets: %v", path, err)
	}
	var lines []string
	for _, line := range strings.Split(string(out), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			lines = append(lines, line)
		}
	}
	return lines
}

// A rank that fails stops the whole job: every rank exits (no hang), the exit is non-zero,
// rank 0 prints one line naming the failing rank and chunk, and nothing reaches the output.
func TestDistRankFailure(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	clitest.BframeClip(t, in, 40)
	out := filepath.Join(dir, "out.mkv")
	// 8 chunks of 5 over 3 ranks: rank 1 has chunks 3–5. Its journal's second write fails as on
	// a full disk, so recording chunk 4 fails on rank 1 alone. Rank 0 is held at chunk 0 (its
	// first, so it is there well before rank 1 has two chunks done) until its encode is stopped:
	// only the failure reaching it (the ranks' control round) does that.
	ctx := clitest.HangGuard(t)
	argv := append([]string{"-np", "3", "--oversubscribe", "--allow-run-as-root", clitest.Bin}, clitest.PassThroughArgs(in, out, 5)...)
	cmd := exec.CommandContext(ctx, testenv.Tool(t, "mpirun"), argv...)
	cmd.Env = append(clitest.LaunchEnv(t), lustre.FaultEnv+"=rank-1.json:2", driver.PauseEnv+"=chunk-0")
	r := clitest.RunCmd(t, ctx, cmd)
	if r.Code == 0 {
		t.Fatalf("exit 0 although rank 1 could not record chunk 4\n%s", r.Stderr)
	}
	if !strings.Contains(r.Stderr, "test pause at chunk-0") {
		t.Fatalf("rank 0 was not held at chunk 0, so the failure's arrival is not shown:\n%s", r.Stderr)
	}
	var ours []string
	for _, line := range strings.Split(r.Stderr, "\n") {
		if l, ok := logging.ParseLine(line); ok && strings.HasPrefix(l.Message, "rank ") {
			ours = append(ours, line)
		}
	}
	if len(ours) != 1 || !strings.Contains(ours[0], "rank 1, chunk 4") || !strings.Contains(ours[0], "rank-1.json") {
		t.Fatalf("want one error line from rank 0 naming rank 1, chunk 4 and its journal; got %q\nstderr:\n%s", ours, r.Stderr)
	}
	clitest.MustNotExist(t, out)
}

// plan prints the partition a run would use: even contiguous shares of the frames, the chunks
// each rank encodes and the chunks shared between ranks, idle ranks marked.
func TestPlan(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	clitest.BframeClip(t, in, 40)
	space := regexp.MustCompile(`\s+`)
	rows := func(out string) map[string]string { // first column → the whole row, normalised
		m := map[string]string{}
		for _, line := range strings.Split(out, "\n") {
			line = strings.TrimSpace(space.ReplaceAllString(line, " "))
			if f := strings.Fields(line); len(f) > 0 {
				if _, ok := m[f[0]]; !ok {
					m[f[0]] = line
				}
			}
		}
		return m
	}

	r := clitest.Run(t, "plan", "-t", in, "--ranks", "3", "--chunk-frames", "4")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	got := rows(r.Stdout)
	// 40 frames over 3 ranks: 14, 13, 13; chunks 3 and 6 are cut between two ranks.
	for _, want := range []string{"0 [0,14) 14 chunks [0,4) takes 2 of chunk 3 from rank(s) after it",
		"1 [14,27) 13 chunks [4,7) sends 2 of chunk 3 to rank 0; takes 1 of chunk 6 from rank(s) after it",
		"2 [27,40) 13 chunks [7,10) sends 1 of chunk 6 to rank 1"} {
		if got[want[:1]] != want {
			t.Errorf("rank row %q, want %q\n%s", got[want[:1]], want, r.Stdout)
		}
	}
	if !strings.Contains(r.Stdout, "40 frames in 10 chunk(s) of 4, over 3 rank(s)") {
		t.Errorf("summary missing:\n%s", r.Stdout)
	}
	// the chunk table: the last chunk is 9, frames [36,40), on rank 2; chunk 6 is shared
	if !regexp.MustCompile(`(?m)^9\s+\[36,40\)\s+4\s+2\s+-$`).MatchString(r.Stdout) ||
		!regexp.MustCompile(`(?m)^6\s+\[24,28\)\s+4\s+1\s+\[2\]$`).MatchString(r.Stdout) {
		t.Errorf("chunk 9's or chunk 6's row missing:\n%s", r.Stdout)
	}

	// trimmed, more ranks than chunks: a chunk over three ranks, two of which encode nothing
	r = clitest.Run(t, "plan", "-t", in, "--ranks", "4", "--chunk-frames", "13", "--trim-frame-start", "7", "--trim-frame-end", "33")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	got = rows(r.Stdout)
	for _, want := range []string{"0 [7,14) 7 chunks [0,1) takes 6 of chunk 0 from rank(s) after it",
		"1 [14,21) 7 chunks [1,2) sends 6 of chunk 0 to rank 0; takes 12 of chunk 1 from rank(s) after it",
		"2 [21,27) 6 - sends 6 of chunk 1 to rank 1", "3 [27,33) 6 - sends 6 of chunk 1 to rank 1"} {
		if got[want[:1]] != want {
			t.Errorf("rank row %q, want %q\n%s", got[want[:1]], want, r.Stdout)
		}
	}
	// more ranks than frames
	r = clitest.Run(t, "plan", "-t", in, "--ranks", "30", "--chunk-frames", "13", "--trim-frame-start", "7", "--trim-frame-end", "33")
	if got = rows(r.Stdout); r.Code != 0 || !strings.Contains(r.Stdout, "4 rank(s) get no frame") || got["29"] != "29 - 0 - -" {
		t.Errorf("idle ranks not pointed out (exit %d):\n%s", r.Code, r.Stdout)
	}

	// The model, with --frames and no target: the wall printed is scaling.Model's for the same
	// partition, frame size, bandwidth and model file, from the built-in costs.
	r = clitest.Run(t, "plan", "--frames", "1000", "--ranks", "7", "--chunk-frames", "50", "--frame-size", "1920x1080", "--fs-bandwidth", "10", "--model-bytes", "5e8")
	if r.Code != 0 {
		t.Fatalf("plan --frames: exit %d: %s", r.Code, r.Stderr)
	}
	modelled := func(c scaling.Costs, frames, chunk, ranks, pixels int, fs float64, model int64) scaling.Estimate {
		chunks, split := driver.MakePlan(rank.Range{Start: 0, End: frames}, chunk, ranks)
		s := scaling.Scale{Ranks: ranks, Segments: len(chunks), Pixels: pixels, FSBandwidth: fs, ClientBW: scaling.DefaultClientBW,
			RanksPerNode: scaling.DefaultRanksPerNode, ModelBytes: model, Launch: -1, NetBW: scaling.DefaultNetBW,
			ParallelJoin: true} // the default output, an MP4 of libx264: joined by every rank
		s.Broadcast = s.Broadcasts("auto") // model_broadcast's default
		for _, pieces := range split {
			s.Shares = append(s.Shares, rank.Frames(pieces))
		}
		return scaling.Model(c, s)
	}
	e := modelled(scaling.Measured, 1000, 50, 7, 1920*1080, 10e9, 5e8)
	met := map[bool]string{true: "is met", false: "is NOT met"}[e.SerialShare <= scaling.Goal]
	for _, want := range []string{fmt.Sprintf("wall          %.2f s (one rank: %.2f s)", e.Wall, e.OneRank),
		fmt.Sprintf("serial share  %.1f %%", 100*e.SerialShare), met, "largest serial term is " + e.Dominant, "costs from built-in"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("plan --frames: %q missing:\n%s", want, r.Stdout)
		}
	}
	// -t with a run report's costs (--costs): a report whose output is the target here.
	rep := report.Report{Version: report.Version, Outcome: lustre.Complete, Output: in, Chunks: 2, OutputBytes: 400000, PerRank: []report.Rank{
		{Rank: 0, Frames: 20, Seconds: 2, StageSeconds: map[string]float64{"plan": 3, "load": 1, "join": 0.5}},
		{Rank: 1, Frames: 20, Seconds: 2.4, StageSeconds: map[string]float64{"plan": 0, "load": 2, "join": 0}},
	}}
	costs := filepath.Join(dir, "out.mkv.report.json")
	if err := rep.WriteTo(costs); err != nil {
		t.Fatal(err)
	}
	r = clitest.Run(t, "plan", "-t", in, "--ranks", "3", "--chunk-frames", "4", "--costs", costs, "--model-bytes", "2e8")
	info := clitest.Probe(t, in)
	c, err := scaling.FromReport(&rep, costs, info.Width*info.Height, scaling.DefaultLaunch)
	if err != nil {
		t.Fatal(err)
	}
	e = modelled(c, 40, 4, 3, info.Width*info.Height, scaling.DefaultFSBandwidth, 2e8)
	if want := fmt.Sprintf("wall          %.2f s (one rank: %.2f s)", e.Wall, e.OneRank); r.Code != 0 || !strings.Contains(r.Stdout, want) || !strings.Contains(r.Stdout, "costs from the run report "+costs) {
		t.Errorf("plan --costs: exit %d, want %q and the report named:\n%s%s", r.Code, want, r.Stdout, r.Stderr)
	}
	// A Matroska output is joined by rank 0 alone: the model says so.
	r = clitest.Run(t, "plan", "--frames", "1000", "--ranks", "7", "--chunk-frames", "50", "-o", filepath.Join(dir, "out.mkv"))
	if r.Code != 0 || !strings.Contains(r.Stdout, "(rank 0, serial)") || !strings.Contains(r.Stdout, "were the join and mux parallel") {
		t.Errorf("plan -o out.mkv: exit %d, want the serial join modelled:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := clitest.Run(t, "plan", "--frames", "1000", "--ranks", "7", "--chunk-frames", "50"); !strings.Contains(r.Stdout, "every rank the segments it wrote, from its page cache, at their offset") {
		t.Errorf("plan (an MP4 output): the parallel join not modelled:\n%s%s", r.Stdout, r.Stderr)
	}

	for _, bad := range [][]string{{"-t", in}, {"-t", in, "--ranks", "0"}, {"--ranks", "2"}, {"-t", in, "--ranks", "2", "--chunk-frames", "0"},
		{"-t", in, "--ranks", "2", "--frames", "10"}, {"--frames", "0", "--ranks", "2"}, {"--frames", "10", "--ranks", "2", "--fs-bandwidth", "fast"},
		{"--frames", "10", "--ranks", "2", "--frame-size", "1920"},
		// Sizes that would exhaust the memory (a row per rank and chunk) are refused, not crashed on.
		{"--frames", "100", "--ranks", "99999999999"}, {"--frames", "9223372036854775807", "--ranks", "2"},
		{"--frames", "2000000000", "--ranks", "4", "--chunk-frames", "1"}} {
		if r := clitest.Run(t, append([]string{"plan"}, bad...)...); r.Code != fault.ExitUsage || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 || r.Stdout != "" {
			t.Errorf("plan %v: exit %d, %q, stdout %q; want exit %d, one line and nothing printed", bad, r.Code, r.Stderr, r.Stdout, fault.ExitUsage)
		}
	}
	if r := clitest.Run(t, "plan", "-t", filepath.Join(dir, "missing.mp4"), "--ranks", "2"); r.Code != fault.ExitInput || !strings.Contains(r.Stderr, "missing.mp4") {
		t.Errorf("missing target: exit %d, %q; want exit %d naming the file", r.Code, r.Stderr, fault.ExitInput)
	}
}

func TestProbe(t *testing.T) {
	cmd := exec.CommandContext(clitest.HangGuard(t), clitest.Bin, "probe")
	cmd.Env = clitest.LaunchEnv(t)
	r := clitest.RunCmd(t, clitest.HangGuard(t), cmd)
	clitest.CheckProbe(t, r, 1, clitest.ExpectedBinding())
	if !strings.Contains(r.Stdout, "started alone") {
		t.Errorf("launcher not named:\n%s", r.Stdout)
	}

	r = clitest.Mpirun(t, clitest.HangGuard(t), 3, "probe")
	clitest.CheckProbe(t, r, 3, clitest.ExpectedBinding())
	if !strings.Contains(r.Stdout, "started by mpirun") {
		t.Errorf("launcher not named:\n%s", r.Stdout)
	}
	r = clitest.Mpirun(t, clitest.HangGuard(t), 2, "probe", "--execution-device-id", "cpu")
	clitest.CheckProbe(t, r, 2, "device = cpu requested")

	// a device that does not exist is a clear error, printed once
	r = clitest.Mpirun(t, clitest.HangGuard(t), 2, "probe", "--execution-device-id", "bogus")
	if r.Code != fault.ExitUsage || strings.Count(r.Stderr, "[FACEFUSION] --execution-device-id") != 2 {
		// every rank rejects the flag before MPI starts; mpirun shows both lines
		t.Errorf("bad device: exit %d, %q; want exit %d", r.Code, r.Stderr, fault.ExitUsage)
	}
}

// The batch script refuses a missing or bad job file or a missing binary with the program's
// exit codes, before it starts any rank.
func TestSbatchScriptChecks(t *testing.T) {
	script := filepath.Join(testenv.Root(t), "sbatch", "facefusion.sbatch")
	dir := t.TempDir()
	job := filepath.Join(dir, "job.toml")
	if err := os.WriteFile(job, []byte("target_path = \"x.mp4\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("target_pattern = \"x/*.mp4\"\nbogus = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		env  string
		code int
		msg  string
	}{
		{[]string{filepath.Join(dir, "missing.toml")}, "FACEFUSION_BIN=" + clitest.Bin, fault.ExitUsage, "missing.toml cannot be read"},
		{nil, "FACEFUSION_BIN=" + clitest.Bin, fault.ExitUsage, "usage: sbatch facefusion.sbatch JOB.toml"},
		{[]string{job}, "FACEFUSION_BIN=" + filepath.Join(dir, "nobin"), fault.ExitEnvironment, "nobin is missing"},
		{[]string{job}, "SLURM_SUBMIT_DIR=" + dir, fault.ExitEnvironment, filepath.Join(dir, "bin", "facefusion") + " is missing"},
		// The script asks the binary which command the file is for: a bad file is refused then.
		{[]string{bad}, "FACEFUSION_BIN=" + clitest.Bin, fault.ExitUsage, "unknown key bogus"},
	} {
		cmd := exec.CommandContext(clitest.HangGuard(t), testenv.Tool(t, "bash"), append([]string{script}, c.args...)...)
		cmd.Env = append(clitest.LaunchEnv(t), c.env)
		cmd.Dir = dir
		r := clitest.RunCmd(t, clitest.HangGuard(t), cmd)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.msg) {
			t.Errorf("%v with %s: exit %d, %q; want exit %d and %q", c.args, c.env, r.Code, r.Stderr, c.code, c.msg)
		}
	}
}

// On a real Slurm cluster: the batch script with 4 tasks, an interactive srun, and probe.
func TestDistSlurm(t *testing.T) {
	t.Parallel() // two at a time, after the rest: see main_test.go
	// Room for the three launches at once (4×2 + 3 + 2 CPUs): each mostly waits on Slurm.
	c := slurmtest.Start(t, slurmtest.Options{CPUs: 16})
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	clitest.BframeClip(t, in, 40) // the length the other tests use: one clip
	want := clitest.FrameHashes(t, in)
	env := append(clitest.LaunchEnv(t), "SLURM_CONF="+c.Conf())
	command := func(ctx context.Context, name string, args ...string) *exec.Cmd {
		cmd := c.Command(ctx, name, args...)
		cmd.Env = env
		return cmd
	}

	t.Run("sbatch", func(t *testing.T) {
		t.Parallel()
		// The submit folder holds bin/facefusion, where the script looks when FACEFUSION_BIN
		// is not set, and the job file, whose relative paths start there.
		submit := t.TempDir()
		if err := os.Mkdir(filepath.Join(submit, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(clitest.Bin, filepath.Join(submit, "bin", "facefusion")); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "sbatch.mkv")
		toml := fmt.Sprintf("target_path = %q\noutput_path = %q\nprocessors = [\"none\"]\noutput_video_encoder = \"ffv1\"\nchunk_frames = 10\n", in, out)
		if err := os.WriteFile(filepath.Join(submit, "job.toml"), []byte(toml), 0o644); err != nil {
			t.Fatal(err)
		}
		log := filepath.Join(submit, "job.out")
		script := filepath.Join(testenv.Root(t), "sbatch", "facefusion.sbatch")
		// The test cluster has no GPUs: 4 tasks of 2 CPUs, and no --gpus.
		ctx := clitest.HangGuard(t)
		cmd := command(ctx, "sbatch", "--parsable", "-N", "1", "-n", "4", "--ntasks-per-node=4", "--cpus-per-task=2", "-o", log, script, "job.toml")
		cmd.Dir = submit
		r := clitest.RunCmd(t, ctx, cmd)
		if r.Code != 0 {
			t.Fatalf("sbatch: exit %d\n%s%s\n%s", r.Code, r.Stdout, r.Stderr, c.Logs())
		}
		id := strings.TrimSpace(r.Stdout)
		state, code, err := c.WaitJob(ctx, id)
		if err != nil {
			t.Fatalf("%v (the test's guard ran out)", err)
		}
		logText, _ := os.ReadFile(log)
		if state != "COMPLETED" || code != "0:0" {
			t.Fatalf("job %s ended %s with exit code %s\njob log:\n%s\n%s", id, state, code, logText, c.Logs())
		}
		if !strings.Contains(string(logText), "on 4 rank(s)") || !strings.Contains(string(logText), "srun exited with status 0") {
			t.Errorf("job log does not show a 4-rank run:\n%s", logText)
		}
		// Rank 0 names the job after its target (slurm.Label).
		show, _ := command(ctx, "scontrol", "show", "job", "-o", id).Output()
		if j, err := slurm.ParseShowJob(show); err != nil || j.Name != "in.mp4" || j.Comment != "facefusion run "+in {
			t.Errorf("job %s: %+v, %v; want the name in.mp4 and the comment facefusion run %s", id, j, err, in)
		}
		clitest.CheckFrames(t, out, want)
	})

	t.Run("srun", func(t *testing.T) {
		t.Parallel()
		out := filepath.Join(dir, "srun.mkv")
		ctx := clitest.HangGuard(t)
		r := clitest.RunCmd(t, ctx, command(ctx, "srun", append([]string{"-n", "3", "--mpi=pmix", clitest.Bin}, clitest.PassThroughArgs(in, out, 14)...)...))
		if r.Code != 0 {
			t.Fatalf("srun: exit %d\n%s\n%s", r.Code, r.Stderr, c.Logs())
		}
		if !strings.Contains(r.Stderr, "on 3 rank(s)") {
			t.Errorf("not a 3-rank run:\n%s", r.Stderr)
		}
		clitest.CheckFrames(t, out, want)
	})

	t.Run("probe", func(t *testing.T) {
		t.Parallel()
		ctx := clitest.HangGuard(t)
		r := clitest.RunCmd(t, ctx, command(ctx, "srun", "-n", "2", "--mpi=pmix", clitest.Bin, "probe"))
		clitest.CheckProbe(t, r, 2, clitest.ExpectedBinding())
		if !strings.Contains(r.Stdout, "started by srun (PMIx) in Slurm job") {
			t.Errorf("launcher not named:\n%s", r.Stdout)
		}
	})
}

// Ranks started with different settings (mpirun's MPMD form here; another facefusion.ini in a
// rank's working folder does the same) would encode two jobs into one output: refused before
// any frame, naming the setting, and nothing is written.
func TestDistRanksDisagree(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp4")
	clitest.BframeClip(t, in, 10)
	out := filepath.Join(dir, "out.mkv")
	ctx := clitest.HangGuard(t)
	argv := append([]string{"-np", "1", "--oversubscribe", "--allow-run-as-root", clitest.Bin}, clitest.PassThroughArgs(in, out, 5, "--output-video-quality", "50")...)
	argv = append(append(argv, ":", "-np", "1", clitest.Bin), clitest.PassThroughArgs(in, out, 5)...)
	cmd := exec.CommandContext(ctx, testenv.Tool(t, "mpirun"), argv...)
	cmd.Env = clitest.LaunchEnv(t)
	r := clitest.RunCmd(t, ctx, cmd)
	if r.Code != fault.ExitUsage || !strings.Contains(r.Stderr, `rank 1 runs another job than rank 0: output_video_quality is "80" here and "50" on rank 0`) {
		t.Fatalf("exit %d, want %d naming output_video_quality:\n%s", r.Code, fault.ExitUsage, r.Stderr)
	}
	clitest.MustNotExist(t, out)
	if _, err := os.Stat(out + ".job"); err == nil {
		t.Errorf("the refused job left its job folder %s.job", out)
	}

	// Rank 1 loads its models while rank 0 plans, with its own settings: here a face swap
	// whose models are not in its models folder. Its other settings are still its error, not
	// the load's.
	argv = append([]string{"-np", "1", "--oversubscribe", "--allow-run-as-root", clitest.Bin}, clitest.PassThroughArgs(in, out, 5)...)
	argv = append(append(argv, ":", "-np", "1", clitest.Bin), clitest.PassThroughArgs(in, out, 5, "--processors", "face_swapper", "-s", testenv.Sample(t, "grace_hopper.png"), "--models-dir", filepath.Join(dir, "none"))...)
	cmd = exec.CommandContext(ctx, testenv.Tool(t, "mpirun"), argv...)
	cmd.Env = clitest.LaunchEnv(t)
	r = clitest.RunCmd(t, ctx, cmd)
	if r.Code != fault.ExitUsage || !strings.Contains(r.Stderr, `rank 1 runs another job than rank 0: processors is "face_swapper" here and "none" on rank 0`) || strings.Contains(r.Stderr, "missing") {
		t.Fatalf("exit %d, want %d naming processors (not the missing models):\n%s", r.Code, fault.ExitUsage, r.Stderr)
	}
	clitest.MustNotExist(t, out)
}
