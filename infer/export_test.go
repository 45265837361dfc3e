package infer

import "sync"

// ResetPinNote lets the external tests see the once-per-process "buffers not pinned" line again.
func ResetPinNote() { pinNote = sync.Once{} }

// SpendPinNote keeps the pinning line out of a test's log.
func SpendPinNote() { pinNote.Do(func() {}) }
