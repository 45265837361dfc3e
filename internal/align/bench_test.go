package align

import (
	"fmt"
	"image"
	"math/rand"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

func BenchmarkWarpCrop(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	frame := randomImage(rng, 1920, 1080)
	for _, size := range []int{128, 256, 512} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			crop := raster.New(size, size)
			m := randomSimilarity(rng, 1920, 1080, size)
			for b.Loop() {
				WarpCrop(crop, frame, m)
			}
		})
	}
}

func BenchmarkPasteBack(b *testing.B) {
	rng := rand.New(rand.NewSource(2))
	frame := randomImage(rng, 1920, 1080)
	for _, size := range []int{128, 512} {
		crop := randomImage(rng, size, size)
		var cropF raster.FloatImage
		cropF.Reset(image.Rect(0, 0, size, size))
		var ws MaskWorkspace
		mask := make([]float32, size*size)
		BoxMask(mask, size, size, 0.3, [4]int{}, &ws)
		// A 300-pixel face in the middle of the frame.
		var five = FFHQ512.Scaled(300)
		for i := range five {
			five[i].X += 800
			five[i].Y += 400
		}
		m := Estimate(five, FFHQ512, size)
		b.Run(fmt.Sprintf("uint8/%d", size), func(b *testing.B) {
			for b.Loop() {
				PasteBack(frame, crop, mask, m)
			}
		})
		b.Run(fmt.Sprintf("float/%d", size), func(b *testing.B) {
			for b.Loop() {
				PasteBackFloat(frame, &cropF, mask, m)
			}
		})
	}
}

func BenchmarkPack(b *testing.B) {
	rng := rand.New(rand.NewSource(3))
	crop := randomImage(rng, 512, 512)
	f := make([]float32, 3*512*512)
	h := make([]uint16, 3*512*512)
	b.Run("float32/512", func(b *testing.B) {
		for b.Loop() {
			Half.Pack(f, crop, NCHW)
		}
	})
	b.Run("float16/512", func(b *testing.B) {
		for b.Loop() {
			Half.PackHalf(h, crop, NCHW)
		}
	})
	b.Run("unpack/512", func(b *testing.B) {
		for b.Loop() {
			Half.UnpackImage(crop, f, NCHW)
		}
	})
}

func BenchmarkMasks(b *testing.B) {
	var ws MaskWorkspace
	mask := make([]float32, 512*512)
	raw := make([]float32, 256*256)
	scores := make([]float32, 19*512*512)
	b.Run("box/512", func(b *testing.B) {
		for b.Loop() {
			BoxMask(mask, 512, 512, 0.3, [4]int{}, &ws)
		}
	})
	b.Run("occlusion/256→512", func(b *testing.B) {
		for b.Loop() {
			OcclusionMask(mask, 512, 512, raw, 256, 256, &ws)
		}
	})
	b.Run("region/512", func(b *testing.B) {
		for b.Loop() {
			RegionMask(mask, 512, 512, ClassScores{scores, 19, 512, 512}, DefaultRegions, &ws)
		}
	})
}

func BenchmarkEnhancerBlend(b *testing.B) {
	rng := rand.New(rand.NewSource(4))
	frame, enh := randomImage(rng, 1920, 1080), randomImage(rng, 1920, 1080)
	r := image.Rect(700, 300, 1100, 700)
	for b.Loop() {
		EnhancerBlend(frame, enh, r, 80)
	}
}
