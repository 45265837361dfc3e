package driver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/spec"
)

// Run's close, whatever phase it ends in: before the encode rank 0 has no join Coordinator,
// and before the claim no checkpointer, and close runs on all the same; once the job folder is
// claimed, an attempt that ends before its own end phase (a collective's failure in the
// agreement) gives the claim back.
func TestCloseWhateverThePhase(t *testing.T) {
	newRank0 := func() *attempt {
		var log bytes.Buffer
		a := newAttempt(context.Background(), collective.Single(), job.Default(), Options{Log: logging.New(&log, logging.Info)})
		close(a.castDone)
		return a
	}
	a := newRank0()
	if a.coord == nil || a.coord.pj != nil || a.coord.ck != nil || a.models != nil {
		t.Fatalf("a fresh rank 0: coordinator %+v, models %v", a.coord, a.models)
	}
	a.close() // nothing to stop, give back or close: no panic

	a = newRank0()
	dir := t.TempDir()
	a.plan.JobDir, a.plan.Spec = filepath.Join(dir, "job"), &spec.Spec{}
	ck, created, err := claim(a.cfg, &a.plan, 1, a.log)
	if err != nil || !created {
		t.Fatalf("claim: %v (created %v)", err, created)
	}
	a.coord.ck = ck
	if !ck.jd.Holds(&ck.me) {
		t.Fatal("the claim is not held after claim")
	}
	a.close()
	if ck.jd.Holds(&ck.me) {
		t.Error("the claim is still held after close")
	}
	if _, err := os.Lstat(ck.jd.Claim()); !os.IsNotExist(err) {
		t.Errorf("CLAIM left after close: %v", err)
	}
	if ck.stopBeat != nil {
		t.Error("the heartbeat still runs after close")
	}
}
