package driver

import (
	"context"
	"sync"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
)

// earlyLoad is rank 0's model load running beside its plan's checks (planSetup): the models'
// checks and, for a video, the engines its workers run (loadModels), which rank 0 opened only
// once the plan was made before. The zero value is a load not started.
type earlyLoad struct {
	done     chan struct{} // closed once the load returned; nil: not started
	m        *pipeline.Models
	err      error
	took     time.Duration // the load's own time, from its start (after the files' read)
	readWait time.Duration // its wait for the files' read before it began
	waited   time.Duration // the plan's wait for it (wait)
	handed   bool          // wait or discard took m: it is theirs to close
}

// startLoad loads cfg's models in the background once read is closed (rank 0's read of the
// files it broadcasts, so that the load takes its bytes; nil: at once), and once the loads
// refused plans left behind have closed what they opened (one set of models at a time). A
// stop (ctx done) before the load begins, or between its models and its engines, ends it there.
func startLoad(ctx context.Context, cfg job.Config, read <-chan struct{}, log *logging.Logger) *earlyLoad {
	l := &earlyLoad{done: make(chan struct{})}
	if planHooks.started != nil {
		planHooks.started()
	}
	before := abandoned.pending() // not its own: it is left behind only after it starts
	go func() {
		defer close(l.done)
		if read != nil {
			began := time.Now()
			select {
			case <-read:
			case <-ctx.Done():
			}
			l.readWait = time.Since(began)
		}
		for _, closed := range before {
			<-closed
		}
		if l.err = ctx.Err(); l.err != nil {
			return // a stop: nothing to load
		}
		start := time.Now()
		l.m, l.err = loadModels(ctx, cfg, log) // a video's engines too, as the other ranks open theirs
		l.took = time.Since(start)
		if planHooks.loaded != nil {
			planHooks.loaded()
		}
	}()
	return l
}

// abandoned are the loads refused plans left running (discard): each closes what it opened
// once it returns, and then its channel.
var abandoned leftLoads

type leftLoads struct {
	sync.Mutex
	closes []chan struct{}
}

// pending are the closes not yet done.
func (a *leftLoads) pending() []chan struct{} {
	a.Lock()
	defer a.Unlock()
	left := a.closes[:0]
	for _, c := range a.closes {
		select {
		case <-c:
		default:
			left = append(left, c)
		}
	}
	a.closes = left
	return append([]chan struct{}(nil), left...)
}

func (a *leftLoads) add(c chan struct{}) {
	a.Lock()
	defer a.Unlock()
	a.closes = append(a.closes, c)
}

// wait returns once every load left behind so far has closed what it opened.
func (a *leftLoads) wait() {
	for _, c := range a.pending() {
		<-c
	}
}

func (l *earlyLoad) started() bool { return l.done != nil }

// wait is the load's result; the models are then the caller's.
func (l *earlyLoad) wait() (*pipeline.Models, error) {
	began := time.Now()
	<-l.done
	l.waited = time.Since(began)
	l.handed = true
	return l.m, l.err
}

// readDelay is how much the files' read delayed the plan: the plan waited for the load, which
// had waited for the read (the scaling model counts rank 0's read on its own).
func (l *earlyLoad) readDelay() time.Duration { return min(l.readWait, l.waited) }

// discard is a refused plan's end of a load it did not take. It does not wait: a refusal (a
// target ffprobe cannot read, a signal) is told at once, not after a load that may take seconds
// on a GPU (or longer than Slurm waits between TERM and KILL). The load closes what it opened
// once it returns, and the next load waits for that (startLoad): a batch-run keeps no sessions
// of a refused target.
func (l *earlyLoad) discard() {
	if !l.started() || l.handed {
		return
	}
	l.handed = true
	closed := make(chan struct{})
	abandoned.add(closed)
	go func() {
		defer close(closed)
		<-l.done
		if l.m != nil {
			l.m.Close()
		}
	}()
}

// planHooks let the tests see the plan's order: started is called when rank 0's load is
// started, probed once the target is probed (one of the checks the load runs beside), loaded
// once the load returned. All nil outside the tests.
var planHooks struct{ started, probed, loaded func() }
