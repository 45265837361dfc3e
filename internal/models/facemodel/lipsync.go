package facemodel

import (
	"math"

	"github.com/facefusion-hpc/facefusion/internal/audio"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// The lip syncer's tensors (processors/modules/lip_syncer/core.py), in FaceFusion's arithmetic.

// voiceFloor is numpy.exp(-5 * numpy.log(10)) in float64: 1e-5 as FaceFusion computes it.
var voiceFloor = math.Exp(-5 * math.Log(10))

// VoiceInput writes prepare_audio_frame of window w (nil: FaceFusion's empty frame, zeros)
// into dst (80 × 16, the 'source' input): each value floored at 1e-5, log10 × 1.6 + 3.2,
// clipped to [−4, 4] and cast to float32; wav2lip's is then × weight × 2 in float32.
func VoiceInput(dst []float32, w *audio.Window, typ catalog.LipSyncType, weight float64) {
	for f := 0; f < audio.MelFilters; f++ {
		for t := 0; t < audio.WindowLength; t++ {
			v := 0.0
			if w != nil {
				v = w[f][t]
			}
			// math.Max would pass a NaN through as numpy.maximum does; the features are finite.
			y := float64(math.Log10(math.Max(voiceFloor, v))*1.6) + 3.2 // no fused multiply-add: numpy rounds twice
			x := float32(min(max(y, -4), 4))
			if typ == catalog.Wav2Lip {
				x = x * float32(weight) * 2
			}
			dst[f*audio.WindowLength+t] = x
		}
	}
}

// Wav2LipTarget writes wav2lip's 'target' for the mouth's box (size × size, RGB here) into dst
// (6 × size × size): FaceFusion's BGR box as float32 / 255, first with its rows from size/2
// down blacked out, then whole.
func Wav2LipTarget(dst []float32, box *raster.Image) {
	n := box.W * box.H
	for y := 0; y < box.H; y++ {
		row := box.Pix[y*box.Stride:]
		for x := 0; x < box.W; x++ {
			for c := 0; c < 3; c++ {
				v := float32(row[3*x+2-c]) / 255 // BGR planes; float32 division, as FaceFusion's
				dst[(3+c)*n+y*box.W+x] = v
				if y >= box.H/2 {
					v = 0
				}
				dst[c*n+y*box.W+x] = v
			}
		}
	}
}

// EDTalkTarget writes edtalk's 'target' for the crop at the model's size (RGB) into dst
// (3 × size × size): FaceFusion's BGR crop reversed to RGB, / 255 (in float64, then float32:
// the same value as float32 division).
func EDTalkTarget(dst []float32, img *raster.Image) {
	n := img.W * img.H
	for y := 0; y < img.H; y++ {
		row := img.Pix[y*img.Stride:]
		for x := 0; x < img.W; x++ {
			for c := 0; c < 3; c++ {
				dst[c*n+y*img.W+x] = float32(float64(row[3*x+c]) / 255)
			}
		}
	}
}

// LipSyncOutput is normalize_crop_frame of the model's output src (3 × size × size) into dst:
// clipped to [0, 1], × 255 in float32 and truncated (astype(uint8)); wav2lip's planes are
// BGR (FaceFusion's frame), edtalk's RGB.
func LipSyncOutput(dst *raster.Image, src []float32, typ catalog.LipSyncType) {
	n := dst.W * dst.H
	for y := 0; y < dst.H; y++ {
		row := dst.Pix[y*dst.Stride:]
		for x := 0; x < dst.W; x++ {
			for c := 0; c < 3; c++ {
				plane := c
				if typ == catalog.Wav2Lip {
					plane = 2 - c
				}
				v := min(max(src[plane*n+y*dst.W+x], 0), 1) * 255
				row[3*x+c] = uint8(v)
			}
		}
	}
}
