package join

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// keptError is the one line of a join into out that failed with err while the job folder
// jobDir keeps its segs finished segments: a full file system or quota names the room the
// output needs (about need bytes) and where, as the environment's failure (fault.RoomFix);
// an error already classified says what to do and is returned as it is; anything else, that
// the same command joins again.
// free is the room left on the output's file system once the failed join's file went (-1:
// unknown): an output found cut short where there is less room than it needs is the disk's
// doing, whatever ffmpeg said.
func keptError(err error, out string, need, free int64, segs int, jobDir string) error {
	why := fault.RoomWhy(err)
	var ie *video.IncompleteError
	if why == "" && errors.As(err, &ie) && free >= 0 && free < need {
		why = fmt.Sprintf("the output came out cut short (%s), with %s free there", ie.Detail, humanBytes(free))
	}
	if why != "" {
		return fault.AsEnvironment(fmt.Errorf("joining into %s failed: %s (the output needs about %s): %s; the %d finished segments are kept in %s",
			out, why, humanBytes(need), fault.RoomFix(filepath.Dir(out)), segs, jobDir))
	}
	if fault.KindOf(err) != fault.Internal {
		return err // already says what to do (another ffmpeg on some nodes: --fresh)
	}
	return fault.AsInternal(fmt.Errorf("joining into %s failed: %v; the %d finished segments are kept in %s: rerun the same command to join them again", out, err, segs, jobDir))
}

// needs is about how many bytes the output takes: its segments (done) and the target's streams
// it carries, from the parallel join's side file when there is one, else from their bit rates,
// else a tenth of the video's (a guess: the line says "about"), with a little for the
// container's index.
func (c *Coordinator) needs(ctx context.Context, done []lustre.Chunk) int64 {
	var n int64
	for _, ch := range done {
		n += ch.Size
	}
	frames := n
	carried := int64(-1)
	if c.side != nil && c.side.path != "" {
		if st, err := os.Stat(c.side.path); err == nil {
			carried = st.Size()
		}
	}
	m := c.out.Mux
	if carried < 0 && len(m.Keep) > 0 {
		secs := (m.Span.End - m.Span.Start).Seconds()
		if secs <= 0 {
			secs = c.out.Duration.Seconds()
		}
		if b, ok := video.CarriedBytes(ctx, m.Target, m.Keep, secs); ok {
			carried = b
		} else {
			carried = frames / 10
		}
	}
	return n + max(carried, 0) + frames/100 + 16<<10
}

// humanBytes is n for a person: "12.3 MB".
func humanBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	v, suffix := float64(n), []string{"kB", "MB", "GB", "TB", "PB"}
	i := -1
	for v >= unit && i < len(suffix)-1 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %s", v, suffix[i])
}
