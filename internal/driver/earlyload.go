package driver

import (
	"time"

	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
)

// earlyLoad is rank 0's model load running beside its plan's checks (planSetup): the models'
// checks and, for a video, the engines its workers run (loadModels), which rank 0 opened only
// once the plan was made before. The zero value is a load not started.
type earlyLoad struct {
	done   chan struct{} // closed once the load returned; nil: not started
	m      *pipeline.Models
	err    error
	took   time.Duration // the load's own time, from its start (after the files' read)
	handed bool          // wait gave m to the plan: it is the plan's to close
}

// startLoad loads cfg's models in the background once read is closed (rank 0's read of the
// files it broadcasts, so that the load takes its bytes; nil: at once).
func startLoad(cfg job.Config, read <-chan struct{}) *earlyLoad {
	l := &earlyLoad{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		if read != nil {
			<-read
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
	<-l.done
	l.handed = true
	return l.m, l.err
}

// discard is a refused plan's end of a load it did not take: it waits for the load and closes
// what it opened, so that a refused target keeps no session (batch-run goes on to the next).
func (l *earlyLoad) discard() {
	if !l.started() || l.handed {
		return
	}
	<-l.done
	l.handed = true
	if l.m != nil {
		l.m.Close()
	}
}

// planHooks let the tests see the plan's order: checked is called once rank 0's checks before
// its load's result (the probe, the codecs, the output format) are done, loaded once its load
// returned. Both nil outside the tests.
var planHooks struct{ checked, loaded func() }
