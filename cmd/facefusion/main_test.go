package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
)

// The end-to-end tests of the built binary are split over this package and the packages under
// e2e/ (batchrun: batch-run; dist: runs under mpirun and Slurm; resume: checkpoint and resume),
// so that go test runs them side by side (two packages at a time on 2 cores); they share
// internal/clitest.

func TestMain(m *testing.M) {
	// A fuzzing worker (go test -fuzz) runs only the fuzz target, in this process: building the
	// binary in each worker would stall the fuzzing.
	if slices.ContainsFunc(os.Args, func(a string) bool { return strings.HasPrefix(a, "-test.fuzzworker") }) {
		os.Exit(m.Run())
	}
	clitest.Main(m)
}
