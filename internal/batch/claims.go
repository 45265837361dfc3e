package batch

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
	"github.com/facefusion-hpc/facefusion/internal/slurm"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// Claims are how the tasks of a job array share its frozen list: each task pulls the next entry
// no task has finished or holds, so none idles while entries are pending and none takes one
// another finished. Their folder, claims/array-ID/, holds per entry N (its place in the list):
//
//	N/CLAIM, N/.CLAIM.beat-*  the task running it: the job folder's claim (lustre), with its
//	                          heartbeat; a dead task's claim is taken over as a job folder's is
//	N/settled.json            the task that finished with it and how: no task of the array takes it again
//	launch-JOB.STEP.R.json    the word of the first rank of one launch on whether it starts (Idle)
type Claims struct {
	path string
	log  *logging.Logger
}

// Claims is the claims folder of the frozen list id, made (or checked) now.
func (d Dir) Claims(id string, log *logging.Logger) (*Claims, error) {
	c := &Claims{path: filepath.Join(d.Path, "claims", id), log: log}
	for _, p := range []string{filepath.Dir(c.path), c.path} {
		if err := d.makeSub(p); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Settled is an entry finished by a task of the array.
type Settled struct {
	State    string    `json:"state"`
	Task     string    `json:"array_task,omitempty"`
	SlurmJob string    `json:"slurm_job,omitempty"`
	Host     string    `json:"host"`
	Time     time.Time `json:"time"`
}

func (c *Claims) entry(n int) string   { return filepath.Join(c.path, strconv.Itoa(n)) }
func (c *Claims) settled(n int) string { return filepath.Join(c.entry(n), "settled.json") }

// Settled reports whether entry n is finished for the array, and how.
func (c *Claims) Settled(n int) (Settled, bool) {
	var s Settled
	data, err := safefs.ReadOwnFile(c.settled(n), safefs.RecordLimit, "settled record")
	return s, err == nil && json.Unmarshal(data, &s) == nil
}

// Claim is an entry a task holds while it runs it.
type Claim struct {
	c    *Claims
	n    int
	jd   *lustre.JobDir
	me   lustre.Holder
	stop func()
	// Prev is the dead task whose claim this one took over, and Why how it is known dead.
	Prev *lustre.Holder
	Why  string
}

// Take claims entry n for this task. ok is false when the entry is settled or held by a live
// task (left to it); a dead task's claim is taken over. The claim beats until Settle or Release.
func (c *Claims) Take(n int) (cl *Claim, ok bool, err error) {
	if _, done := c.Settled(n); done {
		return nil, false, nil
	}
	if err := os.Mkdir(c.entry(n), safefs.FolderMode()); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, false, err
	}
	cl = &Claim{c: c, n: n, jd: &lustre.JobDir{Path: c.entry(n)}, me: lustre.Me()}
	cl.Prev, cl.Why, err = cl.jd.TakeClaim(cl.me)
	var busy *lustre.BusyError
	if errors.As(err, &busy) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	// Settled by its last holder between the first look and the claim: not to be taken again.
	if _, done := c.Settled(n); done {
		cl.jd.ReleaseClaim(&cl.me)
		return nil, false, nil
	}
	cl.stop = cl.jd.Heartbeat(&cl.me, lustre.HeartbeatInterval, func(err error) {
		c.log.Warnf("batch: the claim on entry %d of the array's list was lost (%v): its job folder's claim still keeps a second run out", n, err)
	})
	return cl, true, nil
}

// Settle records the entry finished in state (no task of the array takes it again) and
// releases the claim.
func (cl *Claim) Settle(state string) error {
	host, _ := os.Hostname()
	env := slurm.FromEnv()
	data, _ := json.MarshalIndent(Settled{State: state, Task: env.ArrayTaskID, SlurmJob: env.JobID, Host: host, Time: time.Now().UTC()}, "", "  ")
	err := lustre.WriteNew(cl.c.settled(cl.n), append(data, '\n'))
	if errors.Is(err, os.ErrExist) { // a task that took over a claim it thought dead settled it too
		err = nil
	}
	cl.Release()
	return err
}

// Release gives the entry back unsettled (a stop, a fault every target would hit): another
// task, or this one's restart, takes it.
func (cl *Claim) Release() {
	if cl.stop != nil {
		cl.stop()
		cl.stop = nil
	}
	cl.jd.ReleaseClaim(&cl.me)
}

// held reports whether entry n is claimed by a task that is alive, as far as can be told.
func (c *Claims) held(n int, me *lustre.Holder) bool {
	jd := &lustre.JobDir{Path: c.entry(n)}
	h, ok, err := jd.ReadClaim()
	if err != nil || !ok {
		return false
	}
	dead, _ := h.Dead(me, time.Now())
	return !dead
}

// Pending counts the entries of a list of n that no task has settled: free (no live task
// holds them) and held.
func (c *Claims) Pending(n int) (free, held int) {
	me := lustre.Me()
	for i := 0; i < n; i++ {
		if _, done := c.Settled(i); done {
			continue
		}
		if c.held(i, &me) {
			held++
		} else {
			free++
		}
	}
	return free, held
}

// Idle reports, before any rank starts, whether this task of a job array has nothing to do:
// its array's list is frozen and every entry is settled or held by another live task. why is
// the line to log. Outside an array, before the list is frozen, or when the folder cannot be
// read, it is false: the batch's own run decides (and reports any error).
//
// Every rank of a launch asks, each in its own process before MPI starts, and all must agree:
// one rank exiting while another waits for it in MPI's start would hang the launch. So a launch
// of several ranks takes the word of its first rank to ask, written under the launch's name
// (Slurm job, step and restart); where the launch cannot be named, no rank exits early.
func Idle(cfg job.Config) (idle bool, why string) {
	env := slurm.FromEnv()
	id := listID(env)
	if id == "" {
		return false, ""
	}
	d := DirFor(cfg)
	if safefs.CheckFolder(d.Path, "batch folder", batchFix) != nil {
		return false, ""
	}
	list := d.list(id)
	entries, err := readFrozen(list, cfg, id)
	if err != nil {
		return false, ""
	}
	c := &Claims{path: filepath.Join(d.Path, "claims", id)}
	free, held := c.Pending(len(entries))
	idle = free == 0
	if collective.Launched() {
		step := os.Getenv("SLURM_STEP_ID")
		if env.JobID == "" || step == "" {
			return false, ""
		}
		if idle, err = c.agree(fmt.Sprintf("launch-%s.%s.%s.json", env.JobID, step, orZero(env.RestartCount)), idle); err != nil {
			return false, ""
		}
	}
	if !idle {
		return false, ""
	}
	return true, fmt.Sprintf("batch: array task %s: nothing to do: the %d entries of %s are finished (%d) or running in other tasks (%d); exiting before starting the ranks",
		env.ArrayTaskID, len(entries), list, len(entries)-held, held)
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

// agree records mine as the launch's word under name, unless a rank of the launch recorded
// one first: then that one is the launch's.
func (c *Claims) agree(name string, mine bool) (bool, error) {
	if err := os.MkdirAll(c.path, safefs.FolderMode()); err != nil {
		return false, err
	}
	p := filepath.Join(c.path, name)
	word := map[bool]string{true: "idle\n", false: "run\n"}[mine]
	err := lustre.WriteNew(p, []byte(word))
	if err == nil {
		return mine, nil
	}
	if !errors.Is(err, os.ErrExist) {
		return false, err
	}
	data, err := safefs.ReadOwnFile(p, safefs.SmallLimit, "launch record")
	if err != nil {
		return false, err
	}
	return string(data) == "idle\n", nil
}
