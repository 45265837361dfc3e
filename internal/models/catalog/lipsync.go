package catalog

import "github.com/facefusion-hpc/facefusion/infer"

// The lip syncer's models (processors/modules/lip_syncer/core.py) and the voice extractor it
// reads its sound through (voice_extractor.py): their own block of the table.

// The roles of the lip syncer's models.
const (
	// VoiceExtractor separates the voice from the source track (kim_vocal_1/2, uvr_mdxnet):
	// it takes STFT blocks, not crops.
	VoiceExtractor Kind = "voice_extractor"
	LipSyncer      Kind = "lip_syncer"
)

// LipSyncType is a lip syncer's family: how FaceFusion feeds it (get_model_options' 'type').
type LipSyncType string

// The lip syncer families.
const (
	// Wav2Lip takes the mouth's box of the ffhq_512 crop at Size, BGR /255, as six planes: the
	// box with its lower half blacked out, then the box; the voice window is scaled by
	// 2 × lip_syncer_weight.
	Wav2Lip LipSyncType = "wav2lip"
	// EDTalk takes the whole crop at Size, RGB /255, and lip_syncer_weight as its 'weight'.
	EDTalk LipSyncType = "edtalk"
)

// SyncType is a lip syncer's family, "" for any other model.
func (m *Model) SyncType() LipSyncType {
	if m.Kind != LipSyncer {
		return ""
	}
	if m.Name == "edtalk_256" {
		return EDTalk
	}
	return Wav2Lip
}

// voiceFrames is the voice extractor's STFT frames per block, dimension 3 of its input: FaceFusion
// reads it from the file (get_inputs()[0].shape[3]) and makes its blocks (frames − 1) · 1024
// samples long.
const voiceFrames = 256

// addLipSyncers adds the lip syncers and the voice extractors.
func addLipSyncers(m map[string]*Model) {
	add := func(x *Model) { addTo(m, x) }

	// The voice extractors: 'input' [N, 4, 3072, frames], the real and imaginary parts of the
	// two channels' 3072 lowest bins of a 7680-point STFT; output 0 the same shape.
	for _, n := range []string{"kim_vocal_1", "kim_vocal_2", "uvr_mdxnet"} {
		block := []int64{dyn, 4, 3072, voiceFrames}
		add(&Model{Name: n, Kind: VoiceExtractor, Batched: true,
			Want: infer.Signature{
				Inputs:  []infer.TensorSpec{f32("input", block...)},
				Outputs: []infer.TensorSpec{f32("", block...)}},
			Size:        voiceFrames,
			Unconfirmed: "frames (input dimension 3) 256 for every extractor: FaceFusion reads it from the file, and so does this program"})
	}
	// The lip syncers: 'source' the voice window [N, 1, 80, 16] after FaceFusion's log scaling,
	// 'target' the face; output 0 the face at the same size in [0, 1].
	voice := f32("source", dyn, 1, 80, 16)
	for _, n := range []string{"wav2lip_96", "wav2lip_gan_96"} {
		add(&Model{Name: n, Kind: LipSyncer, Batched: true,
			Want: infer.Signature{
				Inputs:  []infer.TensorSpec{voice, f32("target", dyn, 6, 96, 96)},
				Outputs: []infer.TensorSpec{f32("", dyn, 3, 96, 96)}},
			Template: "ffhq_512", Size: 96, Norm: bgrUnit,
			Unconfirmed: "shapes inferred from FaceFusion's code: source [1,1,80,16], target [1,6,96,96], output [1,3,96,96]"})
	}
	add(&Model{Name: "edtalk_256", Kind: LipSyncer, Batched: true,
		Want: infer.Signature{
			// FaceFusion feeds numpy.array([weight]).astype(numpy.float32).
			Inputs:  []infer.TensorSpec{voice, f32("target", dyn, 3, 256, 256), f32("weight", 1)},
			Outputs: []infer.TensorSpec{f32("", dyn, 3, 256, 256)}},
		Template: "ffhq_512", Size: 256, Norm: rgbUnit,
		Unconfirmed: "shapes inferred from FaceFusion's code: source [1,1,80,16], target [1,3,256,256], weight [1], output [1,3,256,256] RGB"})
}
