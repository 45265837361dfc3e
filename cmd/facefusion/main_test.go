package main

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
)

// The end-to-end tests of the built binary are split over this package and the packages under
// e2e/ (batch-run, distributed runs, checkpoint and resume, Slurm), so that go test runs them
// side by side; they share internal/clitest.

func TestMain(m *testing.M) { clitest.Main(m) }
