package driver

import (
	"context"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/job"
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
// files it broadcasts, so that the load takes its bytes; nil: at once).
func startLoad(cfg job.Config, read <-chan struct{}) *earlyLoad {
	l := &earlyLoad{done: make(chan struct{})}
	if planHooks.started != nil {
		planHooks.started()
	}
	go func() {
		defer close(l.done)
		if read != nil {
			began := time.Now()
			<-read
			l.readWait = time.Since(began)
		}
		start := time.Now()
		l.m, l.err = loadModels(cfg) // a video's engines too, as the other ranks open theirs
		l.took = time.Since(start)
		if planHooks.loaded != nil {
			planHooks.loaded()
		}
	}()
	return l
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

// discard is a refused plan's end of a load it did not take: it waits for the load and closes
// what it opened, so that a refused target keeps no session (batch-run goes on to the next). A
// stop (ctx done) does not wait: the load closes what it opened once it returns, and the rank
// writes its report and exits meanwhile (a GPU's sessions may take longer to open than Slurm
// waits between TERM and KILL).
func (l *earlyLoad) discard(ctx context.Context) {
	if !l.started() || l.handed {
		return
	}
	l.handed = true
	if ctx.Err() != nil {
		go l.closeWhenDone()
		return
	}
	l.closeWhenDone()
}

func (l *earlyLoad) closeWhenDone() {
	<-l.done
	if l.m != nil {
		l.m.Close()
	}
}

// planHooks let the tests see the plan's order: started is called when rank 0's load is
// started, probed once the target is probed (one of the checks the load runs beside), loaded
// once the load returned. All nil outside the tests.
var planHooks struct{ started, probed, loaded func() }
