package main

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
)

// The end-to-end tests of the built binary are split over this package and the packages under
// e2e/ (batchrun: batch-run; dist: runs under mpirun and Slurm; resume: checkpoint and resume),
// so that go test runs them side by side (two packages at a time on 2 cores); they share
// internal/clitest.

func TestMain(m *testing.M) { clitest.Main(m) }
