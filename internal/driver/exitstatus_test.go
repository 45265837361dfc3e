package driver

import (
	"context"
	"errors"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/fault"
)

// ExitStatus is the one decision of a run's exit code, for main and the run report alike.
func TestExitStatus(t *testing.T) {
	live := context.Background()
	signalled := func(s Signal) context.Context {
		ctx, cancel := context.WithCancelCause(live)
		cancel(s)
		return ctx
	}
	for _, c := range []struct {
		name string
		ctx  context.Context
		err  error
		want int
	}{
		{"success", live, nil, fault.ExitOK},
		{"usage", live, fault.AsUsage(errors.New("bad flag")), fault.ExitUsage},
		{"input, printed by rank 0", live, &Reported{Err: fault.AsInput(errors.New("no face"))}, fault.ExitInput},
		{"another rank's environment failure", live, &RemoteError{Kind: fault.Environment}, fault.ExitEnvironment},
		{"busy", live, fault.AsBusy(errors.New("in use")), fault.ExitBusy},
		{"unclassified", live, errors.New("ffmpeg died"), fault.ExitInternal},
		{"stop, requeue", live, &Stopped{Next: Requeue}, fault.ExitCheckpointed},
		{"stop, no requeue", live, &Stopped{Next: NoRequeue}, fault.ExitNoRequeue},
		{"stop, cancelled", live, &Stopped{Next: Cancelled}, fault.ExitCancelled},
		{"failure after SIGUSR1", signalled("SIGUSR1"), errors.New("broken pipe"), fault.ExitNoRequeue},
		{"failure after SIGTERM", signalled("SIGTERM"), fault.AsInput(errors.New("decode")), fault.ExitCancelled},
		{"printed failure after a signal", signalled("SIGTERM"), &Reported{Err: fault.AsUsage(errors.New("x"))}, fault.ExitUsage},
	} {
		if got := ExitStatus(c.ctx, c.err); got != c.want {
			t.Errorf("%s: exit %d, want %d", c.name, got, c.want)
		}
	}
}
