package lustre

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// The claim: one live run of a job at a time. The run that starts a job (rank 0) creates CLAIM
// in the job folder atomically (written beside it, then hard-linked into place, which fails when
// the name exists: O_EXCL semantics that hold on Lustre and NFS, where flock may not). CLAIM is
// never rewritten: the holder's heartbeat goes to a file of its own, .CLAIM.beat-TOKEN, every
// HeartbeatInterval, so a late heartbeat can never put a taken-over claim back. A second run finds the claim and is refused, naming the holder,
// unless the holder is provably dead:
//   - same host, and its process is gone (or the pid now belongs to another process);
//   - same Slurm job, and this is a later restart of it (Slurm ends every process of a job
//     before it starts it again);
//   - no heartbeat for StaleAfter (a lost node).

// Heartbeat timing: a holder rewrites its claim every HeartbeatInterval; a claim whose last beat
// is older than StaleAfter is taken to be a dead holder's.
const (
	HeartbeatInterval = 10 * time.Second
	StaleAfter        = 60 * time.Second
)

// Holder is who holds a claim.
type Holder struct {
	Token        string    `json:"token"`
	Host         string    `json:"host"`
	PID          int       `json:"pid"`
	PIDStart     string    `json:"pid_start,omitempty"` // the process's start time in /proc, against pid reuse
	SlurmJob     string    `json:"slurm_job,omitempty"`
	RestartCount int       `json:"slurm_restart_count"`
	Started      time.Time `json:"started"`
	Beat         time.Time `json:"heartbeat"` // in CLAIM: when it was taken; as read: the last heartbeat
}

// Describe names the holder for a user: Slurm job, host, pid and start time.
func (h *Holder) Describe() string {
	s := ""
	if h.SlurmJob != "" {
		s = fmt.Sprintf("Slurm job %s (restart %d), ", safefs.Name(h.SlurmJob, safefs.HostLen), h.RestartCount)
	}
	return s + fmt.Sprintf("pid %d on %s, started %s, last heartbeat %s", h.PID, safefs.Name(h.Host, safefs.HostLen),
		h.Started.UTC().Format(time.RFC3339), h.Beat.UTC().Format(time.RFC3339))
}

// Me is the holder describing this process.
func Me() Holder {
	b := make([]byte, 8)
	rand.Read(b)
	host, _ := os.Hostname()
	restarts, _ := strconv.Atoi(os.Getenv("SLURM_RESTART_COUNT"))
	now := time.Now().UTC()
	return Holder{Token: hex.EncodeToString(b), Host: host, PID: os.Getpid(), PIDStart: procStart(os.Getpid()),
		SlurmJob: os.Getenv("SLURM_JOB_ID"), RestartCount: restarts, Started: now, Beat: now}
}

// BusyError is a claim held by a live run.
type BusyError struct {
	Path   string
	Holder Holder
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("job folder %s is in use by a running job: %s; wait for it to end (facefusion status %s), or cancel it first; a claim without a heartbeat for %s is taken over",
		e.Path, e.Holder.Describe(), e.Path, StaleAfter)
}

// Claim is the path of the claim file.
func (j *JobDir) Claim() string { return filepath.Join(j.Path, "CLAIM") }

// beatFile is where the holder with token writes its heartbeats.
func (j *JobDir) beatFile(token string) string { return filepath.Join(j.Path, ".CLAIM.beat-"+token) }

// lastBeat is the holder's last heartbeat: its beat file's time, else when it claimed.
func (j *JobDir) lastBeat(h *Holder) time.Time {
	if b, err := safefs.ReadOwnFile(j.beatFile(h.Token), safefs.SmallLimit, "heartbeat"); err == nil {
		if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b))); err == nil && t.After(h.Beat) {
			return t
		}
	}
	return h.Beat
}

// ReadClaim reads the current claim, with its holder's last heartbeat; ok is false when there
// is none.
func (j *JobDir) ReadClaim() (h Holder, ok bool, err error) {
	data, err := safefs.ReadOwnFile(j.Claim(), safefs.SmallLimit, "claim")
	if errors.Is(err, os.ErrNotExist) {
		return h, false, nil
	}
	if err != nil {
		return h, false, err
	}
	if err := json.Unmarshal(data, &h); err != nil {
		return h, false, fmt.Errorf("claim %s is not valid (%s)", j.Claim(), JSONError(err))
	}
	h.Beat = j.lastBeat(&h)
	return h, true, nil
}

// Dead reports whether the holder of a claim can be proven gone, as seen by me at now, and why.
func (h *Holder) Dead(me *Holder, now time.Time) (bool, string) {
	if h.Host == me.Host && h.Host != "" {
		if h.PID == me.PID && h.PIDStart == me.PIDStart {
			return false, ""
		}
		if start := procStart(h.PID); start == "" || (h.PIDStart != "" && start != "?" && start != h.PIDStart) {
			return true, fmt.Sprintf("its process %d on %s is gone", h.PID, h.Host)
		}
	}
	if h.SlurmJob != "" && h.SlurmJob == me.SlurmJob && me.RestartCount > h.RestartCount {
		return true, fmt.Sprintf("Slurm restarted job %s (restart %d after %d)", h.SlurmJob, me.RestartCount, h.RestartCount)
	}
	if age := now.Sub(h.Beat); age > StaleAfter {
		return true, fmt.Sprintf("no heartbeat for %s", age.Round(time.Second))
	}
	return false, ""
}

// TakeClaim claims the job folder for me. A live holder's claim is a *BusyError; a dead one's
// is taken over, and prev describes it (nil when the folder was free).
func (j *JobDir) TakeClaim(me Holder) (prev *Holder, why string, err error) {
	for try := 0; try < 5; try++ {
		err := j.linkClaim(me)
		if err == nil {
			return prev, why, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, "", fmt.Errorf("claiming job folder %s: %w", j.Path, unwrap(err))
		}
		h, ok, rerr := j.ReadClaim()
		if rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			// A claim that does not parse cannot name a holder; it is treated as dead only when
			// it is old (a writer never leaves one half-written: claims are linked whole).
			st, serr := os.Stat(j.Claim())
			if serr != nil || time.Since(st.ModTime()) <= StaleAfter {
				return nil, "", fmt.Errorf("%v: remove it if no run of this job is alive", rerr)
			}
			h = Holder{Token: "unreadable"}
			ok = true
		}
		if !ok {
			continue // released meanwhile: try again
		}
		dead, reason := h.Dead(&me, time.Now())
		if !dead {
			return nil, "", &BusyError{Path: j.Path, Holder: h}
		}
		// Take the dead claim away by renaming it: only one of several newcomers succeeds, and
		// the renamed file tells whether it was still the one judged dead.
		stale := filepath.Join(j.Path, ".CLAIM.stale-"+me.Token)
		if err := os.Rename(j.Claim(), stale); err != nil {
			continue // another newcomer took it first
		}
		var got Holder
		if data, err := safefs.ReadOwnFile(stale, safefs.SmallLimit, "claim"); err == nil && json.Unmarshal(data, &got) == nil && h.Token != "unreadable" &&
			(got.Token != h.Token || j.lastBeat(&got).After(h.Beat)) {
			// A newer claim replaced the dead one between the read and the rename, or its holder
			// beat meanwhile: give it back.
			os.Link(stale, j.Claim())
			os.Remove(stale)
			continue
		}
		os.Remove(stale)
		os.Remove(j.beatFile(h.Token))
		hc := h
		prev, why = &hc, reason
	}
	return nil, "", fmt.Errorf("claiming job folder %s: it kept changing hands: is another copy of this job starting in a loop?", j.Path)
}

// linkClaim writes me beside the claim and links it into place; the link fails when a claim exists.
func (j *JobDir) linkClaim(me Holder) error {
	tmp := filepath.Join(j.Path, ".CLAIM.new-"+me.Token)
	data, _ := json.MarshalIndent(&me, "", "  ")
	if err := writeSynced(tmp, data); err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, j.Claim()); err != nil {
		return err
	}
	return SyncDir(j.Path)
}

// writeSynced creates path, which must not exist (a link there is not followed), with data.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ErrClaimLost is a heartbeat that found another run's claim in place of its own.
var ErrClaimLost = errors.New("claim lost")

// Beat writes a fresh heartbeat to my beat file, after checking that the claim is still mine.
// It never writes CLAIM: a beat that comes after a takeover changes nothing of the new holder's.
func (j *JobDir) Beat(me *Holder) error {
	if err := j.Same(); err != nil {
		return fmt.Errorf("%w: %w", ErrClaimLost, err)
	}
	h, ok, err := j.ReadClaim()
	if err != nil {
		return err
	}
	if !ok || h.Token != me.Token {
		who := "no claim"
		if ok {
			who = h.Describe()
		}
		return fmt.Errorf("%w: job folder %s is now held by %s", ErrClaimLost, j.Path, who)
	}
	now := time.Now().UTC()
	if err := WriteAtomic(j.beatFile(me.Token), []byte(now.Format(time.RFC3339Nano))); err != nil {
		return err
	}
	me.Beat = now
	return nil
}

// Holds reports whether my claim is the folder's current one.
func (j *JobDir) Holds(me *Holder) bool {
	h, ok, err := j.ReadClaim()
	return err == nil && ok && h.Token == me.Token
}

// ReleaseClaim removes my claim (and only mine) and my beat file.
func (j *JobDir) ReleaseClaim(me *Holder) {
	if j.Same() != nil {
		return // the claim there is a copy in another's folder: not the program's to remove
	}
	if j.Holds(me) {
		os.Remove(j.Claim())
	}
	os.Remove(j.beatFile(me.Token))
}

// Heartbeat beats every interval until the returned stop is called; lost is called once if the
// claim is found in another run's hands, or when beating has failed for StaleAfter/2 (a newcomer
// may soon take the claim for a dead holder's). The caller then checks Holds before each step
// that changes the folder's shared state (join, commit, removal).
func (j *JobDir) Heartbeat(me *Holder, interval time.Duration, lost func(error)) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				err := j.Beat(me)
				switch {
				case err == nil:
					last = time.Now()
				case errors.Is(err, ErrClaimLost):
					lost(err)
					return
				case time.Since(last) > StaleAfter/2:
					lost(fmt.Errorf("%w: no heartbeat written to %s for %s (%v)", ErrClaimLost, j.Claim(), time.Since(last).Round(time.Second), err))
					return
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

// procStart is the start time of process pid (field 22 of /proc/PID/stat), "" when there is no
// such process.
func procStart(pid int) string {
	if pid <= 0 {
		return ""
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		if errors.Is(err, syscall.ESRCH) || errors.Is(err, os.ErrNotExist) {
			return ""
		}
		return "?"
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 || f[0] == "Z" {
		return "" // a zombie has finished
	}
	return f[19]
}
