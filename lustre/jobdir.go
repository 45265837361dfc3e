// Package lustre is the job folder on the shared file system: where each chunk's segment lives,
// how files are written so that a reader never sees half of one, the striping hint Lustre wants
// for large sequential files, and the checkpoint (per-rank journals and the manifest that
// indexes the verified segments). One file per chunk, never one per frame.
package lustre

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// JobDir is the folder of one job's segments and bookkeeping.
type JobDir struct {
	Path string
	// SegmentExt is the container of the job's segments, as their extension: ForJob's choice
	// (one of SegmentExts: MP4 for an output joined in parallel); "" is the first, NUT.
	SegmentExt string
	// ID is the folder's identity, recorded when Create made or found it (Pin): the steps
	// that trust the folder's contents or remove from it (Remove, CleanStale, Discard, the
	// claim's release and heartbeat, and the driver's before the join and the commit) first
	// check that the folder at Path is still this one (Same). Zero: not pinned, nothing is
	// checked (status, which only reads).
	ID FolderID
}

// SegmentExts are the containers the job's segments are written in, as their extensions:
// NUT, the first, for a JobDir whose SegmentExt is "", and MP4 for an output joined in
// parallel. The job folder knows the names, not the containers: the video package chooses one
// for a job (video.SegmentExtFor) and writes it, and its list (video.SegmentExts) is this one.
var SegmentExts = []string{".nut", ".mp4"}

// ForJob is the job folder at path of a job whose segments are in the container segmentExt,
// the one its output's join reads (video.SegmentExtFor). The resume fingerprint names that
// container, so that a folder of segments in another (an earlier version's NUT segments of an
// MP4 output) is refused, never joined.
func ForJob(path, segmentExt string) *JobDir {
	return &JobDir{Path: path, SegmentExt: segmentExt}
}

// SegmentContainer is the container of the segments, as their extension: SegmentExt, or the
// first of SegmentExts.
func (j *JobDir) SegmentContainer() string {
	if j.SegmentExt == "" {
		return SegmentExts[0]
	}
	return j.SegmentExt
}

// Segments are the finished segments in the folder, of the job's container.
func (j *JobDir) Segments() []string {
	segs, _ := filepath.Glob(filepath.Join(j.Path, "seg-*"+j.SegmentContainer()))
	return segs
}

// DefaultPath is the job folder used when none is given: beside the output, named after it.
func DefaultPath(output string) string {
	return output + ".job"
}

// ErrNoLFS is Stripe's error where the Lustre client tool lfs is not installed: on any other
// file system, where the default layout is the only one.
var ErrNoLFS = errors.New("lfs not found")

// Stripe asks Lustre to stripe the job folder over all OSTs (segments are large sequential
// writes from many nodes) when the client tool lfs exists; note says what it did, for the log.
// The error is ErrNoLFS without lfs, or says why lfs setstripe failed; the folder then keeps
// the file system's default layout.
func (j *JobDir) Stripe() (note string, err error) {
	lfs, err := exec.LookPath("lfs")
	if err != nil {
		return "", ErrNoLFS
	}
	out, err := exec.Command(lfs, "setstripe", "-c", "-1", "-S", "4M", j.Path).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("lfs setstripe on %s failed (%s): default striping", j.Path, strings.TrimSpace(string(out)))
	}
	return fmt.Sprintf("job folder %s striped over all OSTs, 4 MiB stripes", j.Path), nil
}

// Segment is the path of chunk i's encoded segment, in the job's container (SegmentExt).
func (j *JobDir) Segment(chunk int) string {
	return filepath.Join(j.Path, "seg-"+pad(chunk)+j.SegmentContainer())
}

// SegmentTemp is where rank writes chunk i in attempt a before renaming it to Segment(i). The
// attempt is in the name so that a straggler of an earlier attempt never touches a file of the
// current one.
func (j *JobDir) SegmentTemp(chunk, rank, attempt int) string {
	return filepath.Join(j.Path, ".seg-"+pad(chunk)+".rank"+strconv.Itoa(rank)+".a"+strconv.Itoa(attempt)+".part"+j.SegmentContainer())
}

// Attempt is the file naming the job's current attempt: a rank of an earlier one stops when it
// changes.
func (j *JobDir) Attempt() string { return filepath.Join(j.Path, "ATTEMPT") }

// AttemptID names one attempt of a job for good: its number and its rank 0's claim token. The
// number alone starts again at 1 when a job folder is started over (--fresh), so a straggler
// of an earlier run could take a new attempt 1 for its own.
func AttemptID(n int, token string) string { return strconv.Itoa(n) + " " + token }

// WriteAttempt makes id the folder's current attempt.
func (j *JobDir) WriteAttempt(id string) error { return WriteAtomic(j.Attempt(), []byte(id+"\n")) }

// CurrentAttemptID is the id in the Attempt file ("" when there is none).
func (j *JobDir) CurrentAttemptID() string {
	b, err := safefs.ReadOwnFile(j.Attempt(), safefs.SmallLimit, "attempt file")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// CurrentAttempt is the attempt number in the Attempt file (0 when there is none).
func (j *JobDir) CurrentAttempt() int {
	n, _, _ := strings.Cut(j.CurrentAttemptID(), " ")
	v, _ := strconv.Atoi(n)
	return v
}

// Progress is the job's progress file: every rank's frames encoded in this attempt, indexed by
// rank, as rank 0 last heard them in the ranks' control round (over MPI). Rank 0 alone rewrites
// it, about once a second: one file for the job, whatever its rank count, so that the metadata
// load on the file system does not grow with the ranks. `facefusion status` reads it.
func (j *JobDir) Progress() string { return filepath.Join(j.Path, "progress.json") }

// progressFile is the progress file's content.
type progressFile struct {
	Frames []int64 `json:"frames"`
}

// WriteProgress replaces the progress file with frames (per rank). Without fsync: the counts are
// worthless after a crash, and a sync a second would only load the metadata servers.
func (j *JobDir) WriteProgress(frames []int64) error {
	b, err := json.Marshal(progressFile{Frames: frames})
	if err != nil {
		return err
	}
	return WriteAdvisory(j.Progress(), b)
}

// ReadProgress is every rank's frames from the progress file; ok is false when there is none.
// A file that is not a regular file, over ProgressLimit, or with a count out of range is
// refused, naming it and the field.
func (j *JobDir) ReadProgress() (frames []int64, ok bool, err error) {
	b, err := safefs.ReadOwnFile(j.Progress(), safefs.ProgressLimit, "progress file")
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var p progressFile
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, false, fmt.Errorf("progress file %s is not valid (%s)", j.Progress(), JSONError(err))
	}
	var f Fields
	if len(p.Frames) > MaxRanks {
		f.Fail("frames", fmt.Sprintf("has %d ranks, more than %d", len(p.Frames), MaxRanks))
	}
	for i, n := range p.Frames {
		f.In(fmt.Sprintf("frames[%d]", i), n, 0, MaxFrames)
	}
	if err := f.Done(j.Progress(), "progress file", "it is rewritten every second while the job runs; remove it if none does"); err != nil {
		return nil, false, err
	}
	return p.Frames, true, nil
}

// Voice is rank 0's lip_syncer voice analysis of the job (its features per output frame),
// written once the whole analysis succeeded, so that a resume reads it instead of running the
// voice extractor again. Its content and checks are the driver's.
func (j *JobDir) Voice() string { return filepath.Join(j.Path, "voice.bin") }

// Failed is the flag file a rank writes when it fails, so that the others stop early.
func (j *JobDir) Failed() string { return filepath.Join(j.Path, "FAILED") }

func pad(n int) string { return fmt.Sprintf("%06d", n) }

// WriteAtomic writes data to path so that a reader sees the old file or the new one, never a
// part: a temp file beside it, fsync, rename, fsync of the folder. The file is private
// (rw-------): the job's own state, read only by the job's ranks, which run as its user.
func WriteAtomic(path string, data []byte) error {
	return replace(path, true, 0o600, bytesOf(path, data))
}

// WriteReadable replaces path like WriteAtomic, but the file gets the mode a new file gets
// (rw-rw-rw- less the umask), as the output does: for the files that people and other
// programs read (the run report, the metrics textfile that node_exporter reads as its own
// user, a batch's summary).
func WriteReadable(path string, data []byte) error {
	return replace(path, true, 0o666, bytesOf(path, data))
}

// WriteAdvisory replaces path like WriteAtomic but without the two fsyncs: for files that are
// rewritten every second and worthless after a crash (progress counters), where a sync per
// rank per second would only load the file system's metadata servers.
func WriteAdvisory(path string, data []byte) error {
	return replace(path, false, 0o600, bytesOf(path, data))
}

// WriteAtomicFrom is WriteAtomic of what write writes, streamed: for a file too large to
// hold twice in memory.
func WriteAtomicFrom(path string, write func(io.Writer) error) error {
	return replace(path, true, 0o600, func(f io.Writer) error {
		w := bufio.NewWriterSize(f, 1<<20)
		if err := write(w); err != nil {
			return err
		}
		return w.Flush()
	})
}

// bytesOf writes data; under a test's fault at path (a full file system, as seen by the
// writer) half the bytes land, then ENOSPC.
func bytesOf(path string, data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		if faultAt(path) {
			w.Write(data[:len(data)/2])
			return syscall.ENOSPC
		}
		_, err := w.Write(data)
		return err
	}
}

// replace puts what write writes at path through a temp file beside it and a rename, with
// the file's and the folder's fsyncs when durable; the temp file is removed on failure.
func replace(path string, durable bool, perm os.FileMode, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	f, err := createTemp(dir, "."+filepath.Base(path)+".tmp-", perm)
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = write(f)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if !durable {
		return nil
	}
	return SyncDir(dir)
}

// WriteNew writes data to path only if nothing is there, atomically and durably: a temp file
// beside it, fsync, a hard link into place (which fails with an error satisfying
// errors.Is(err, os.ErrExist) when path exists, on Lustre and NFS as locally), fsync of the
// folder. Of two writers racing for one path, exactly one wins.
func WriteNew(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".new-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Link(tmp, path); err != nil {
		return err
	}
	return SyncDir(dir)
}

// createTemp makes a new file in dir named prefix and a random suffix, with perm less the
// umask (the kernel applies it, so that no umask is read or changed in this process). Like
// os.CreateTemp, it never opens a file that is already there, nor follows a link.
func createTemp(dir, prefix string, perm os.FileMode) (*os.File, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
		if errors.Is(err, os.ErrExist) && try < 10000 {
			continue
		}
		return f, err
	}
}

// SyncDir makes a rename in dir durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func unwrap(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// FaultEnv names the test-only fault hook: FACEFUSION_TEST_FAIL_WRITE=NAME:N makes the Nth
// WriteAtomic of a file named NAME in this process fail as on a full file system. It exists so
// that the tests can check that a failed checkpoint write leaves the previous manifest intact.
const FaultEnv = "FACEFUSION_TEST_FAIL_WRITE"

var faults struct {
	sync.Mutex
	seen map[string]int
}

func faultAt(path string) bool {
	spec := os.Getenv(FaultEnv)
	if spec == "" {
		return false
	}
	name, nth, _ := strings.Cut(spec, ":")
	n, err := strconv.Atoi(nth)
	if err != nil || name != filepath.Base(path) {
		return false
	}
	faults.Lock()
	defer faults.Unlock()
	if faults.seen == nil {
		faults.seen = map[string]int{}
	}
	faults.seen[name]++
	return faults.seen[name] == n
}
