package swap

import (
	"testing"
)

// A cover found beside a feature continues into it: a microphone's head at the mouth's corner,
// of skin's own hues and red, on the astronaut's face (unless grown, the part over the lips
// and the unfound rest of its head are swapped over) and a brown one on Grace Hopper's; a bar
// over her cheeks crossing her nostrils (unless grown, the part over the nose is swapped).
// Each case must keep its cover (the floors below), and the rest of the face stays swapped.
func TestApplyGrowsCoversIntoFeatures(t *testing.T) {
	checkCovers(t, photoWays(t), []coverCase{
		{false, "microphone/flat/brown", 0.85, 0.85},
		{false, "bar over the cheeks/noisy/blue", 0.85, 0.85}, {false, "bar over the cheeks/striped/red", 0.85, 0.85},
		{true, "microphone/flat/skin", 0.85, 0.85}, {true, "microphone/flat/tan", 0.85, 0.85},
		{true, "microphone/shaded/tan", 0.85, 0.85}, {true, "microphone/flat/red", 0.85, 0.85},
	})
}
