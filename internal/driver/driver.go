// Package driver runs one job across the ranks of a communicator: rank 0 checks the job,
// probes the target and analyses the source once and broadcasts the plan; every rank encodes
// its static share of chunks into segments in the job folder; rank 0 joins the segments,
// muxes the audio and moves the output into place. Finished chunks are checkpointed, so a
// rerun of the same job (with any rank count) does only what is missing, and a signal stops
// every rank with its finished work recorded. One rank is the same code with a single-process
// communicator.
package driver

import (
	"errors"
	"fmt"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/facefusion-hpc/facefusion/internal/audio"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/spec"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// RemoteError is an error another rank (or rank 0) already reported; this rank exits with its
// kind without printing it again.
type RemoteError struct{ Kind fault.Kind }

func (e *RemoteError) Error() string { return "reported by another rank" }

// Plan is what rank 0 decides and every rank needs.
type Plan struct {
	Err  string     `json:",omitempty"`
	Kind fault.Kind `json:",omitempty"`
	Stop Next       `json:",omitempty"` // Err is a stop: a signal reached rank 0 before its plan was made
	// Printed: rank 0 has said Err (not sent: the other ranks never print it).
	Printed bool `json:"-"`

	Info *video.Info
	// Spec is the video output as rank 0 resolved it (nil for an image target): its frame map
	// (Frames, Chunks and every record of the job count the output's frames, numbered from the
	// trim start, so every rank cuts the same frames whatever its share), its times, sizes and
	// audio, the codecs every rank runs (hardware_codecs, decided on rank 0's node) and what it
	// keeps of the target's other streams (rank 0's output check).
	Spec       *spec.Spec
	codecsNote string // rank 0's line on what it chose and why
	Frames     rank.Range
	Chunks     []rank.Range
	JobDir     string
	Attempt    int    // 1 for a first run, then one more per resume
	AttemptID  string // the attempt for good (lustre.AttemptID): what stragglers compare
	// Work is, per rank, its even share of the frames of the chunks not yet verified
	// (rank.Split): the chunks it encodes, and its parts of chunks shared with the ranks beside it.
	Work  [][]rank.Piece
	Image bool // an image target: rank 0 alone processes it
	// AlreadyDone: the output exists, written by this same job (Options.SkipDone): nothing to do.
	AlreadyDone bool `json:",omitempty"`

	SourceW, SourceH int
	SourcePix        []byte `json:",omitempty"`
	SourceLandmarks  face.Landmarks68
	// SourceFive is set for the face swappers that take the source face as a crop (blendswap,
	// uniface): SourcePix is then FaceFusion's first source image and SourceFive its face.
	SourceFive *[5]geom.Pt `json:",omitempty"`
	// FaceFusion's models: the source identity and the reference face.
	SourceEmbedding, ReferenceEmbedding *face.Embedding `json:",omitempty"`
	SourceClass                         *face.Class     `json:",omitempty"` // the largest source face's, for face_selector_gender/race auto
	// VoiceParts is, per rank, the size of lip_syncer's voice features of its Work's frames
	// (audio.Track.MarshalBinary of their part), which rank 0 sends it after the plan
	// (shareVoice): 2.6 KB a frame, so the plan every rank gets does not carry the whole
	// track's. nil without a voice.
	VoiceParts []int `json:",omitempty"`
	// Voice is this rank's part, received (rank 0: made) after the plan: every rank, rank 0
	// included, reads its windows from these bytes.
	Voice []byte `json:"-"`
	// voice is rank 0's features of all the output's frames, which it cuts into the parts.
	voice *audio.Track
	// voiceReused: voice is the job folder's voice file's (reuseVoice), not analysed anew;
	// voiceFP is the fingerprint it was read or is saved under; analysing: rank 0 started the
	// voice analysis and has not finished it (a stop then says what a requeue would redo).
	voiceReused bool
	voiceFP     map[string]string
	analysing   bool
	// voiceSaved: this attempt saved voice in the job folder (saveVoice): a stop before its
	// first chunk made progress all the same (Decide).
	voiceSaved bool

	// Settings are rank 0's job settings (job.Config.Settings: every one that can change the
	// output): every rank must run the same job.
	Settings map[string]string `json:",omitempty"`

	loaded time.Duration // rank 0's model load and source analysis, for its report (not sent)
	// readDelay is how long rank 0's plan waited for its read of the model files it
	// broadcasts (through its load), for its report (not sent).
	readDelay time.Duration
	// jobDirID is the job folder lustre.Create made or found, rank 0's (not sent): every
	// JobDir of the plan checks that the folder at JobDir is still it.
	jobDirID lustre.FolderID
}

// MakePlan cuts frames into chunks and gives each rank an even share of their frames, as a
// first attempt does.
func MakePlan(frames rank.Range, chunkFrames, ranks int) (chunks []rank.Range, split [][]rank.Piece) {
	chunks = rank.Chunks(frames, chunkFrames)
	all := make([]int, len(chunks))
	for i := range all {
		all[i] = i
	}
	return chunks, rank.Split(chunks, all, ranks)
}

// Result is what a rank reports at the end.
type Result struct {
	Rank   int
	Frames int
	Chunks int
	Err    string     `json:",omitempty"`
	Kind   fault.Kind `json:",omitempty"`
	// Remote: Err is another rank's failure as this rank saw it (a *RemoteError), never the
	// job's cause when a rank reports a real one.
	Remote bool `json:",omitempty"`
	// Named: Err already names this rank ("rank 2, chunk 3: …"): rank 0 does not name it again.
	Named bool `json:",omitempty"`
	// Printed: rank 0 has said Err (its outcome's; not sent: the other ranks never print it).
	Printed bool `json:"-"`

	Done           []lustre.Chunk `json:",omitempty"` // the chunks this rank finished this attempt
	Stopped        bool           `json:",omitempty"` // a signal stopped it; its chunk in flight was discarded
	CheckpointWork float64        // seconds spent hashing segments and writing journals/manifest
	Stats          report.Rank    // the rank's share for the run report: counts, stage times, GPU

	// Rank 0's decision for a stopped job, broadcast so that every rank exits with one code.
	StopReason string `json:",omitempty"` // JOB_DIR/STOP: "rank N: SIGUSR1", "deadline", …
	NewChunks  int    `json:",omitempty"` // chunks finished in this attempt, over every rank
	Next       Next   `json:",omitempty"`
	StopWords  string `json:",omitempty"` // the stop as the manifest and status tell it
}

// Options are the parts of a run that are not in the job config.
type Options struct {
	Log         *logging.Logger // nil: nothing is logged
	NewProgress pipeline.ProgressFunc
	// Done, when set, receives rank 0's run report once the output is in place.
	Done func(*report.Report)
	// GPU is this rank's GPU binding (rank.Identify), sampled through NVML for the run report;
	// nil when the job runs on CPU providers.
	GPU *rank.Binding
	// ExtraMetrics, when set, adds families to every write of rank 0's metrics file
	// (metrics_path): a caller's own gauges, such as a batch's targets done.
	ExtraMetrics func() []*dto.MetricFamily
	// SkipDone: an existing output whose run report records this same job (same fingerprint) is
	// not an error but the job done: Run returns *AlreadyDone (batch-run's idempotence). It is
	// checked again once the job folder is claimed, so of two runs racing for one job, the later
	// never redoes the earlier's work.
	SkipDone bool
}

func (o Options) extraMetrics() []*dto.MetricFamily {
	if o.ExtraMetrics == nil {
		return nil
	}
	return o.ExtraMetrics()
}

// AlreadyDone is Run's answer (on every rank) when Options.SkipDone found the job's output in
// place, written by the same job.
type AlreadyDone struct{ Output string }

func (e *AlreadyDone) Error() string {
	return fmt.Sprintf("output %s exists, written by this same job (its run report has the same fingerprint)", e.Output)
}

// Reported is an error rank 0 has already printed to Options.Log: it prints the job's error
// before the broadcast that lets the other ranks exit, because a launcher kills the remaining
// ranks as soon as one exits non-zero. main exits with its kind without printing it again.
type Reported struct{ Err error }

func (e *Reported) Error() string { return e.Err.Error() }
func (e *Reported) Unwrap() error { return e.Err }

func reported(printed bool, err error) error {
	if printed {
		return &Reported{Err: err}
	}
	return err
}

// err is the plan's error as rank me returns it (rank0: me is 0); nil when it has none.
func (p *Plan) err(rank0 bool) error {
	return jobError(p.Err, p.Kind, p.Stop != 0, p.Stop, p.Printed, rank0)
}

// err is rank 0's outcome as rank me returns it (rank0: me is 0); nil for a job done.
func (r *Result) err(rank0 bool) error {
	return jobError(r.Err, r.Kind, r.Stopped, r.Next, r.Printed, rank0)
}

// jobError is rank 0's word on the job (msg, of kind; a stop followed by next) as a rank
// returns it: rank 0 its own error, marked as said when printed; every other rank a stop it
// does not print, or a *RemoteError.
func jobError(msg string, kind fault.Kind, stopped bool, next Next, printed, rank0 bool) error {
	switch {
	case stopped:
		return &Stopped{Msg: msg, Remote: printed || !rank0, Next: next}
	case msg == "":
		return nil
	case !rank0:
		return &RemoteError{Kind: kind}
	}
	return reported(printed, &fault.Error{Kind: kind, Err: errors.New(msg)})
}

// say prints rank 0's one-line report of the job's error, unless a signal came first (main
// then says so instead) or there is no log.
func say(opt Options, msg string) bool {
	if opt.Log == nil {
		return false
	}
	opt.Log.Errorf("%s", msg)
	return true
}

// logFaces logs the count of frames with a face: a warning when there was none.
func logFaces(log *logging.Logger, line string) {
	if strings.HasPrefix(line, pipeline.FaceWarning) {
		log.Warnf("%s", line)
		return
	}
	log.Infof("%s", line)
}

type progressFunc func(int)

func (f progressFunc) Add(n int) { f(n) }

// newer names what replaced this attempt in the job folder.
func newer(n int) string {
	if n == 0 {
		return "another attempt (its ATTEMPT file is gone: finished, or deleted)"
	}
	return fmt.Sprintf("attempt %d", n)
}

// takenOver is the error of an attempt whose job folder a newer attempt took over.
func takenOver(jd *lustre.JobDir, attempt string) error {
	n, _, _ := strings.Cut(attempt, " ")
	return fault.AsInternal(fmt.Errorf("job folder %s was taken over by %s: this attempt (%s) stops; run one attempt of a job at a time", jd.Path, newer(jd.CurrentAttempt()), n))
}

// identityCoverage is the warning for a job whose chunks were not all measured (an attempt ran
// with the identity measure off, or without its recognizer's file): the report's identity block
// is then the measured chunks' alone ("partial"). "" when every chunk or none was measured.
func identityCoverage(m *lustre.Manifest) string {
	measured := 0
	for _, c := range m.Done {
		if c.Identity.Recognizer != "" {
			measured++
		}
	}
	if measured == 0 || measured == len(m.Done) {
		return ""
	}
	return fmt.Sprintf("the identity measure covers %d of the job's %d chunks (the others were done by an attempt that did not measure: identity_measure off, or its recognizer's file refused): the run report's identity is theirs alone (\"partial\": true); rerun with --fresh for a whole measure", measured, len(m.Done))
}
