// Package progress reports frames done: library code counts through a Counter; main chooses how
// it is shown (a bar on a terminal, plain periodic lines in a batch log, nothing).
package progress

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Counter is what the pipeline sees: it adds frames as they are written.
type Counter interface {
	Add(frames int)
}

// Nop discards counts.
type Nop struct{}

func (Nop) Add(int) {}

// Bar draws a progress bar of frames on a terminal.
type Bar struct{ bar *progressbar.ProgressBar }

// NewBar makes a bar of total frames written to w (a terminal).
func NewBar(w io.Writer, total int, what string) *Bar {
	return &Bar{bar: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("frames"),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetPredictTime(true),
	)}
}

func (b *Bar) Add(n int) { _ = b.bar.Add(n) }

// Close finishes the bar.
func (b *Bar) Close() { _ = b.bar.Finish() }

// Lines writes "frames done/total, fps, ETA" every interval: for batch logs, where a bar
// would be a stream of carriage returns.
type Lines struct {
	w        io.Writer
	total    int
	what     string
	done     atomic.Int64
	start    time.Time
	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

// NewLines starts reporting to w every interval until Close.
func NewLines(w io.Writer, total int, what string, interval time.Duration) *Lines {
	l := &Lines{w: w, total: total, what: what, start: time.Now(), stop: make(chan struct{})}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				l.report()
			case <-l.stop:
				return
			}
		}
	}()
	return l
}

func (l *Lines) Add(n int) { l.done.Add(int64(n)) }

func (l *Lines) report() {
	done := l.done.Load()
	el := time.Since(l.start).Seconds()
	fps := float64(done) / el
	eta := "?"
	if fps > 0 {
		eta = (time.Duration(float64(int64(l.total)-done)/fps) * time.Second).Round(time.Second).String()
	}
	fmt.Fprintf(l.w, "%s: %d/%d frames, %.1f fps, ETA %s\n", l.what, done, l.total, fps, eta)
}

// Close stops; a finished run gets a last line (a failed one ends with its error instead).
func (l *Lines) Close() {
	l.stopOnce.Do(func() {
		close(l.stop)
		l.wg.Wait()
		if l.done.Load() == int64(l.total) {
			l.report()
		}
	})
}
