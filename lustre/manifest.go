package lustre

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// The checkpoint: each rank records the chunks it finished in its own journal (done/rank-N.json)
// right after renaming the segment; rank 0 alone merges the journals (and, at the end of an
// attempt, what the ranks gather to it) into manifest.json. The segment files are the truth;
// the manifest is their verified index, and every record is checked against its file before a
// rerun trusts it.

// Chunk is one finished segment as a record: enough to verify the file later without decoding it.
type Chunk struct {
	Chunk   int    `json:"chunk"`
	Start   int    `json:"start"` // target frame range [Start, End)
	End     int    `json:"end"`
	Frames  int    `json:"frames"`
	Size    int64  `json:"size"`
	SHA256  string `json:"sha256"`
	Rank    int    `json:"rank"`
	Attempt int    `json:"attempt"`
	Done    string `json:"done"` // RFC 3339, when the segment was renamed into place
	// Faces is how many of the chunk's frames had a face swapped or enhanced: recorded with
	// the chunk, so a resumed job's total covers the chunks of earlier attempts.
	Faces int `json:"faces"`
	// Identity is the identity measure's sums over the chunk's frames (absent when the job did
	// not measure, and in records written before the measure was recorded with the chunk): a
	// value, so that records stay comparable (Merge).
	Identity IdentitySums `json:"identity,omitzero"`
}

// Attempt is one run of the job: a first run or a resume.
type Attempt struct {
	Started      time.Time `json:"started"`
	Ranks        int       `json:"ranks"`
	RestartCount int       `json:"slurm_restart_count,omitempty"`
	SlurmJob     string    `json:"slurm_job,omitempty"`
	Planned      int       `json:"planned_chunks"` // chunks this attempt had to do
	Outcome      string    `json:"outcome"`        // running, checkpointed, failed, complete
	Stop         string    `json:"stop,omitempty"` // for a checkpointed attempt: what stopped it and what comes next
	Updated      time.Time `json:"updated"`
}

// Attempt outcomes.
const (
	Running      = "running"
	Checkpointed = "checkpointed"
	Failed       = "failed"
	Complete     = "complete"
)

// Manifest is the job's checkpoint: what the job is (its fingerprint), how it is cut, and
// which chunks are finished.
type Manifest struct {
	Version     int               `json:"version"`
	Fingerprint map[string]string `json:"fingerprint"`
	Target      string            `json:"target"`
	FrameStart  int               `json:"frame_start"`
	FrameEnd    int               `json:"frame_end"`
	ChunkFrames int               `json:"chunk_frames"`
	NumChunks   int               `json:"chunks"`
	// Encoder is the encoder the segments are written with: the job's own, or its NVENC pair
	// where hardware_codecs chose it. The fingerprint records the job's; a resume keeps this
	// one, whatever its node has, since one output takes one encoder.
	Encoder  string    `json:"encoder,omitempty"`
	Attempts []Attempt `json:"attempts"`
	Done     []Chunk   `json:"done"` // sorted by chunk, one record per chunk
}

// ManifestVersion is the layout written by this program; another is refused with a clear error.
const ManifestVersion = 1

// Manifest is the path of the job's manifest.
func (j *JobDir) Manifest() string { return filepath.Join(j.Path, "manifest.json") }

// Journal is rank's own list of chunks finished in the current attempt.
func (j *JobDir) Journal(rank int) string {
	return filepath.Join(j.Path, "done", "rank-"+strconv.Itoa(rank)+".json")
}

// Stop is the flag file a rank writes when a signal stops it, so the others stop too.
func (j *JobDir) Stop() string { return filepath.Join(j.Path, "STOP") }

// ReadManifest reads the job's manifest; ok is false when there is none yet. A manifest that is
// not a regular file (a FIFO, a link: another user's), over ManifestLimit, or with a number
// outside what this program writes is refused, naming the file and the field.
func (j *JobDir) ReadManifest() (m *Manifest, ok bool, err error) {
	data, err := safefs.ReadOwnFile(j.Manifest(), safefs.ManifestLimit, "manifest")
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if refused(err) {
		return nil, false, fmt.Errorf("%w: move it away, or choose another --job-dir", err)
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading the manifest %s: %w", j.Manifest(), err)
	}
	m = new(Manifest)
	if err := json.Unmarshal(data, m); err != nil {
		return nil, false, fmt.Errorf("manifest %s is not valid (%s): pass --fresh to start over", j.Manifest(), JSONError(err))
	}
	if m.Version != ManifestVersion {
		return nil, false, fmt.Errorf("manifest %s has layout version %d, this program writes %d: pass --fresh to start over", j.Manifest(), m.Version, ManifestVersion)
	}
	if err := m.check().Done(j.Manifest(), "manifest", "pass --fresh to start over"); err != nil {
		return nil, false, err
	}
	return m, true, nil
}

// WriteManifest writes m atomically.
func (j *JobDir) WriteManifest(m *Manifest) error {
	m.Version = ManifestVersion
	sort.Slice(m.Done, func(a, b int) bool { return m.Done[a].Chunk < m.Done[b].Chunk })
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return WriteAtomic(j.Manifest(), append(data, '\n'))
}

// Merge adds records to m, one per chunk (a later record of a chunk replaces an earlier one),
// and reports how many were new or changed.
func (m *Manifest) Merge(recs []Chunk) int {
	idx := make(map[int]int, len(m.Done))
	for i, c := range m.Done {
		idx[c.Chunk] = i
	}
	n := 0
	for _, r := range recs {
		if i, ok := idx[r.Chunk]; ok {
			if m.Done[i] != r {
				m.Done[i] = r
				n++
			}
			continue
		}
		idx[r.Chunk] = len(m.Done)
		m.Done = append(m.Done, r)
		n++
	}
	return n
}

// DoneFaces is the number of the records' frames that had a face swapped or enhanced.
func (m *Manifest) DoneFaces() int {
	n := 0
	for _, c := range m.Done {
		n += c.Faces
	}
	return n
}

// DoneIdentity is the identity measure's sums over the records (nil when none holds any), and
// whether some record holds none (a chunk of an attempt that did not measure, or written before
// chunks recorded the measure): the sums then count only the other chunks' faces.
func (m *Manifest) DoneIdentity() (sums *IdentitySums, partial bool) {
	for _, c := range m.Done {
		if c.Identity.Recognizer == "" {
			partial = true
			continue
		}
		if sums == nil {
			sums = &IdentitySums{}
		}
		sums.Add(c.Identity)
	}
	return sums, partial && sums != nil
}

// DoneFrames is the number of frames the manifest's records hold.
func (m *Manifest) DoneFrames() int {
	n := 0
	for _, c := range m.Done {
		n += c.Frames
	}
	return n
}

// A fingerprint maps what makes a job's output what it is to a canonical string. Its keys are
// of two kinds: settings, named by their config key (face_selector_order: no space), and
// entries derived from files, named by a phrase (target file contents, model file
// inswapper_128.onnx). A setting is what the user changed and can change back, and changing
// one often changes derived entries too (--processors none loads no model file), so a refusal
// names a changed setting, with its old and new values, before any derived entry.

// isSetting reports whether a fingerprint key names a setting rather than a derived entry.
func isSetting(key string) bool { return !strings.Contains(key, " ") }

// Changed says how fp differs from the job m records, as a phrase for an error, "" when it
// does not: the first changed setting in key order (`face_selector_order was "large-small",
// now "left-right"`), else the first changed derived entry (`target file contents changed`).
func (m *Manifest) Changed(fp map[string]string) string {
	keys := make([]string, 0, len(fp))
	for k := range fp {
		keys = append(keys, k)
	}
	for k := range m.Fingerprint {
		if _, ok := fp[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(a, b int) bool {
		if sa, sb := isSetting(keys[a]), isSetting(keys[b]); sa != sb {
			return sa
		}
		return keys[a] < keys[b]
	})
	for _, k := range keys {
		was, had := m.Fingerprint[k]
		now, has := fp[k]
		switch {
		case had == has && was == now:
			continue
		case !isSetting(k):
			return k + " changed"
		case !had:
			return fmt.Sprintf("%s was not recorded (another version of the program started the job), now %q", k, now)
		case !has:
			return fmt.Sprintf("%s was %q, now not a setting of this program", k, was)
		}
		return fmt.Sprintf("%s was %q, now %q", k, was, now)
	}
	return ""
}

// SameJob checks that m, the job folder's manifest, records the job whose fingerprint is fp.
// The error is one line: what differs, and what to do. A manifest without a fingerprint
// (deleted, or emptied) proves nothing about its segments and is refused as such, not as
// whichever setting sorts first.
func (j *JobDir) SameJob(m *Manifest, fp map[string]string) error {
	if len(m.Fingerprint) == 0 {
		return fmt.Errorf("manifest %s has no fingerprint: nothing shows that its segments are this job's: pass --fresh to start over (or choose another --job-dir)", j.Manifest())
	}
	if why := m.Changed(fp); why != "" {
		return fmt.Errorf("job folder %s holds another job: %s: pass --fresh to start over (or choose another --job-dir)", j.Path, why)
	}
	return nil
}

// ReadJournal reads rank's journal; a missing journal is an empty one. A journal that is not a
// regular file, over JournalLimit, or with a record no rank of a job writes (a number out of
// range, another rank's) is refused, naming the file and the field.
func (j *JobDir) ReadJournal(rank int) ([]Chunk, error) {
	data, err := safefs.ReadOwnFile(j.Journal(rank), safefs.JournalLimit, "journal")
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var recs []Chunk
	if err := json.Unmarshal(data, &recs); err != nil {
		return nil, fmt.Errorf("journal %s is not valid (%s)", j.Journal(rank), JSONError(err))
	}
	var f Fields
	for i, c := range recs {
		f.chunk(fmt.Sprintf("[%d]", i), c)
		if c.Rank != rank {
			f.Fail(fmt.Sprintf("[%d].rank", i), fmt.Sprintf("is %d, in rank %d's journal", c.Rank, rank))
		}
	}
	if err := f.Done(j.Journal(rank), "journal", "remove it, or pass --fresh to start over"); err != nil {
		return nil, err
	}
	return recs, nil
}

// Journals reads every rank's journal in the folder (any rank count), in rank order.
func (j *JobDir) Journals() ([]Chunk, error) {
	dir, err := j.sub("done")
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names, _ := filepath.Glob(filepath.Join(dir, "rank-*.json"))
	var all []Chunk
	for _, name := range names {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(name), "rank-"), ".json"))
		if err != nil {
			continue
		}
		recs, err := j.ReadJournal(n)
		if err != nil {
			return nil, err
		}
		all = append(all, recs...)
	}
	return all, nil
}

// WriteJournal rewrites rank's journal with recs.
func (j *JobDir) WriteJournal(rank int, recs []Chunk) error {
	if _, err := j.makeSub("done"); err != nil {
		return err
	}
	data, err := json.Marshal(recs)
	if err != nil {
		return err
	}
	return WriteAtomic(j.Journal(rank), data)
}

// HashFile is the size and SHA-256 of a whole file: a segment is read once, right after it was
// written (so mostly from the page cache), and again on resume.
func HashFile(path string) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", fmt.Errorf("reading %s: %w", path, err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// SampleLimit is the size above which Identity samples a file instead of hashing all of it.
const SampleLimit = 64 << 20

// Identity fingerprints an input file by content: the SHA-256 of the whole file up to
// SampleLimit; above it, of the size and 16 evenly spaced 1 MiB samples (first and last
// included), so a multi-gigabyte target on Lustre costs 16 MiB of reads, not a full pass.
// Modification times are left out on purpose: a copied or touched file is the same job.
func Identity(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	size := st.Size()
	if size <= SampleLimit {
		if _, err := io.Copy(h, f); err != nil {
			return "", fmt.Errorf("reading %s: %w", path, err)
		}
		return fmt.Sprintf("%d:%x", size, h.Sum(nil)), nil
	}
	const samples, block = 16, 1 << 20
	buf := make([]byte, block)
	for i := int64(0); i < samples; i++ {
		off := i * (size - block) / (samples - 1)
		if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
			return "", fmt.Errorf("reading %s: %w", path, err)
		}
		h.Write(buf)
	}
	return fmt.Sprintf("%d:sampled:%x", size, h.Sum(nil)), nil
}

// Verify checks that chunk c's segment is the file its record describes: present, of the
// recorded size and hash. The error says what is wrong, for the log.
func (j *JobDir) Verify(c Chunk) error {
	st, err := os.Stat(j.Segment(c.Chunk))
	if err != nil {
		return fmt.Errorf("segment %s is missing", j.Segment(c.Chunk))
	}
	if st.Size() != c.Size {
		return fmt.Errorf("segment %s has %d bytes, the checkpoint recorded %d", j.Segment(c.Chunk), st.Size(), c.Size)
	}
	_, sum, err := HashFile(j.Segment(c.Chunk))
	if err != nil {
		return err
	}
	if sum != c.SHA256 {
		return fmt.Errorf("segment %s does not match its recorded SHA-256", j.Segment(c.Chunk))
	}
	return nil
}
