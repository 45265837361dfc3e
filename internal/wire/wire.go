// Package wire is the one home of the ranks' message tags: every point-to-point message an
// attempt sends carries one of these, so that two protocols never read each other's messages.
// Collectives (the plan's broadcast, the model cast, the control rounds, the results' gather,
// the outcome's broadcast) need no tag: every rank calls them in the same order.
package wire

// The point-to-point tags.
const (
	// ShareTag: a shared chunk's frames and its end, from a rank holding some of its frames to
	// the chunk's owner.
	ShareTag = 1
	// HashTag: the parallel join's hash chain, from each rank to the next.
	HashTag = 2
	// VoiceTag: lip_syncer's voice features of a rank's frames, from rank 0 after the plan.
	VoiceTag = 3
)
