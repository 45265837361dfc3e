package main

import (
	"path/filepath"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// The face swapper's source and weight reach the model through a whole run (stand-in models,
// the embedded detector and landmarks): a swapper that takes the source face as a crop sees a
// mirrored source, and --face-swapper-weight mixes the target's identity in at 0 but not at
// its default 0.5.
func TestSwapperSourceAndWeight(t *testing.T) {
	dir := clitest.FixtureModels(t)
	work := t.TempDir()
	source := testenv.Sample(t, "grace_hopper.png")
	img, err := raster.Load(source)
	if err != nil {
		t.Fatal(err)
	}
	mirrored := raster.New(img.W, img.H)
	for y := range img.H {
		for x := range img.W {
			r, g, b := img.At(img.W-1-x, y)
			mirrored.Set(x, y, r, g, b)
		}
	}
	mirror := filepath.Join(work, "mirrored.png")
	if err := mirrored.SavePNG(mirror); err != nil {
		t.Fatal(err)
	}
	target := testenv.Sample(t, "astronaut.png")
	swap := func(name, src string, args ...string) *raster.Image {
		t.Helper()
		out := filepath.Join(work, name+".png")
		r := clitest.Run(t, append([]string{"run", "-s", src, "-t", target, "-o", out, "--models-dir", dir}, args...)...)
		if r.Code != 0 {
			t.Fatalf("%s: exit %d: %s", name, r.Code, r.Stderr)
		}
		got, err := raster.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	in, _ := raster.Load(target)
	uni := swap("uniface", source, "--face-swapper-model", "uniface_256")
	if changed(in, uni, 0, 0, in.W, in.H) < 500 {
		t.Error("uniface_256 changed next to nothing")
	}
	if n := changed(uni, swap("uniface-mirrored", mirror, "--face-swapper-model", "uniface_256"), 0, 0, in.W, in.H); n < 100 {
		t.Errorf("uniface_256 with the source mirrored changed %d pixels: the source crop is not the model's input", n)
	}
	def := swap("hyperswap", source, "--face-swapper-model", "hyperswap_1a_256")
	if n := changed(def, swap("hyperswap-05", source, "--face-swapper-model", "hyperswap_1a_256", "--face-swapper-weight", "0.5"), 0, 0, in.W, in.H); n != 0 {
		t.Errorf("--face-swapper-weight 0.5 differs from the default in %d pixels", n)
	}
	if n := changed(def, swap("hyperswap-0", source, "--face-swapper-model", "hyperswap_1a_256", "--face-swapper-weight", "0"), 0, 0, in.W, in.H); n < 100 {
		t.Errorf("--face-swapper-weight 0 changed %d pixels against 0.5: the target identity is not mixed in", n)
	}
}
