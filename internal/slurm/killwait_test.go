package slurm

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/slurmtest"
)

// KillWait as `scontrol show config` prints it (the fixture is Slurm 22.05's, from the test
// cluster, whose slurm.conf says KillWait=5), and what would be a misreading.
func TestParseKillWait(t *testing.T) {
	out, err := os.ReadFile("testdata/scontrol-show-config.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ParseKillWait(out); err != nil || got != 5*time.Second {
		t.Errorf("captured config: %v, %v; want 5s", got, err)
	}
	for in, want := range map[string]time.Duration{
		"KillWait                = 30 sec\n":  30 * time.Second,
		"KillOnBadExit = 0\nKillWait = 0 sec": 0,
		"KillWait=120":                        120 * time.Second,
	} {
		if got, err := ParseKillWait([]byte(in)); err != nil || got != want {
			t.Errorf("ParseKillWait(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "KillOnBadExit = 0\n", "KillWait = 30 min\n", "KillWait = -1 sec", "KillWait = \n"} {
		if got, err := ParseKillWait([]byte(in)); err == nil {
			t.Errorf("ParseKillWait(%q) = %v, want an error", in, got)
		}
	}
}

// The real call, against the test cluster.
func TestKillWaitFromSlurm(t *testing.T) {
	c := slurmtest.Start(t, slurmtest.Options{})
	t.Setenv("SLURM_CONF", c.Conf())
	got, err := KillWait(context.Background())
	if err != nil || got != 5*time.Second {
		t.Fatalf("KillWait: %v, %v; want 5s (the test cluster's slurm.conf)\n%s", got, err, c.Logs())
	}
}
